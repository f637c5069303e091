#include "CKioskPng.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <png.h>

struct kiosk_png_error {
    jmp_buf escape;
    char *message;
    size_t message_size;
};

static void kiosk_png_error_exit(png_structp png, png_const_charp message) {
    struct kiosk_png_error *error = png_get_error_ptr(png);
    snprintf(error->message, error->message_size, "%s", message);
    longjmp(error->escape, 1);
}

// Warnings (a bad CRC in an ancillary chunk, an unknown chunk) still produce an image; libpng would print them.
static void kiosk_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

// Cairo's own rounding when it premultiplies a PNG, so an image decoded at its size matches what Cairo decodes.
static inline uint32_t kiosk_premultiply(uint32_t alpha, uint32_t colour) {
    uint32_t t = alpha * colour + 0x80;
    return (t + (t >> 8)) >> 8;
}

/// The sums of premultiplied A, R, G, B per output pixel of `rows` output rows, and which output column and row
/// each source column and row of the rectangle falls in.
struct kiosk_png_bins {
    uint32_t *sums;
    int *column_of;   // per source column of the rectangle
    int *columns_in;  // source columns per output column
    int *rows_in;     // source rows per output row
    int out_width, out_height;
};

static void kiosk_png_bins_free(struct kiosk_png_bins *bins) {
    free(bins->sums);
    free(bins->column_of);
    free(bins->columns_in);
    free(bins->rows_in);
}


/// Adds the RGBA pixels of one source row (`count` of them, at source columns `first`, `first + step`, ...) that
/// lie in the rectangle to the sums of output row `sum_row`.
static void kiosk_png_accumulate(struct kiosk_png_bins *bins, const uint8_t *row, int count, int first, int step,
                                 int src_x, int src_width, int sum_row) {
    uint32_t *sums = bins->sums + (size_t)sum_row * (size_t)bins->out_width * 4;
    for (int i = 0; i < count; i++) {
        int x = first + i * step - src_x;
        if (x < 0) continue;
        if (x >= src_width) break;
        const uint8_t *p = row + (size_t)i * 4;
        uint32_t a = p[3];
        uint32_t *s = sums + (size_t)bins->column_of[x] * 4;
        s[0] += a;
        s[1] += kiosk_premultiply(a, p[0]);
        s[2] += kiosk_premultiply(a, p[1]);
        s[3] += kiosk_premultiply(a, p[2]);
    }
}

/// Writes output row `out_row` from the sums of `sum_row` (averaged) and clears them.
static void kiosk_png_flush(struct kiosk_png_bins *bins, uint32_t *pixels, int sum_row, int out_row) {
    uint32_t *sums = bins->sums + (size_t)sum_row * (size_t)bins->out_width * 4;
    uint32_t *out = pixels + (size_t)out_row * (size_t)bins->out_width;
    for (int x = 0; x < bins->out_width; x++) {
        uint32_t *s = sums + (size_t)x * 4;
        uint32_t n = (uint32_t)bins->columns_in[x] * (uint32_t)bins->rows_in[out_row], half = n / 2;
        out[x] = ((s[0] + half) / n) << 24 | ((s[1] + half) / n) << 16 | ((s[2] + half) / n) << 8 | ((s[3] + half) / n);
        s[0] = s[1] = s[2] = s[3] = 0;
    }
}

