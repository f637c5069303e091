#define _GNU_SOURCE
#include "CKioskWeb.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The parts of the ABI of GLib/GObject, libwpe 1.14, WPEBackend-fdo 1.14 (its shm export), libwayland-server and
// WPE WebKit 2.38 that kioskd uses, declared here so that nothing links them (their headers: glib.h, wpe/wpe.h,
// wpe/fdo.h, wpe/unstable/fdo-shm.h, wayland-server.h, wpe/webkit.h), and the three calls of libxkbcommon
// (xkbcommon/xkbcommon.h; libwpe depends on it) that keep the keyboard's modifiers.
typedef struct { uint32_t domain; int code; char *message; } GErrorABI;
typedef struct { double red, green, blue, alpha; } WebKitColorABI;
typedef int (*GSourceFuncABI)(void *data);
typedef void (*GDestroyNotifyABI)(void *data);
struct wpe_input_pointer_event_abi { int type; uint32_t time; int x, y; uint32_t button, state, modifiers; };
struct wpe_input_keyboard_event_abi { uint32_t time; uint32_t key_code; uint32_t hardware_key_code; bool pressed; uint32_t modifiers; };
struct exportable_client_abi {
    void (*export_buffer_resource)(void *data, void *buffer_resource);
    void (*export_dmabuf_resource)(void *data, void *dmabuf_resource);
    void (*export_shm_buffer)(void *data, void *shm_exported_buffer);
    void (*reserved0)(void);
    void (*reserved1)(void);
};

enum { LOAD_STARTED = 0, LOAD_COMMITTED = 2, LOAD_FINISHED = 3, NETWORK_ERROR_CANCELLED = 302, POLICY_NAVIGATION = 0, POLICY_NEW_WINDOW = 1 };
enum { ACTIVITY_VISIBLE = 1 << 0, ACTIVITY_FOCUSED = 1 << 1, ACTIVITY_IN_WINDOW = 1 << 2 };
enum { POINTER_MOTION = 1, POINTER_BUTTON = 2, POINTER_BUTTON1_MODIFIER = 1 << 20 };
// xkb_key_direction, xkb_state_component; an xkb keycode is the kernel's (evdev) key code plus 8.
enum { XKB_KEY_UP = 0, XKB_KEY_DOWN = 1, XKB_STATE_MODS_DEPRESSED = 1 << 0, XKB_STATE_MODS_LATCHED = 1 << 1,
       XKB_STATE_MODS_LOCKED = 1 << 2, XKB_STATE_LAYOUT_EFFECTIVE = 1 << 7, XKB_EVDEV_OFFSET = 8 };

static struct {
    // GLib / GObject (found through WebKit's handle, which depends on them).
    void *(*main_context_new)(void);
    void (*main_context_push_thread_default)(void *context);
    void *(*main_loop_new)(void *context, int is_running);
    void (*main_loop_run)(void *loop);
    void (*main_context_invoke_full)(void *context, int priority, GSourceFuncABI function, void *data,
                                     GDestroyNotifyABI notify);
    unsigned long (*signal_connect_data)(void *instance, const char *signal, void *handler, void *data,
                                         void *destroy, int flags);
    unsigned (*signal_handlers_disconnect_matched)(void *instance, int mask, unsigned signal_id, uint32_t detail,
                                                   void *closure, void *func, void *data);
    void (*object_unref)(void *object);
    void *(*object_ref)(void *object);
    void *(*object_new)(unsigned long type, const char *first_property, ...);
    void (*free)(void *memory);
    void *(*timeout_source_new)(unsigned interval_ms);
    void (*source_set_callback)(void *source, GSourceFuncABI function, void *data, GDestroyNotifyABI notify);
    unsigned (*source_attach)(void *source, void *context);
    void (*source_destroy)(void *source);
    void (*source_unref)(void *source);
    int64_t (*get_monotonic_time)(void);
    void (*error_free)(GErrorABI *error);
    uint32_t (*network_error_quark)(void);
    // libwpe and WPEBackend-fdo.
    int (*loader_init)(const char *implementation);
    int (*fdo_initialize_shm)(void);
    void *(*exportable_create)(const struct exportable_client_abi *client, void *data, uint32_t width, uint32_t height);
    void (*exportable_destroy)(void *exportable);
    void *(*exportable_get_view_backend)(void *exportable);
    void (*exportable_frame_complete)(void *exportable);
    void (*exportable_release_shm)(void *exportable, void *buffer);
    void *(*shm_exported_get_shm_buffer)(void *buffer);
    void (*view_backend_add_activity_state)(void *backend, uint32_t state);
    void (*view_backend_dispatch_set_size)(void *backend, uint32_t width, uint32_t height);
    void (*view_backend_dispatch_pointer_event)(void *backend, struct wpe_input_pointer_event_abi *event);
    void (*view_backend_dispatch_keyboard_event)(void *backend, struct wpe_input_keyboard_event_abi *event);
    void *(*xkb_context_get_default)(void);
    void *(*xkb_context_get_state)(void *context);
    uint32_t (*xkb_context_get_key_code)(void *context, uint32_t hardware_key_code, bool pressed);
    uint32_t (*xkb_context_get_modifiers)(void *context, uint32_t depressed, uint32_t latched, uint32_t locked,
                                          uint32_t group);
    // libxkbcommon (found through libwpe's handle).
    int (*xkb_state_update_key)(void *state, uint32_t keycode, int direction);
    uint32_t (*xkb_state_serialize_mods)(void *state, int components);
    uint32_t (*xkb_state_serialize_layout)(void *state, int components);
    // libwayland-server: the exported shm buffer.
    void (*shm_begin_access)(void *buffer);
    void (*shm_end_access)(void *buffer);
    void *(*shm_get_data)(void *buffer);
    int32_t (*shm_get_stride)(void *buffer);
    int32_t (*shm_get_width)(void *buffer);
    int32_t (*shm_get_height)(void *buffer);
    uint32_t (*shm_get_format)(void *buffer);
    // WPE WebKit.
    void *(*data_manager_new_ephemeral)(void);
    void *(*data_manager_new)(const char *first_option, ...);
    void (*data_manager_clear)(void *manager, uint32_t types, int64_t timespan, void *cancellable, void *callback,
                               void *data);
    unsigned long (*web_context_get_type)(void);
    void *(*web_context_get_cookie_manager)(void *context);
    void (*cookie_manager_set_persistent_storage)(void *manager, const char *file, int storage);
    void *(*web_context_get_website_data_manager)(void *context);
    void *(*memory_pressure_settings_new)(void);
    void (*memory_pressure_settings_set_memory_limit)(void *settings, unsigned megabytes);
    void (*memory_pressure_settings_set_kill_threshold)(void *settings, double fraction);
    void (*memory_pressure_settings_free)(void *settings);
    void (*memory_pressure_settings_set_poll_interval)(void *settings, double seconds);
    void (*web_view_run_javascript)(void *view, const char *script, void *cancellable, void *callback, void *data);
    void *(*web_view_run_javascript_finish)(void *view, void *result, GErrorABI **error);
    void *(*javascript_result_get_js_value)(void *result);
    void (*javascript_result_unref)(void *result);
    char *(*js_value_to_string)(void *value);
    const char *(*web_view_get_uri)(void *view);
    int (*user_content_manager_register_script_message_handler)(void *manager, const char *name);
    void *(*user_script_new)(const char *source, int frames, int time, const char *const *allow, const char *const *block);
    void (*user_content_manager_add_script)(void *manager, void *script);
    void (*user_script_unref)(void *script);
    void *(*web_context_new_with_data_manager)(void *manager);
    void *(*web_view_backend_new)(void *backend, GDestroyNotifyABI notify, void *data);
    void *(*web_view_new_with_context)(void *backend, void *context);
    void (*web_view_load_uri)(void *view, const char *uri);
    void (*web_view_reload)(void *view);
    void (*web_view_set_zoom_level)(void *view, double zoom);
    void (*web_view_set_background_color)(void *view, const WebKitColorABI *color);
    void *(*web_view_get_settings)(void *view);
    void (*settings_set_user_agent)(void *settings, const char *user_agent);
    void (*web_view_terminate_web_process)(void *view);
    void *(*web_view_get_user_content_manager)(void *view);
    void *(*user_style_sheet_new)(const char *source, int frames, int level, const char *const *allow,
                                  const char *const *block);
    void (*user_content_manager_add_style_sheet)(void *manager, void *sheet);
    void (*user_style_sheet_unref)(void *sheet);
    void *(*navigation_policy_decision_get_navigation_action)(void *decision);
    void *(*navigation_action_get_request)(void *action);
    const char *(*uri_request_get_uri)(void *request);
    void (*policy_decision_ignore)(void *decision);
} wk;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_failure[512];

