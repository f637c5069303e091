#ifndef CKIOSKJPEG_H
#define CKIOSKJPEG_H
#include <stddef.h>
#include <stdint.h>

// libjpeg reports errors through error_exit, which must not return: the only way out is longjmp back to the
// caller's setjmp. Swift cannot call setjmp (it returns twice), so every libjpeg call that can fail sits here,
// behind functions that return a status and a message instead.

/// Decodes the JPEG file open on `fd` (read from its current offset; the function takes the descriptor and closes
/// it, also on failure) into rows of native-endian 0xFFRRGGBB words (Cairo's RGB24/ARGB32 layout),
/// `*width * 4` bytes each, in a buffer the caller frees with `kiosk_jpeg_free`. Grayscale, YCbCr/RGB and CMYK/YCCK
/// (Adobe-inverted or plain) images are converted. When `min_width`/`min_height` are positive, libjpeg's DCT
/// scaling decodes at 1/2, 1/4 or 1/8 size as long as the result is still at least `min_width` wide and (or, when
/// `either` is non-zero, or) `min_height` tall.
/// On failure returns NULL and writes a message into `error` (always NUL-terminated).
uint32_t *kiosk_jpeg_decode_fd(int fd, int min_width, int min_height, int either, int *width, int *height,
                               char *error, size_t error_size);

void kiosk_jpeg_free(uint32_t *pixels);

/// Writes `pixels` (rows of `width * components` bytes: 1 = grayscale, 3 = RGB, 4 = CMYK, stored inverted as
/// Adobe applications do) to a baseline JPEG at `path`. Returns 0, or -1 with a message in `error`.
int kiosk_jpeg_encode_file(const char *path, const uint8_t *pixels, int width, int height, int components,
                           int quality, char *error, size_t error_size);

/// The same as `kiosk_jpeg_encode_file`, into memory: on success `*out` holds `*out_size` bytes of JPEG, which the
/// caller frees with `kiosk_jpeg_free_bytes`; returns 0, or -1 with a message in `error` (and `*out` NULL).
int kiosk_jpeg_encode_memory(const uint8_t *pixels, int width, int height, int components, int quality,
                             unsigned char **out, unsigned long *out_size, char *error, size_t error_size);

void kiosk_jpeg_free_bytes(unsigned char *bytes);

#endif
