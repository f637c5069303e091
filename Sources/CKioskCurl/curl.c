#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

// Declared with hidden visibility: these definitions serve kioskd's own calls and never stand in for the library's
// exports when it resolves its own symbols.
#pragma GCC visibility push(hidden)
#include "CKioskCurl.h"
#pragma GCC visibility pop

// The library's functions that KioskFetch calls, resolved once.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} lib;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_failure[256];
static int curl_loaded;

static void load_curl(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(curl_failure, sizeof curl_failure, "libcurl is not installed (%s)", dlerror());
        return;
    }
    struct { const char *name; void **slot; } symbols[] = {
        {"curl_global_init", (void **)&lib.global_init},
        {"curl_easy_init", (void **)&lib.easy_init},
        {"curl_easy_cleanup", (void **)&lib.easy_cleanup},
        {"curl_easy_setopt", (void **)&lib.easy_setopt},
        {"curl_easy_getinfo", (void **)&lib.easy_getinfo},
        {"curl_easy_strerror", (void **)&lib.easy_strerror},
        {"curl_multi_init", (void **)&lib.multi_init},
        {"curl_multi_cleanup", (void **)&lib.multi_cleanup},
        {"curl_multi_setopt", (void **)&lib.multi_setopt},
        {"curl_multi_add_handle", (void **)&lib.multi_add_handle},
        {"curl_multi_remove_handle", (void **)&lib.multi_remove_handle},
        {"curl_multi_perform", (void **)&lib.multi_perform},
        {"curl_multi_poll", (void **)&lib.multi_poll},
        {"curl_multi_wakeup", (void **)&lib.multi_wakeup},
        {"curl_multi_info_read", (void **)&lib.multi_info_read},
        {"curl_slist_append", (void **)&lib.slist_append},
        {"curl_slist_free_all", (void **)&lib.slist_free_all},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(curl_failure, sizeof curl_failure, "libcurl has no %s (7.85 or later is needed)", symbols[i].name);
            return;
        }
    }
    // CURLOPT_PROTOCOLS_STR (7.85) is what keeps transfers to http and https: refuse an older library.
    curl_version_info_data *(*version_info)(CURLversion) = (curl_version_info_data *(*)(CURLversion))dlsym(library, "curl_version_info");
    if (!version_info || version_info(CURLVERSION_NOW)->version_num < 0x075500) {
        snprintf(curl_failure, sizeof curl_failure, "libcurl 7.85 or later is needed");
        return;
    }
    CURLcode status = lib.global_init(CURL_GLOBAL_ALL);
    if (status != CURLE_OK) {
        snprintf(curl_failure, sizeof curl_failure, "curl_global_init failed (%d)", (int)status);
        return;
    }
    curl_loaded = 1;
}

const char *kiosk_curl_load_failure(void) {
    pthread_once(&curl_once, load_curl);
    return curl_loaded ? NULL : curl_failure;
}

// Every call loads the library first (a no-op after the first); without it, each fails as libcurl fails a call it
// cannot make. KioskFetch checks kiosk_curl_load_failure before it makes a handle, so these paths stay unused.
#define LOADED() (kiosk_curl_load_failure() == NULL)

CURLcode curl_global_init(long flags) { return LOADED() ? CURLE_OK : CURLE_FAILED_INIT; (void)flags; }
CURL *curl_easy_init(void) { return LOADED() ? lib.easy_init() : NULL; }
void curl_easy_cleanup(CURL *handle) { if (LOADED()) lib.easy_cleanup(handle); }
const char *curl_easy_strerror(CURLcode code) { return LOADED() ? lib.easy_strerror(code) : "libcurl is not loaded"; }
CURLM *curl_multi_init(void) { return LOADED() ? lib.multi_init() : NULL; }
CURLMcode curl_multi_cleanup(CURLM *multi) { return LOADED() ? lib.multi_cleanup(multi) : CURLM_INTERNAL_ERROR; }
CURLMcode curl_multi_add_handle(CURLM *multi, CURL *handle) { return LOADED() ? lib.multi_add_handle(multi, handle) : CURLM_INTERNAL_ERROR; }
CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *handle) { return LOADED() ? lib.multi_remove_handle(multi, handle) : CURLM_INTERNAL_ERROR; }
CURLMcode curl_multi_perform(CURLM *multi, int *running) { return LOADED() ? lib.multi_perform(multi, running) : CURLM_INTERNAL_ERROR; }
CURLMcode curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready) {
    return LOADED() ? lib.multi_poll(multi, extra, count, timeout, ready) : CURLM_INTERNAL_ERROR;
}
CURLMcode curl_multi_wakeup(CURLM *multi) { return LOADED() ? lib.multi_wakeup(multi) : CURLM_INTERNAL_ERROR; }
CURLMsg *curl_multi_info_read(CURLM *multi, int *queued) { return LOADED() ? lib.multi_info_read(multi, queued) : NULL; }
struct curl_slist *curl_slist_append(struct curl_slist *list, const char *text) { return LOADED() ? lib.slist_append(list, text) : NULL; }
void curl_slist_free_all(struct curl_slist *list) { if (LOADED()) lib.slist_free_all(list); }

CURLcode kiosk_curl_setopt_long(CURL *h, CURLoption o, long v) { return LOADED() ? lib.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return LOADED() ? lib.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return LOADED() ? lib.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return LOADED() ? lib.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_setopt_list(CURL *h, CURLoption o, struct curl_slist *v) { return LOADED() ? lib.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_setopt_write_function(CURL *h, curl_write_callback c) {
    return LOADED() ? lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, c) : CURLE_FAILED_INIT;
}
CURLcode kiosk_curl_setopt_header_function(CURL *h, curl_write_callback c) {
    return LOADED() ? lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, c) : CURLE_FAILED_INIT;
}
CURLcode kiosk_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return LOADED() ? lib.easy_getinfo(h, i, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return LOADED() ? lib.easy_getinfo(h, i, v) : CURLE_FAILED_INIT; }
CURLcode kiosk_curl_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return LOADED() ? lib.easy_getinfo(h, i, v) : CURLE_FAILED_INIT; }
CURLMcode kiosk_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return LOADED() ? lib.multi_setopt(m, o, v) : CURLM_INTERNAL_ERROR; }
