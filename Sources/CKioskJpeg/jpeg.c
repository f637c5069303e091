#include "CKioskJpeg.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jpeglib.h>

// Cairo refuses images wider or taller than this.
#define KIOSK_JPEG_MAX_SIDE 32767

struct kiosk_jpeg_error {
    struct jpeg_error_mgr manager;  // first, so libjpeg's pointer to it is also a pointer to this
    jmp_buf escape;
    char *message;
    size_t message_size;
};

static void kiosk_jpeg_error_exit(j_common_ptr info) {
    struct kiosk_jpeg_error *error = (struct kiosk_jpeg_error *)info->err;
    char buffer[JMSG_LENGTH_MAX];
    error->manager.format_message(info, buffer);
    snprintf(error->message, error->message_size, "%s", buffer);
    longjmp(error->escape, 1);
}

// Warnings (a truncated file, extraneous bytes) still produce an image; libjpeg would print them to stderr.
static void kiosk_jpeg_output_message(j_common_ptr info) { (void)info; }

static void kiosk_jpeg_init_error(struct kiosk_jpeg_error *error, char *message, size_t message_size) {
    jpeg_std_error(&error->manager);
    error->manager.error_exit = kiosk_jpeg_error_exit;
    error->manager.output_message = kiosk_jpeg_output_message;
    error->message = message;
    error->message_size = message_size;
    if (message_size > 0) message[0] = '\0';
}

static uint32_t kiosk_cmyk_to_xrgb(const JSAMPLE *cmyk, int inverted) {
    unsigned c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
    if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
    // Inverted values are the "ink left out": red = (1 - C)(1 - K).
    unsigned r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
    return 0xFF000000u | (r << 16) | (g << 8) | b;
}