static void *open_library(const char *name) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library && !load_failure[0]) {
        snprintf(load_failure, sizeof load_failure, "WPE WebKit is not installed: %s (install libwpewebkit-1.1-0 and "
                 "libwpebackend-fdo-1.0-1)", dlerror());
    }
    return library;
}

static void load_webkit(void) {
    void *webkit = open_library("libWPEWebKit-1.1.so.0");
    void *fdo = open_library("libWPEBackend-fdo-1.0.so.1");
    void *wpe = open_library("libwpe-1.0.so.1");
    void *wayland = open_library("libwayland-server.so.0");
    if (!webkit || !fdo || !wpe || !wayland) return;
    struct { void *library; const char *name; void **slot; } symbols[] = {
        {webkit, "g_main_context_new", (void **)&wk.main_context_new},
        {webkit, "g_main_context_push_thread_default", (void **)&wk.main_context_push_thread_default},
        {webkit, "g_main_loop_new", (void **)&wk.main_loop_new},
        {webkit, "g_main_loop_run", (void **)&wk.main_loop_run},
        {webkit, "g_main_context_invoke_full", (void **)&wk.main_context_invoke_full},
        {webkit, "g_signal_connect_data", (void **)&wk.signal_connect_data},
        {webkit, "g_signal_handlers_disconnect_matched", (void **)&wk.signal_handlers_disconnect_matched},
        {webkit, "g_object_unref", (void **)&wk.object_unref},
        {webkit, "g_object_ref", (void **)&wk.object_ref},
        {webkit, "g_object_new", (void **)&wk.object_new},
        {webkit, "g_free", (void **)&wk.free},
        {webkit, "g_timeout_source_new", (void **)&wk.timeout_source_new},
        {webkit, "g_source_set_callback", (void **)&wk.source_set_callback},
        {webkit, "g_source_attach", (void **)&wk.source_attach},
        {webkit, "g_source_destroy", (void **)&wk.source_destroy},
        {webkit, "g_source_unref", (void **)&wk.source_unref},
        {webkit, "g_get_monotonic_time", (void **)&wk.get_monotonic_time},
        {webkit, "g_error_free", (void **)&wk.error_free},
        {webkit, "webkit_network_error_quark", (void **)&wk.network_error_quark},
        {wpe, "wpe_loader_init", (void **)&wk.loader_init},
        {wpe, "wpe_view_backend_add_activity_state", (void **)&wk.view_backend_add_activity_state},
        {wpe, "wpe_view_backend_dispatch_set_size", (void **)&wk.view_backend_dispatch_set_size},
        {wpe, "wpe_view_backend_dispatch_pointer_event", (void **)&wk.view_backend_dispatch_pointer_event},
        {wpe, "wpe_view_backend_dispatch_keyboard_event", (void **)&wk.view_backend_dispatch_keyboard_event},
        {wpe, "wpe_input_xkb_context_get_default", (void **)&wk.xkb_context_get_default},
        {wpe, "wpe_input_xkb_context_get_state", (void **)&wk.xkb_context_get_state},
        {wpe, "wpe_input_xkb_context_get_key_code", (void **)&wk.xkb_context_get_key_code},
        {wpe, "wpe_input_xkb_context_get_modifiers", (void **)&wk.xkb_context_get_modifiers},
        {wpe, "xkb_state_update_key", (void **)&wk.xkb_state_update_key},
        {wpe, "xkb_state_serialize_mods", (void **)&wk.xkb_state_serialize_mods},
        {wpe, "xkb_state_serialize_layout", (void **)&wk.xkb_state_serialize_layout},
        {fdo, "wpe_fdo_initialize_shm", (void **)&wk.fdo_initialize_shm},
        {fdo, "wpe_view_backend_exportable_fdo_create", (void **)&wk.exportable_create},
        {fdo, "wpe_view_backend_exportable_fdo_destroy", (void **)&wk.exportable_destroy},
        {fdo, "wpe_view_backend_exportable_fdo_get_view_backend", (void **)&wk.exportable_get_view_backend},
        {fdo, "wpe_view_backend_exportable_fdo_dispatch_frame_complete", (void **)&wk.exportable_frame_complete},
        {fdo, "wpe_view_backend_exportable_fdo_dispatch_release_shm_exported_buffer", (void **)&wk.exportable_release_shm},
        {fdo, "wpe_fdo_shm_exported_buffer_get_shm_buffer", (void **)&wk.shm_exported_get_shm_buffer},
        {wayland, "wl_shm_buffer_begin_access", (void **)&wk.shm_begin_access},
        {wayland, "wl_shm_buffer_end_access", (void **)&wk.shm_end_access},
        {wayland, "wl_shm_buffer_get_data", (void **)&wk.shm_get_data},
        {wayland, "wl_shm_buffer_get_stride", (void **)&wk.shm_get_stride},
        {wayland, "wl_shm_buffer_get_width", (void **)&wk.shm_get_width},
        {wayland, "wl_shm_buffer_get_height", (void **)&wk.shm_get_height},
        {wayland, "wl_shm_buffer_get_format", (void **)&wk.shm_get_format},
        {webkit, "webkit_website_data_manager_new_ephemeral", (void **)&wk.data_manager_new_ephemeral},
        {webkit, "webkit_website_data_manager_new", (void **)&wk.data_manager_new},
        {webkit, "webkit_website_data_manager_clear", (void **)&wk.data_manager_clear},
        {webkit, "webkit_web_context_get_type", (void **)&wk.web_context_get_type},
        {webkit, "webkit_web_context_get_cookie_manager", (void **)&wk.web_context_get_cookie_manager},
        {webkit, "webkit_cookie_manager_set_persistent_storage", (void **)&wk.cookie_manager_set_persistent_storage},
        {webkit, "webkit_web_context_get_website_data_manager", (void **)&wk.web_context_get_website_data_manager},
        {webkit, "webkit_memory_pressure_settings_new", (void **)&wk.memory_pressure_settings_new},
        {webkit, "webkit_memory_pressure_settings_set_memory_limit", (void **)&wk.memory_pressure_settings_set_memory_limit},
        {webkit, "webkit_memory_pressure_settings_set_kill_threshold", (void **)&wk.memory_pressure_settings_set_kill_threshold},
        {webkit, "webkit_memory_pressure_settings_free", (void **)&wk.memory_pressure_settings_free},
        {webkit, "webkit_memory_pressure_settings_set_poll_interval", (void **)&wk.memory_pressure_settings_set_poll_interval},
        {webkit, "webkit_web_view_run_javascript", (void **)&wk.web_view_run_javascript},
        {webkit, "webkit_web_view_run_javascript_finish", (void **)&wk.web_view_run_javascript_finish},
        {webkit, "webkit_javascript_result_get_js_value", (void **)&wk.javascript_result_get_js_value},
        {webkit, "webkit_javascript_result_unref", (void **)&wk.javascript_result_unref},
        {webkit, "jsc_value_to_string", (void **)&wk.js_value_to_string},
        {webkit, "webkit_web_view_get_uri", (void **)&wk.web_view_get_uri},
        {webkit, "webkit_user_content_manager_register_script_message_handler",
         (void **)&wk.user_content_manager_register_script_message_handler},
        {webkit, "webkit_user_script_new", (void **)&wk.user_script_new},
        {webkit, "webkit_user_content_manager_add_script", (void **)&wk.user_content_manager_add_script},
        {webkit, "webkit_user_script_unref", (void **)&wk.user_script_unref},
        {webkit, "webkit_web_context_new_with_website_data_manager", (void **)&wk.web_context_new_with_data_manager},
        {webkit, "webkit_web_view_backend_new", (void **)&wk.web_view_backend_new},
        {webkit, "webkit_web_view_new_with_context", (void **)&wk.web_view_new_with_context},
        {webkit, "webkit_web_view_load_uri", (void **)&wk.web_view_load_uri},
        {webkit, "webkit_web_view_reload", (void **)&wk.web_view_reload},
        {webkit, "webkit_web_view_set_zoom_level", (void **)&wk.web_view_set_zoom_level},
        {webkit, "webkit_web_view_set_background_color", (void **)&wk.web_view_set_background_color},
        {webkit, "webkit_web_view_get_settings", (void **)&wk.web_view_get_settings},
        {webkit, "webkit_settings_set_user_agent", (void **)&wk.settings_set_user_agent},
        {webkit, "webkit_web_view_terminate_web_process", (void **)&wk.web_view_terminate_web_process},
        {webkit, "webkit_web_view_get_user_content_manager", (void **)&wk.web_view_get_user_content_manager},
        {webkit, "webkit_user_style_sheet_new", (void **)&wk.user_style_sheet_new},
        {webkit, "webkit_user_content_manager_add_style_sheet", (void **)&wk.user_content_manager_add_style_sheet},
        {webkit, "webkit_user_style_sheet_unref", (void **)&wk.user_style_sheet_unref},
        {webkit, "webkit_navigation_policy_decision_get_navigation_action",
         (void **)&wk.navigation_policy_decision_get_navigation_action},
        {webkit, "webkit_navigation_action_get_request", (void **)&wk.navigation_action_get_request},
        {webkit, "webkit_uri_request_get_uri", (void **)&wk.uri_request_get_uri},
        {webkit, "webkit_policy_decision_ignore", (void **)&wk.policy_decision_ignore},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(symbols[i].library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(load_failure, sizeof load_failure, "WPE WebKit has no %s (WPE WebKit 2.38 and WPEBackend-fdo "
                     "1.14 or later are needed)", symbols[i].name);
            return;
        }
    }
}

