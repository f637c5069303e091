#include "CKioskSvg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

// The parts of librsvg's and GLib's ABI that kioskd uses, declared here so that nothing links them
// (librsvg/rsvg.h, 2.52 and later: rsvg_handle_get_intrinsic_size_in_pixels, rsvg_handle_render_document; GIO's
// g_unix_input_stream_new and g_file_new_for_path, from the GIO librsvg links).
typedef struct { unsigned int domain; int code; char *message; } GErrorABI;
typedef struct { double x, y, width, height; } RsvgRectangleABI;
typedef struct { double length; int unit; } RsvgLengthABI;

static struct {
    void *(*new_from_stream_sync)(void *stream, void *base_file, int flags, void *cancellable, GErrorABI **error);
    void *(*unix_input_stream_new)(int fd, int close_fd);
    void *(*file_new_for_path)(const char *path);
    int (*get_intrinsic_size_in_pixels)(void *handle, double *width, double *height);
    void (*get_intrinsic_dimensions)(void *handle, int *has_width, RsvgLengthABI *width, int *has_height,
                                     RsvgLengthABI *height, int *has_viewbox, RsvgRectangleABI *viewbox);
    int (*render_document)(void *handle, void *cr, const RsvgRectangleABI *viewport, GErrorABI **error);
    void (*object_unref)(void *object);
    void (*error_free)(GErrorABI *error);
} rsvg;

static pthread_once_t rsvg_once = PTHREAD_ONCE_INIT;
static char rsvg_failure[256];

static void load_rsvg(void) {
    void *library = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(rsvg_failure, sizeof rsvg_failure, "librsvg is not installed (%s)", dlerror());
        return;
    }
    // dlsym on the handle also searches the libraries librsvg depends on (GLib's g_object_unref, g_error_free).
    struct { const char *name; void **slot; } symbols[] = {
        {"rsvg_handle_new_from_stream_sync", (void **)&rsvg.new_from_stream_sync},
        {"g_unix_input_stream_new", (void **)&rsvg.unix_input_stream_new},
        {"g_file_new_for_path", (void **)&rsvg.file_new_for_path},
        {"rsvg_handle_get_intrinsic_size_in_pixels", (void **)&rsvg.get_intrinsic_size_in_pixels},
        {"rsvg_handle_get_intrinsic_dimensions", (void **)&rsvg.get_intrinsic_dimensions},
        {"rsvg_handle_render_document", (void **)&rsvg.render_document},
        {"g_object_unref", (void **)&rsvg.object_unref},
        {"g_error_free", (void **)&rsvg.error_free},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(rsvg_failure, sizeof rsvg_failure, "librsvg has no %s (2.52 or later is needed)",
                     symbols[i].name);
            rsvg.new_from_stream_sync = NULL;
            return;
        }
    }
}

static void take_error(GErrorABI *error, const char *what, char *out, size_t out_size) {
    snprintf(out, out_size, "%s: %s", what, error && error->message ? error->message : "unknown error");
    if (error) rsvg.error_free(error);
}

KioskSvg *kiosk_svg_load_fd(int fd, const char *path, char *error, size_t error_size) {
    pthread_once(&rsvg_once, load_rsvg);
    if (!rsvg.new_from_stream_sync) {
        snprintf(error, error_size, "%s", rsvg_failure);
        close(fd);
        return NULL;
    }
    // The stream owns fd from here (close_fd TRUE). The base file is what librsvg resolves references against and
    // limits them to: files in its folder and below, no other scheme (no flags: not RSVG_HANDLE_FLAG_UNLIMITED).
    void *stream = rsvg.unix_input_stream_new(fd, 1);
    void *base = rsvg.file_new_for_path(path);
    GErrorABI *failure = NULL;
    void *handle = rsvg.new_from_stream_sync(stream, base, 0, NULL, &failure);
    rsvg.object_unref(base);
    rsvg.object_unref(stream);
    if (!handle) take_error(failure, "cannot load SVG", error, error_size);
    return handle;
}

int kiosk_svg_intrinsic_size(KioskSvg *svg, double *width, double *height) {
    if (rsvg.get_intrinsic_size_in_pixels(svg, width, height) && *width > 0 && *height > 0) return KIOSK_SVG_SIZE_PIXELS;
    int has_width = 0, has_height = 0, has_viewbox = 0;
    RsvgLengthABI width_length = {0}, height_length = {0};
    RsvgRectangleABI viewbox = {0};
    rsvg.get_intrinsic_dimensions(svg, &has_width, &width_length, &has_height, &height_length, &has_viewbox,
                                  &viewbox);
    if (!has_viewbox || viewbox.width <= 0 || viewbox.height <= 0) return KIOSK_SVG_SIZE_NONE;
    *width = viewbox.width;
    *height = viewbox.height;
    return KIOSK_SVG_SIZE_VIEWBOX;
}

int kiosk_svg_render(KioskSvg *svg, void *cr, double width, double height, char *error, size_t error_size) {
    RsvgRectangleABI viewport = {0, 0, width, height};
    GErrorABI *failure = NULL;
    if (rsvg.render_document(svg, cr, &viewport, &failure)) return 1;
    take_error(failure, "cannot render SVG", error, error_size);
    return 0;
}

void kiosk_svg_free(KioskSvg *svg) {
    if (svg) rsvg.object_unref(svg);
}