uint32_t *kiosk_jpeg_decode_fd(int fd, int min_width, int min_height, int either, int *width, int *height,
                               char *error_message, size_t error_size) {
    FILE *file = fdopen(fd, "rb");
    if (!file) {
        snprintf(error_message, error_size, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    struct jpeg_decompress_struct info;
    struct kiosk_jpeg_error error;
    kiosk_jpeg_init_error(&error, error_message, error_size);
    info.err = &error.manager;
    // Volatile: these change between setjmp and a possible longjmp and are read after it.
    uint32_t *volatile pixels = NULL;
    JSAMPLE *volatile row = NULL;
    if (setjmp(error.escape)) {
        jpeg_destroy_decompress(&info);
        free(pixels);
        free(row);
        fclose(file);
        return NULL;
    }
    jpeg_create_decompress(&info);
    jpeg_stdio_src(&info, file);
    jpeg_save_markers(&info, JPEG_APP0 + 14, 0xFFFF);
    jpeg_read_header(&info, TRUE);

    int is_cmyk = 0;
    switch (info.jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_YCbCr:
    case JCS_RGB:
        info.out_color_space = JCS_EXT_BGRX;  // little-endian BGRX bytes are the word 0xXXRRGGBB
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        info.out_color_space = JCS_CMYK;  // libjpeg converts YCCK to CMYK but no further
        is_cmyk = 1;
        break;
    default:
        snprintf(error_message, error_size, "unsupported JPEG colour space %d with %d components",
                 (int)info.jpeg_color_space, info.num_components);
        jpeg_destroy_decompress(&info);
        fclose(file);
        return NULL;
    }
    if (min_width > 0 && min_height > 0) {
        info.scale_num = 1;
        for (unsigned denom = 8; denom > 1; denom /= 2) {
            int wide = (info.image_width + denom - 1) / denom >= (unsigned)min_width;
            int tall = (info.image_height + denom - 1) / denom >= (unsigned)min_height;
            if (either ? (wide || tall) : (wide && tall)) {
                info.scale_denom = denom;
                break;
            }
        }
    }
    jpeg_start_decompress(&info);
    if (info.output_width == 0 || info.output_height == 0 || info.output_width > KIOSK_JPEG_MAX_SIDE ||
        info.output_height > KIOSK_JPEG_MAX_SIDE) {
        snprintf(error_message, error_size, "JPEG size %ux%u is outside 1...%d pixels a side",
                 info.output_width, info.output_height, KIOSK_JPEG_MAX_SIDE);
        jpeg_destroy_decompress(&info);
        fclose(file);
        return NULL;
    }
    size_t w = info.output_width, h = info.output_height;
    pixels = malloc(w * h * 4);
    if (is_cmyk) row = malloc(w * 4);
    if (!pixels || (is_cmyk && !row)) {
        snprintf(error_message, error_size, "out of memory for %zux%zu pixels", w, h);
        jpeg_destroy_decompress(&info);
        free(pixels);
        free(row);
        fclose(file);
        return NULL;
    }
    // Photoshop and most other Adobe-marker writers store CMYK inverted (0 = full ink).
    int inverted = info.saw_Adobe_marker;
    while (info.output_scanline < info.output_height) {
        size_t y = info.output_scanline;
        uint32_t *out = pixels + y * w;
        if (is_cmyk) {
            JSAMPROW rows[1] = {row};
            jpeg_read_scanlines(&info, rows, 1);
            for (size_t x = 0; x < w; x++) out[x] = kiosk_cmyk_to_xrgb(row + x * 4, inverted);
        } else {
            JSAMPROW rows[1] = {(JSAMPROW)out};
            jpeg_read_scanlines(&info, rows, 1);
            for (size_t x = 0; x < w; x++) out[x] |= 0xFF000000u;  // the X byte is undefined; make it opaque
        }
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    fclose(file);
    *width = (int)w;
    *height = (int)h;
    return pixels;
}

void kiosk_jpeg_free(uint32_t *pixels) { free(pixels); }

/// Compresses `pixels` into the destination `info` was given (between create and destroy; an error longjmps to
/// the caller's setjmp): 1 component grayscale, 3 RGB, 4 CMYK stored inverted as Adobe applications do.
static void kiosk_jpeg_compress(struct jpeg_compress_struct *info, const uint8_t *pixels, int width, int height,
                                int components, int quality) {
    info->image_width = (JDIMENSION)width;
    info->image_height = (JDIMENSION)height;
    info->input_components = components;
    info->in_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
    jpeg_set_defaults(info);
    jpeg_set_quality(info, quality, TRUE);
    if (components == 4) info->write_Adobe_marker = TRUE;
    jpeg_start_compress(info, TRUE);
    while (info->next_scanline < info->image_height) {
        JSAMPROW rows[1] = {(JSAMPROW)(pixels + (size_t)info->next_scanline * (size_t)width * (size_t)components)};
        jpeg_write_scanlines(info, rows, 1);
    }
    jpeg_finish_compress(info);
}

int kiosk_jpeg_encode_file(const char *path, const uint8_t *pixels, int width, int height, int components,
                           int quality, char *error_message, size_t error_size) {
    if (width <= 0 || height <= 0 || (components != 1 && components != 3 && components != 4)) {
        snprintf(error_message, error_size, "invalid JPEG image %dx%d with %d components", width, height, components);
        return -1;
    }
    FILE *file = fopen(path, "wb");
    if (!file) {
        snprintf(error_message, error_size, "cannot create: %s", strerror(errno));
        return -1;
    }
    struct jpeg_compress_struct info;
    struct kiosk_jpeg_error error;
    kiosk_jpeg_init_error(&error, error_message, error_size);
    info.err = &error.manager;
    if (setjmp(error.escape)) {
        jpeg_destroy_compress(&info);
        fclose(file);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_stdio_dest(&info, file);
    kiosk_jpeg_compress(&info, pixels, width, height, components, quality);
    jpeg_destroy_compress(&info);
    if (fclose(file) != 0) {
        snprintf(error_message, error_size, "cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int kiosk_jpeg_encode_memory(const uint8_t *pixels, int width, int height, int components, int quality,
                             unsigned char **out, unsigned long *out_size, char *error_message, size_t error_size) {
    *out = NULL;
    *out_size = 0;
    if (width <= 0 || height <= 0 || (components != 1 && components != 3)) {
        snprintf(error_message, error_size, "invalid JPEG image %dx%d with %d components", width, height, components);
        return -1;
    }
    struct jpeg_compress_struct info;
    struct kiosk_jpeg_error error;
    kiosk_jpeg_init_error(&error, error_message, error_size);
    info.err = &error.manager;
    // Volatile: libjpeg's memory destination (re)allocates it between setjmp and a possible longjmp.
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;
    if (setjmp(error.escape)) {
        jpeg_destroy_compress(&info);
        free(buffer);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **)&buffer, &size);
    kiosk_jpeg_compress(&info, pixels, width, height, components, quality);
    jpeg_destroy_compress(&info);
    *out = buffer;
    *out_size = size;
    return 0;
}

void kiosk_jpeg_free_bytes(unsigned char *bytes) { free(bytes); }