int kiosk_web_load(char *error, size_t error_size) {
    pthread_once(&load_once, load_webkit);
    if (load_failure[0]) {
        if (error && error_size) snprintf(error, error_size, "%s", load_failure);
        return 0;
    }
    return 1;
}

// The web thread: a GLib main context of its own, made by the first view's caller (so nothing waits for the thread
// to start) and run by the thread. WebKit is initialised there, by the first task queued.
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static void *web_context_main;  // GMainContext of the web thread
static void *web_context;       // WebKitWebContext, made on the web thread

static void *run_web_thread(void *unused) {
    (void)unused;
    // Named, so that its CPU time can be told apart from kioskd's own (kioskd bench --scenario web).
    pthread_setname_np(pthread_self(), "kioskd-web");
    wk.main_context_push_thread_default(web_context_main);
    wk.main_loop_run(wk.main_loop_new(web_context_main, 0));
    return NULL;
}

// kiosk_web_configure's settings, read once by the web thread when it makes the web context.
static pthread_mutex_t configuration_lock = PTHREAD_MUTEX_INITIALIZER;
static char *configured_data_directory;
static unsigned configured_memory_limit_mb;

void kiosk_web_configure(const char *data_directory, unsigned memory_limit_mb) {
    pthread_mutex_lock(&configuration_lock);
    free(configured_data_directory);
    configured_data_directory = data_directory ? strdup(data_directory) : NULL;
    configured_memory_limit_mb = memory_limit_mb;
    pthread_mutex_unlock(&configuration_lock);
}

