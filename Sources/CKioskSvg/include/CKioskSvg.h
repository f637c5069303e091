#ifndef CKIOSKSVG_H
#define CKIOSKSVG_H
#include <stddef.h>

// librsvg, loaded with dlopen the first time a scene draws an SVG rather than linked: the library and what it
// brings (libxml2 and ICU's data, gdk-pixbuf, libstdc++) cost about 4 MB of resident memory, 1 MB of it private,
// in every process that links them, and most scenes have no SVG. Only the few calls kioskd makes are resolved.

/// A librsvg handle for one loaded document; owned by the caller, freed with `kiosk_svg_free`. Used on one thread.
typedef struct KioskSvg KioskSvg;

/// Loads librsvg once per process (thread-safe) and the SVG file open on `fd` (read from its current offset; the
/// function takes the descriptor and closes it, also on failure). `path` is the file's path: the base that
/// references to other files resolve against, and which librsvg confines them to (the file's folder and below).
/// On failure returns NULL and writes a message into `error` (always NUL-terminated): librsvg missing, a symbol
/// missing, or librsvg's own error.
KioskSvg *kiosk_svg_load_fd(int fd, const char *path, char *error, size_t error_size);

/// What `kiosk_svg_intrinsic_size` found.
enum {
    KIOSK_SVG_SIZE_NONE = 0,
    KIOSK_SVG_SIZE_PIXELS = 1,
    KIOSK_SVG_SIZE_VIEWBOX = 2,
};

/// The document's size: its width and height in pixels (at 96 dpi for physical units), answering
/// KIOSK_SVG_SIZE_PIXELS, else its viewBox's size in user units, answering KIOSK_SVG_SIZE_VIEWBOX. Answers
/// KIOSK_SVG_SIZE_NONE when it has neither (it then fills whatever it is drawn into).
int kiosk_svg_intrinsic_size(KioskSvg *svg, double *width, double *height);

/// Renders the whole document into the `width` x `height` box at the origin of the current transform of the Cairo
/// context `cr` (a `cairo_t *`). Returns 0 and writes a message into `error` on failure.
int kiosk_svg_render(KioskSvg *svg, void *cr, double width, double height, char *error, size_t error_size);

void kiosk_svg_free(KioskSvg *svg);

#endif
