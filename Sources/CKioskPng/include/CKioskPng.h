#ifndef CKIOSKPNG_H
#define CKIOSKPNG_H
#include <stddef.h>
#include <stdint.h>

// libpng reports errors by longjmp from its error callback, which Swift cannot catch: every libpng call that can
// fail sits here, behind a function that returns NULL and a message instead.

/// Decodes the rectangle `src_x`, `src_y`, `src_width` x `src_height` of the PNG file open on `fd` (read from its
/// current offset; the function takes the descriptor and closes it, also on failure), reduced while
/// decoding by the whole factors `factor_x` and `factor_y`: rows are read one at a time and each output pixel is the
/// average of a `factor_x` x `factor_y` block of source pixels (fewer in the last column and row), so memory is
/// bounded by the output, not by the file. The output is ceil(src_width / factor_x) x ceil(src_height / factor_y),
/// written to `out_width` and `out_height`. Interlaced files keep a sum per output pixel instead of per output row.
/// Returns rows of native-endian premultiplied 0xAARRGGBB words (Cairo's ARGB32), `*out_width * 4` bytes each, in a
/// buffer the caller frees with `kiosk_png_free`; palette, grey, 16-bit and transparency are converted, and at a
/// factor of 1 the pixels are exactly those Cairo's own PNG reader produces.
/// Refuses, before decoding a row, an image with more than `max_pixels` pixels or one the rectangle does not fit.
/// On failure returns NULL and writes a message into `error` (always NUL-terminated).
uint32_t *kiosk_png_decode_fd(int fd, long long max_pixels, int src_x, int src_y, int src_width,
                              int src_height, int factor_x, int factor_y, int *out_width, int *out_height,
                              char *error, size_t error_size);

void kiosk_png_free(uint32_t *pixels);

#endif