static int initialise_on_web_thread(void *unused) {
    (void)unused;
    wk.loader_init("libWPEBackend-fdo-1.0.so.1");
    wk.fdo_initialize_shm();
    pthread_mutex_lock(&configuration_lock);
    char *directory = configured_data_directory ? strdup(configured_data_directory) : NULL;
    unsigned limit = configured_memory_limit_mb;
    pthread_mutex_unlock(&configuration_lock);
    void *manager;
    if (directory) {
        char data[4096], cache[4096];
        snprintf(data, sizeof data, "%s/data", directory);
        snprintf(cache, sizeof cache, "%s/cache", directory);
        manager = wk.data_manager_new("base-data-directory", data, "base-cache-directory", cache, NULL);
    } else {
        // Nowhere to keep them: no cookies, cache or local storage on disk; a restart starts clean.
        manager = wk.data_manager_new_ephemeral();
    }
    void *settings = NULL;
    if (limit > 0) {
        settings = wk.memory_pressure_settings_new();
        wk.memory_pressure_settings_set_memory_limit(settings, limit);
        // Over the limit the web process is ended (WebKit reports it as over its memory limit), not the kiosk.
        wk.memory_pressure_settings_set_kill_threshold(settings, 1.0);
        // Checked every 2 s (WebKit's default is 30 s): a page running away is caught before the board swaps.
        wk.memory_pressure_settings_set_poll_interval(settings, 2.0);
    }
    web_context = settings
        ? wk.object_new(wk.web_context_get_type(), "website-data-manager", manager, "memory-pressure-settings",
                        settings, NULL)
        : wk.object_new(wk.web_context_get_type(), "website-data-manager", manager, NULL);
    if (settings) wk.memory_pressure_settings_free(settings);
    wk.object_unref(manager);
    if (directory) {
        char cookies[4096];
        snprintf(cookies, sizeof cookies, "%s/cookies.sqlite", directory);
        // WEBKIT_COOKIE_PERSISTENT_STORAGE_SQLITE
        wk.cookie_manager_set_persistent_storage(wk.web_context_get_cookie_manager(web_context), cookies, 1);
    }
    free(directory);
    return 0;
}

static int clear_data_on_web_thread(void *unused) {
    (void)unused;
    // WEBKIT_WEBSITE_DATA_ALL, of any age.
    if (web_context)
        wk.data_manager_clear(wk.web_context_get_website_data_manager(web_context), (1u << 14) - 1, 0, NULL, NULL, NULL);
    return 0;
}

static void queue(GSourceFuncABI function, void *data);

static void start_web_thread(void) {
    web_context_main = wk.main_context_new();
    queue(initialise_on_web_thread, NULL);
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attributes, run_web_thread, NULL);
    pthread_attr_destroy(&attributes);
}

// Tasks for the web thread, in order, behind a lock of kioskd's own: GLib's context queue would order them too, but
// its locks are futexes that ThreadSanitizer cannot see, and this hand-over (every field a task reads was written
// before it was queued) is the one the tsan tier checks.
typedef struct QueuedTask {
    GSourceFuncABI function;
    void *data;
    struct QueuedTask *next;
} QueuedTask;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static QueuedTask *queue_head, *queue_tail;

static int drain_queue(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        QueuedTask *t = queue_head;
        if (t) {
            queue_head = t->next;
            if (!queue_head) queue_tail = NULL;
        }
        pthread_mutex_unlock(&queue_lock);
        if (!t) return 0;
        t->function(t->data);
        free(t);
    }
}

static void queue(GSourceFuncABI function, void *data) {
    QueuedTask *t = calloc(1, sizeof *t);
    if (!t) return;
    t->function = function;
    t->data = data;
    pthread_mutex_lock(&queue_lock);
    if (queue_tail) queue_tail->next = t; else queue_head = t;
    queue_tail = t;
    pthread_mutex_unlock(&queue_lock);
    // One drain per task queued; a drain that finds the queue empty (an earlier one took its task) does nothing.
    wk.main_context_invoke_full(web_context_main, 0, drain_queue, NULL, NULL);
}

void kiosk_web_clear_data(void) {
    if (!kiosk_web_load(NULL, 0)) return;
    pthread_once(&thread_once, start_web_thread);
    queue(clear_data_on_web_thread, NULL);
}

struct KioskWebView {
    kiosk_web_callbacks callbacks;
    void *context;
    char *url;
    kiosk_web_options options;
    char *user_agent;
    char *allowed_origins;
    void *exportable;
    void *backend;
    void *view;
    // The last frame handed over, to find what the next one changed.
    uint8_t *previous;
    int previous_width, previous_height;
    // The load under way failed: WebKit still says it finished, which is no success.
    int load_failed;
    // Scripts whose answer has not come; a view closed meanwhile is freed after the last.
    int scripts_pending;
    int closing;
    // The address whose origin the bridge answers (the widget's own), when the page has the bridge.
    char *bridge_origin;
    void *content_manager;
    // The hang watch: the loaded page's ping timer, and when the unanswered ping went (0: none waiting).
    int loaded;
    void *ping_timer;
    int64_t ping_sent_us;
};

static void free_view(KioskWebView *v);
static char *copy(const char *text);

// A task for the web thread with its arguments.
typedef struct {
    KioskWebView *view;
    int kind, x, y, width, height;
    uint32_t time;
    uint64_t id;
    char *text;
} Task;

