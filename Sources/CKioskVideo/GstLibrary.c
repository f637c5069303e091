#include "GstLibrary.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// libgstapp and libgstvideo depend on libgstbase and libgstreamer: every function is found through these two.
static const char *const default_libraries[] = { "libgstapp-1.0.so.0", "libgstvideo-1.0.so.0" };

int kiosk_gst_resolve(const char *const *libraries, size_t count, KioskGstLibrary *table, char *error, size_t size) {
    void *handles[8];
    if (count == 0 || count > sizeof handles / sizeof handles[0]) {
        snprintf(error, size, "GStreamer: %zu libraries asked for, 1 to 8 can be", count);
        return 0;
    }
    memset(table, 0, sizeof *table);
    for (size_t i = 0; i < count; i++) {
        handles[i] = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
        if (handles[i] == NULL) {
            const char *reason = dlerror();
            snprintf(error, size, "GStreamer is not installed: %s (install libgstreamer1.0-0 and "
                     "libgstreamer-plugins-base1.0-0)", reason != NULL ? reason : libraries[i]);
            return 0;
        }
    }
#define KIOSK_GST_RESOLVE(name) \
    for (size_t i = 0; i < count && table->name == NULL; i++) \
        table->name = (__typeof__(name) *)dlsym(handles[i], #name); \
    if (table->name == NULL) { \
        snprintf(error, size, "GStreamer's libraries (%s) have no %s: kioskd needs GStreamer 1.20 or later", \
                 libraries[0], #name); \
        return 0; \
    }
    KIOSK_GST_FUNCTIONS(KIOSK_GST_RESOLVE)
#undef KIOSK_GST_RESOLVE
    return 1;
}

static KioskGstLibrary table;
static int loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    loaded = kiosk_gst_resolve(default_libraries, sizeof default_libraries / sizeof default_libraries[0], &table,
                               failure, sizeof failure);
}

int kiosk_gst_load(const char **error) {
    pthread_once(&once, load);
    if (!loaded && error != NULL) *error = failure;
    return loaded;
}

const KioskGstLibrary *kiosk_gst_api(void) {
    return &table;
}