uint32_t *kiosk_png_decode_fd(int fd, long long max_pixels, int src_x, int src_y, int src_width, int src_height,
                              int factor_x, int factor_y, int *out_width_result, int *out_height_result,
                              char *error_message, size_t error_size) {
    if (error_size > 0) error_message[0] = '\0';
    FILE *file = fdopen(fd, "rb");
    if (!file) {
        snprintf(error_message, error_size, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    struct kiosk_png_error error = {.message = error_message, .message_size = error_size};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &error, kiosk_png_error_exit, kiosk_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        snprintf(error_message, error_size, "out of memory for the PNG reader");
        png_destroy_read_struct(&png, NULL, NULL);
        fclose(file);
        return NULL;
    }
    // Volatile: these change between setjmp and a possible longjmp and are read after it.
    uint32_t *volatile pixels = NULL;
    uint8_t *volatile row = NULL;
    struct kiosk_png_bins bins = {0};
    struct kiosk_png_bins *volatile bins_to_free = &bins;
    if (setjmp(error.escape)) {
        png_destroy_read_struct(&png, &info, NULL);
        kiosk_png_bins_free(bins_to_free);
        free(pixels);
        free(row);
        fclose(file);
        return NULL;
    }
    png_init_io(png, file);
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    if ((long long)width * (long long)height > max_pixels) {
        snprintf(error_message, error_size, "PNG of %ux%u pixels is over the limit of %lld pixels", width, height,
                 max_pixels);
        longjmp(error.escape, 1);
    }
    if (src_x < 0 || src_y < 0 || src_width < 1 || src_height < 1 || (png_uint_32)src_x + (png_uint_32)src_width > width ||
        (png_uint_32)src_y + (png_uint_32)src_height > height || factor_x < 1 || factor_y < 1) {
        snprintf(error_message, error_size, "PNG of %ux%u pixels has no region %dx%d at %d,%d to reduce by %dx%d (changed on disk?)",
                 width, height, src_width, src_height, src_x, src_y, factor_x, factor_y);
        longjmp(error.escape, 1);
    }
    int out_width = (src_width + factor_x - 1) / factor_x, out_height = (src_height + factor_y - 1) / factor_y;
    // A sum holds at most factor_x x factor_y source values of 255 each.
    if ((long long)factor_x * factor_y * 255 > (long long)UINT32_MAX) {
        snprintf(error_message, error_size, "PNG of %ux%u pixels cannot be reduced by %dx%d in one pass", width, height,
                 factor_x, factor_y);
        longjmp(error.escape, 1);
    }

    png_set_expand(png);       // palette to RGB, grey below 8 bits to 8, tRNS to alpha
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    png_set_filler(png, 0xFF, PNG_FILLER_AFTER);  // RGBA, opaque where the file has no alpha
    int interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        snprintf(error_message, error_size, "PNG rows did not convert to RGBA (%zu bytes for %u pixels)",
                 (size_t)png_get_rowbytes(png, info), width);
        longjmp(error.escape, 1);
    }

    int sum_rows = interlaced ? out_height : 1;
    bins.out_width = out_width;
    bins.out_height = out_height;
    bins.sums = calloc((size_t)out_width * (size_t)sum_rows * 4, sizeof(uint32_t));
    bins.column_of = malloc((size_t)src_width * sizeof(int));
    bins.columns_in = calloc((size_t)out_width, sizeof(int));
    bins.rows_in = calloc((size_t)out_height, sizeof(int));
    pixels = malloc((size_t)out_width * (size_t)out_height * 4);
    row = malloc((size_t)width * 4);
    if (!bins.sums || !bins.column_of || !bins.columns_in || !bins.rows_in || !pixels || !row) {
        snprintf(error_message, error_size, "out of memory for a %dx%d image", out_width, out_height);
        longjmp(error.escape, 1);
    }
    for (int x = 0; x < src_width; x++) {
        bins.column_of[x] = x / factor_x;
        bins.columns_in[bins.column_of[x]]++;
    }
    for (int y = 0; y < src_height; y++) bins.rows_in[y / factor_y]++;

    if (!interlaced) {
        // One output row of sums: a source row adds to it until the rows move on to the next output row.
        int current = 0;
        for (int y = 0; y < src_y + src_height; y++) {
            png_read_row(png, row, NULL);
            if (y < src_y) continue;
            int out_row = (y - src_y) / factor_y;
            if (out_row != current) {
                kiosk_png_flush(&bins, pixels, 0, current);
                current = out_row;
            }
            kiosk_png_accumulate(&bins, row, (int)width, 0, 1, src_x, src_width, 0);
        }
        kiosk_png_flush(&bins, pixels, 0, current);
        // The rows below the rectangle are never read: the decoder stops here.
    } else {
        // Adam7: seven sub-images, each pixel landing at its place in the full image; libpng skips empty passes.
        for (int pass = 0; pass < 7; pass++) {
            png_uint_32 columns = PNG_PASS_COLS(width, pass), rows = PNG_PASS_ROWS(height, pass);
            if (columns == 0 || rows == 0) continue;
            for (png_uint_32 r = 0; r < rows; r++) {
                png_read_row(png, row, NULL);
                int y = (int)PNG_ROW_FROM_PASS_ROW(r, pass) - src_y;
                if (y < 0 || y >= src_height) continue;
                kiosk_png_accumulate(&bins, row, (int)columns, (int)PNG_PASS_START_COL(pass),
                                     1 << PNG_PASS_COL_SHIFT(pass), src_x, src_width,
                                     y / factor_y);
            }
        }
        for (int y = 0; y < out_height; y++) kiosk_png_flush(&bins, pixels, y, y);
    }
    png_destroy_read_struct(&png, &info, NULL);
    kiosk_png_bins_free(&bins);
    free(row);
    fclose(file);
    *out_width_result = out_width;
    *out_height_result = out_height;
    return pixels;
}

void kiosk_png_free(uint32_t *pixels) { free(pixels); }