static Task *task(KioskWebView *view) {
    Task *t = calloc(1, sizeof *t);
    if (t) t->view = view;
    return t;
}

// The rectangle of pixels that differ between two frames of one size; 0 when none differ.
static int changed_rectangle(const uint8_t *old, const uint8_t *new, int width, int height, int stride, int *x0,
                             int *y0, int *x1, int *y1) {
    int top = -1, bottom = -1, left = width, right = -1;
    for (int y = 0; y < height; y++) {
        const uint32_t *a = (const uint32_t *)(old + (size_t)y * width * 4);
        const uint32_t *b = (const uint32_t *)(new + (size_t)y * stride);
        if (memcmp(a, b, (size_t)width * 4) == 0) continue;
        if (top < 0) top = y;
        bottom = y;
        int l = 0, r = width - 1;
        while (l < width && a[l] == b[l]) l++;
        while (r > l && a[r] == b[r]) r--;
        if (l < left) left = l;
        if (r > right) right = r;
    }
    if (top < 0) return 0;
    *x0 = left; *y0 = top; *x1 = right + 1; *y1 = bottom + 1;
    return 1;
}

static void export_shm_buffer(void *data, void *exported) {
    KioskWebView *v = data;
    void *shm = wk.shm_exported_get_shm_buffer(exported);
    wk.shm_begin_access(shm);
    int width = wk.shm_get_width(shm), height = wk.shm_get_height(shm), stride = wk.shm_get_stride(shm);
    const uint8_t *pixels = wk.shm_get_data(shm);
    // WL_SHM_FORMAT_ARGB8888 (0) and XRGB8888 (1) are Cairo's ARGB32/RGB24 in memory; WPE's shm export uses them.
    int usable = pixels && width > 0 && height > 0 && stride >= width * 4 && wk.shm_get_format(shm) <= 1;
    int x0 = 0, y0 = 0, x1 = width, y1 = height, changed = usable;
    if (usable) {
        if (v->previous && v->previous_width == width && v->previous_height == height) {
            changed = changed_rectangle(v->previous, pixels, width, height, stride, &x0, &y0, &x1, &y1);
        } else {
            free(v->previous);
            v->previous = malloc((size_t)width * height * 4);
            v->previous_width = v->previous ? width : 0;
            v->previous_height = v->previous ? height : 0;
        }
        if (changed && v->previous) {
            for (int y = y0; y < y1; y++) {
                memcpy(v->previous + ((size_t)y * width + x0) * 4, pixels + (size_t)y * stride + (size_t)x0 * 4,
                       (size_t)(x1 - x0) * 4);
            }
        }
        if (changed) v->callbacks.frame(v->context, pixels, width, height, stride, x0, y0, x1 - x0, y1 - y0);
    }
    wk.shm_end_access(shm);
    wk.exportable_release_shm(v->exportable, exported);
    // An unchanged frame costs nothing downstream: WebKit may go on at once. A changed one waits for
    // `kiosk_web_view_frame_done`, so pages render no faster than they are shown.
    if (!changed) wk.exportable_frame_complete(v->exportable);
}

static void on_load_changed(void *web_view, int event, void *data) {
    (void)web_view;
    KioskWebView *v = data;
    if (event == LOAD_STARTED) {
        v->load_failed = 0;
        v->loaded = 0;
        v->ping_sent_us = 0;
    }
    if (event == LOAD_COMMITTED) {
        const char *uri = wk.web_view_get_uri(v->view);
        v->callbacks.event(v->context, KIOSK_WEB_NAVIGATED, uri ? uri : "");
    }
    if (event == LOAD_FINISHED && !v->load_failed) {
        v->loaded = 1;
        v->callbacks.event(v->context, KIOSK_WEB_LOADED, v->url ? v->url : "");
    }
}

static int on_load_failed(void *web_view, int event, const char *uri, GErrorABI *error, void *data) {
    (void)web_view; (void)event;
    KioskWebView *v = data;
    // A load replaced by another is not a failure.
    if (error && error->domain == wk.network_error_quark() && error->code == NETWORK_ERROR_CANCELLED) return 1;
    v->load_failed = 1;
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", uri ? uri : "(page)", error && error->message ? error->message : "failed");
    v->callbacks.event(v->context, KIOSK_WEB_LOAD_FAILED, message);
    return 1;  // handled: no error page over the last frame shown
}

static void on_web_process_terminated(void *web_view, int reason, void *data) {
    (void)web_view;
    KioskWebView *v = data;
    v->loaded = 0;
    v->ping_sent_us = 0;
    const char *why = reason == 0 ? "the web process crashed"
        : reason == 1 ? "the web process exceeded its memory limit" : "the web process was terminated";
    v->callbacks.event(v->context, KIOSK_WEB_PROCESS_GONE, why);
}

// "scheme://host[:port]" of `uri` into `out`; 0 when the URI has none (about:, data:).
static int origin_of(const char *uri, char *out, size_t size) {
    const char *scheme_end = strstr(uri, "://");
    if (!scheme_end) return 0;
    const char *host = scheme_end + 3;
    size_t length = (size_t)(host - uri) + strcspn(host, "/?#");
    if (length + 1 > size) return 0;
    memcpy(out, uri, length);
    out[length] = 0;
    return 1;
}

static int origin_allowed(KioskWebView *v, const char *uri) {
    if (!v->allowed_origins) return 1;
    if (strncmp(uri, "about:", 6) == 0 || strncmp(uri, "data:", 5) == 0) return 1;
    char origin[1024], page[1024];
    if (!origin_of(uri, origin, sizeof origin)) return 0;
    if (v->url && origin_of(v->url, page, sizeof page) && strcmp(origin, page) == 0) return 1;
    for (const char *item = v->allowed_origins; *item;) {
        size_t length = strcspn(item, "\n");
        if (length == strlen(origin) && strncmp(item, origin, length) == 0) return 1;
        item += length;
        if (*item == '\n') item++;
    }
    return 0;
}

static int on_decide_policy(void *web_view, void *decision, int type, void *data) {
    (void)web_view;
    KioskWebView *v = data;
    if (type != POLICY_NAVIGATION && type != POLICY_NEW_WINDOW) return 0;
    void *action = wk.navigation_policy_decision_get_navigation_action(decision);
    const char *uri = action ? wk.uri_request_get_uri(wk.navigation_action_get_request(action)) : NULL;
    // A kiosk opens no windows; a navigation stays within the allowed origins.
    if (type == POLICY_NEW_WINDOW || (uri && !origin_allowed(v, uri))) {
        v->callbacks.event(v->context, KIOSK_WEB_NAVIGATION_REFUSED, uri ? uri : "(unknown)");
        wk.policy_decision_ignore(decision);
        return 1;
    }
    return 0;
}

// A script of kioskd's own finished (its value is not needed): the reference taken for the call goes, and a view
// closed meanwhile is freed after its last script.
static void script_discarded(void *source, void *result, void *data) {
    KioskWebView *v = data;
    GErrorABI *error = NULL;
    void *value = wk.web_view_run_javascript_finish(source, result, &error);
    if (value) wk.javascript_result_unref(value);
    if (error) wk.error_free(error);
    wk.object_unref(source);
    if (--v->scripts_pending == 0 && v->closing) free_view(v);
}

static void ping_answered(void *source, void *result, void *data) {
    KioskWebView *v = data;
    if (!v->closing) v->ping_sent_us = 0;
    script_discarded(source, result, data);
}

static int ping_tick(void *data) {
    KioskWebView *v = data;
    if (v->closing || !v->loaded) return 1;
    int64_t now = wk.get_monotonic_time();
    if (v->ping_sent_us) {
        if (now - v->ping_sent_us < (int64_t)v->options.hang_timeout_ms * 1000) return 1;
        char message[128];
        snprintf(message, sizeof message, "the page answered no ping for %d ms", v->options.hang_timeout_ms);
        v->loaded = 0;
        v->ping_sent_us = 0;
        v->callbacks.event(v->context, KIOSK_WEB_HUNG, message);
        wk.web_view_terminate_web_process(v->view);
        return 1;
    }
    v->ping_sent_us = now;
    v->scripts_pending++;
    wk.web_view_run_javascript(wk.object_ref(v->view), "1", NULL, (void *)ping_answered, v);
    return 1;  // G_SOURCE_CONTINUE
}

// `window.kioskd`, put in the top frame of every document before its own scripts run.
static const char bridge_script[] =
    "(function () {"
    "  if (window.kioskd || !window.webkit || !window.webkit.messageHandlers || !window.webkit.messageHandlers.kioskd) return;"
    "  const handlers = {}; const data = {};"
    "  Object.defineProperty(window, 'kioskd', { value: Object.freeze({"
    "    data: data,"
    "    on: function (key, fn) { (handlers[key] = handlers[key] || []).push(fn); if (key in data) fn(data[key]); },"
    "    emit: function (action, payload) {"
    "      window.webkit.messageHandlers.kioskd.postMessage(JSON.stringify({ action: String(action),"
    "        payload: payload === undefined ? null : payload })); },"
    "    _set: function (values) { for (const key in values) { data[key] = values[key];"
    "      (handlers[key] || []).forEach(function (fn) { try { fn(values[key]); } catch (e) {} }); } }"
    "  }) });"
    "})();";

// The page at its own origin (the widget's address's) or an allowed one: where the bridge answers.
static int bridge_allowed(KioskWebView *v) {
    const char *uri = wk.web_view_get_uri(v->view);
    if (!uri) return 0;
    char origin[1024], own[1024];
    if (!origin_of(uri, origin, sizeof origin)) return 0;
    if (v->bridge_origin && origin_of(v->bridge_origin, own, sizeof own) && strcmp(origin, own) == 0) return 1;
    return v->allowed_origins && origin_allowed(v, uri);
}

static void on_bridge_message(void *manager, void *result, void *data) {
    (void)manager;
    KioskWebView *v = data;
    if (v->closing || !bridge_allowed(v)) return;
    char *text = wk.js_value_to_string(wk.javascript_result_get_js_value(result));
    if (text && strlen(text) <= 65536) v->callbacks.event(v->context, KIOSK_WEB_MESSAGE, text);
    if (text) wk.free(text);
}

// The page's tab stops in the order Tab visits them (positive tabindex first, then document order): a JavaScript
// function expression shared by the two scripts below.
#define TAB_STOPS_SCRIPT \
    "function () {" \
    "  var all = Array.prototype.filter.call(document.querySelectorAll('a[href], area[href], button, input, select, " \
    "textarea, iframe, summary, [tabindex], [contenteditable]'), function (e) {" \
    "    return e.tabIndex >= 0 && !e.disabled && !(e.tagName === 'INPUT' && e.type === 'hidden') && " \
    "e.getClientRects().length > 0; });" \
    "  return all.filter(function (e) { return e.tabIndex > 0; }).sort(function (a, b) { return a.tabIndex - b.tabIndex; })" \
    "    .concat(all.filter(function (e) { return e.tabIndex === 0; }));" \
    "}"

// In the top frame of every document: Tab on the page's last tab stop (Shift-Tab on its first, or either on a page
// with none) does not wrap inside the page but tells kioskd, whose focus ring moves on to the next widget.
static const char focus_script[] =
    "(function () {"
    "  if (!window.webkit || !window.webkit.messageHandlers || !window.webkit.messageHandlers.kioskdFocus) return;"
    "  var stops = " TAB_STOPS_SCRIPT ";"
    "  document.addEventListener('keydown', function (event) {"
    "    if (event.key !== 'Tab' || event.ctrlKey || event.altKey || event.metaKey) return;"
    "    var list = stops(), at = list.indexOf(document.activeElement);"
    "    if (list.length && (event.shiftKey ? at !== 0 : at !== list.length - 1)) return;"
    "    event.preventDefault();"
    "    window.webkit.messageHandlers.kioskdFocus.postMessage(event.shiftKey ? 'backward' : 'forward');"
    "  }, true);"
    "})();";

// The focus ring entered the page: its first tab stop (its last, going backwards) takes the focus.
static const char focus_enter_script[] =
    "(function (backwards) {"
    "  var list = (" TAB_STOPS_SCRIPT ")();"
    "  var e = list.length ? list[backwards ? list.length - 1 : 0] : null;"
    "  if (e) e.focus(); else if (document.activeElement && document.activeElement.blur) document.activeElement.blur();"
    "})(%s)";

static void on_focus_message(void *manager, void *result, void *data) {
    (void)manager;
    KioskWebView *v = data;
    if (v->closing) return;
    char *text = wk.js_value_to_string(wk.javascript_result_get_js_value(result));
    int backwards = text && strcmp(text, "backward") == 0;
    if (text) wk.free(text);
    v->callbacks.event(v->context, KIOSK_WEB_FOCUS_LEFT, backwards ? "backward" : "forward");
}

static void destroy_exportable(void *exportable) {
    wk.exportable_destroy(exportable);
}

static int create_on_web_thread(void *data) {
    KioskWebView *v = data;
    static const struct exportable_client_abi client = {.export_shm_buffer = export_shm_buffer};
    v->exportable = wk.exportable_create(&client, v, (uint32_t)v->options.width, (uint32_t)v->options.height);
    v->backend = wk.exportable_get_view_backend(v->exportable);
    wk.view_backend_add_activity_state(v->backend, ACTIVITY_VISIBLE | ACTIVITY_FOCUSED | ACTIVITY_IN_WINDOW);
    void *view_backend = wk.web_view_backend_new(v->backend, destroy_exportable, v->exportable);
    v->view = wk.web_view_new_with_context(view_backend, web_context);
    WebKitColorABI colour = {v->options.background_red, v->options.background_green, v->options.background_blue,
                             v->options.background_alpha};
    wk.web_view_set_background_color(v->view, &colour);
    if (v->options.zoom > 0) wk.web_view_set_zoom_level(v->view, v->options.zoom);
    if (v->user_agent) wk.settings_set_user_agent(wk.web_view_get_settings(v->view), v->user_agent);
    if (v->options.hide_scrollbars) {
        void *sheet = wk.user_style_sheet_new("::-webkit-scrollbar { display: none !important; }", 0, 0, NULL, NULL);
        wk.user_content_manager_add_style_sheet(wk.web_view_get_user_content_manager(v->view), sheet);
        wk.user_style_sheet_unref(sheet);
    }
    wk.signal_connect_data(v->view, "load-changed", (void *)on_load_changed, v, NULL, 0);
    wk.signal_connect_data(v->view, "load-failed", (void *)on_load_failed, v, NULL, 0);
    wk.signal_connect_data(v->view, "web-process-terminated", (void *)on_web_process_terminated, v, NULL, 0);
    wk.signal_connect_data(v->view, "decide-policy", (void *)on_decide_policy, v, NULL, 0);
    v->content_manager = wk.web_view_get_user_content_manager(v->view);
    wk.user_content_manager_register_script_message_handler(v->content_manager, "kioskdFocus");
    wk.signal_connect_data(v->content_manager, "script-message-received::kioskdFocus", (void *)on_focus_message, v,
                           NULL, 0);
    // WEBKIT_USER_CONTENT_INJECT_TOP_FRAME, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START
    void *focus = wk.user_script_new(focus_script, 1, 0, NULL, NULL);
    wk.user_content_manager_add_script(v->content_manager, focus);
    wk.user_script_unref(focus);
    if (v->options.bridge) {
        wk.user_content_manager_register_script_message_handler(v->content_manager, "kioskd");
        wk.signal_connect_data(v->content_manager, "script-message-received::kioskd", (void *)on_bridge_message, v, NULL, 0);
        // WEBKIT_USER_CONTENT_INJECT_TOP_FRAME, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START
        void *script = wk.user_script_new(bridge_script, 1, 0, NULL, NULL);
        wk.user_content_manager_add_script(v->content_manager, script);
        wk.user_script_unref(script);
        v->bridge_origin = copy(v->url);
    }
    wk.web_view_load_uri(v->view, v->url);
    if (v->options.ping_interval_ms > 0 && v->options.hang_timeout_ms > 0) {
        v->ping_timer = wk.timeout_source_new((unsigned)v->options.ping_interval_ms);
        wk.source_set_callback(v->ping_timer, ping_tick, v, NULL);
        wk.source_attach(v->ping_timer, web_context_main);
    }
    return 0;
}

static char *copy(const char *text) {
    return text ? strdup(text) : NULL;
}

KioskWebView *kiosk_web_view_new(const char *url, const kiosk_web_options *options, kiosk_web_callbacks callbacks,
                                 void *context) {
    if (!kiosk_web_load(NULL, 0)) return NULL;
    pthread_once(&thread_once, start_web_thread);
    KioskWebView *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->callbacks = callbacks;
    v->context = context;
    v->url = copy(url);
    v->options = *options;
    if (v->options.width < 1) v->options.width = 1;
    if (v->options.height < 1) v->options.height = 1;
    v->user_agent = copy(options->user_agent);
    v->allowed_origins = copy(options->allowed_origins);
    v->options.user_agent = NULL;
    v->options.allowed_origins = NULL;
    queue(create_on_web_thread, v);
    return v;
}

static int frame_done_on_web_thread(void *data) {
    Task *t = data;
    wk.exportable_frame_complete(t->view->exportable);
    free(t);
    return 0;
}

void kiosk_web_view_frame_done(KioskWebView *view) {
    Task *t = task(view);
    if (t) queue(frame_done_on_web_thread, t);
}

static int load_on_web_thread(void *data) {
    Task *t = data;
    if (t->text) {
        free(t->view->url);
        t->view->url = t->text;
        wk.web_view_load_uri(t->view->view, t->view->url);
    } else {
        wk.web_view_reload(t->view->view);
    }
    free(t);
    return 0;
}

void kiosk_web_view_load(KioskWebView *view, const char *url) {
    Task *t = task(view);
    if (!t) return;
    t->text = copy(url);
    queue(load_on_web_thread, t);
}

void kiosk_web_view_reload(KioskWebView *view) {
    Task *t = task(view);
    if (t) queue(load_on_web_thread, t);
}

static int resize_on_web_thread(void *data) {
    Task *t = data;
    wk.view_backend_dispatch_set_size(t->view->backend, (uint32_t)t->width, (uint32_t)t->height);
    free(t);
    return 0;
}

void kiosk_web_view_resize(KioskWebView *view, int width, int height) {
    Task *t = task(view);
    if (!t) return;
    t->width = width < 1 ? 1 : width;
    t->height = height < 1 ? 1 : height;
    queue(resize_on_web_thread, t);
}

static int pointer_on_web_thread(void *data) {
    Task *t = data;
    struct wpe_input_pointer_event_abi event = {
        .type = t->kind == 0 ? POINTER_MOTION : POINTER_BUTTON, .time = t->time, .x = t->x, .y = t->y,
        .button = t->kind == 0 ? 0 : 1, .state = t->kind == 1 ? 1 : 0,
        .modifiers = t->kind == 1 ? POINTER_BUTTON1_MODIFIER : 0,
    };
    wk.view_backend_dispatch_pointer_event(t->view->backend, &event);
    free(t);
    return 0;
}

void kiosk_web_view_pointer(KioskWebView *view, int kind, int x, int y, uint32_t time_ms) {
    Task *t = task(view);
    if (!t) return;
    t->kind = kind;
    t->x = x;
    t->y = y;
    t->time = time_ms;
    queue(pointer_on_web_thread, t);
}

static int key_on_web_thread(void *data) {
    Task *t = data;
    // The system's default keymap (XKB_DEFAULT_LAYOUT and friends, else us), kept by libwpe for the process; its
    // state follows every key given to any page, so a Shift held makes capitals.
    void *xkb = wk.xkb_context_get_default();
    uint32_t keycode = (uint32_t)t->x + XKB_EVDEV_OFFSET;
    int pressed = t->kind;
    // The key's symbol under the modifiers held before it (libwpe makes the keymap at its first use).
    uint32_t symbol = wk.xkb_context_get_key_code(xkb, keycode, pressed);
    void *state = wk.xkb_context_get_state(xkb);
    uint32_t modifiers = 0;
    if (state) {
        wk.xkb_state_update_key(state, keycode, pressed ? XKB_KEY_DOWN : XKB_KEY_UP);
        modifiers = wk.xkb_context_get_modifiers(xkb, wk.xkb_state_serialize_mods(state, XKB_STATE_MODS_DEPRESSED),
                                                 wk.xkb_state_serialize_mods(state, XKB_STATE_MODS_LATCHED),
                                                 wk.xkb_state_serialize_mods(state, XKB_STATE_MODS_LOCKED),
                                                 wk.xkb_state_serialize_layout(state, XKB_STATE_LAYOUT_EFFECTIVE));
    }
    struct wpe_input_keyboard_event_abi event = {
        .time = t->time, .key_code = symbol, .hardware_key_code = keycode, .pressed = pressed != 0,
        .modifiers = modifiers,
    };
    wk.view_backend_dispatch_keyboard_event(t->view->backend, &event);
    free(t);
    return 0;
}

void kiosk_web_view_key(KioskWebView *view, uint32_t code, int pressed, uint32_t time_ms) {
    Task *t = task(view);
    if (!t) return;
    t->x = (int)code;
    t->kind = pressed ? 1 : 0;
    t->time = time_ms;
    queue(key_on_web_thread, t);
}

static int focus_on_web_thread(void *data) {
    Task *t = data;
    char script[sizeof focus_enter_script + 8];
    snprintf(script, sizeof script, focus_enter_script, t->kind ? "true" : "false");
    t->view->scripts_pending++;
    wk.web_view_run_javascript(wk.object_ref(t->view->view), script, NULL, (void *)script_discarded, t->view);
    free(t);
    return 0;
}

void kiosk_web_view_focus(KioskWebView *view, int backwards) {
    Task *t = task(view);
    if (!t) return;
    t->kind = backwards ? 1 : 0;
    queue(focus_on_web_thread, t);
}

static int terminate_on_web_thread(void *data) {
    Task *t = data;
    wk.web_view_terminate_web_process(t->view->view);
    free(t);
    return 0;
}

void kiosk_web_view_terminate_process(KioskWebView *view) {
    Task *t = task(view);
    if (t) queue(terminate_on_web_thread, t);
}

static void free_view(KioskWebView *v) {
    v->callbacks.closed(v->context);
    free(v->url);
    free(v->user_agent);
    free(v->allowed_origins);
    free(v->bridge_origin);
    free(v->previous);
    free(v);
}

static void script_finished(void *source, void *result, void *data) {
    Task *t = data;
    KioskWebView *v = t->view;
    GErrorABI *error = NULL;
    void *value = wk.web_view_run_javascript_finish(source, result, &error);
    if (!v->closing) {
        if (value) {
            char *text = wk.js_value_to_string(wk.javascript_result_get_js_value(value));
            v->callbacks.script(v->context, t->id, 1, text ? text : "");
            if (text) wk.free(text);
        } else {
            v->callbacks.script(v->context, t->id, 0, error && error->message ? error->message : "the script failed");
        }
    }
    if (value) wk.javascript_result_unref(value);
    if (error) wk.error_free(error);
    wk.object_unref(source);  // the reference taken for the call
    free(t->text);
    free(t);
    if (--v->scripts_pending == 0 && v->closing) free_view(v);
}

static int evaluate_on_web_thread(void *data) {
    Task *t = data;
    t->view->scripts_pending++;
    wk.web_view_run_javascript(wk.object_ref(t->view->view), t->text, NULL, (void *)script_finished, t);
    return 0;
}

void kiosk_web_view_evaluate(KioskWebView *view, uint64_t id, const char *script) {
    Task *t = task(view);
    if (!t) return;
    t->id = id;
    t->text = copy(script ? script : "");
    queue(evaluate_on_web_thread, t);
}

static int close_on_web_thread(void *data) {
    KioskWebView *v = data;
    // G_SIGNAL_MATCH_DATA (16): every handler connected with this view as its data.
    wk.signal_handlers_disconnect_matched(v->view, 16, 0, 0, NULL, NULL, v);
    if (v->content_manager) wk.signal_handlers_disconnect_matched(v->content_manager, 16, 0, 0, NULL, NULL, v);
    v->closing = 1;
    if (v->ping_timer) {
        wk.source_destroy(v->ping_timer);
        wk.source_unref(v->ping_timer);
        v->ping_timer = NULL;
    }
    // Scripts still waiting hold the view: end its web process so that they finish (with an error).
    if (v->scripts_pending > 0) wk.web_view_terminate_web_process(v->view);
    // The last reference but the scripts': the view, its backend and (through destroy_exportable) the exportable go.
    wk.object_unref(v->view);
    if (v->scripts_pending == 0) free_view(v);
    return 0;
}

void kiosk_web_view_close(KioskWebView *view) {
    queue(close_on_web_thread, view);
}
