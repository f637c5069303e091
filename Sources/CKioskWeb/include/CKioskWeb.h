#ifndef CKIOSKWEB_H
#define CKIOSKWEB_H
#include <stddef.h>
#include <stdint.h>

// WPE WebKit, loaded with dlopen when the first `web` widget is made rather than linked: WebKit, its backend and
// what they bring (ICU, libsoup, GStreamer, HarfBuzz and more) are tens of megabytes that a kiosk without a web
// page never maps. Only the calls kioskd makes are resolved; their declarations are in web.c.
//
// Every WebKit call runs on one thread of its own (the web thread, started with the first view), which runs a GLib
// main loop for WebKit; the functions below only queue work for it and never wait. Callbacks run on the web thread.

/// One web page shown in a widget; made by `kiosk_web_view_new`, freed with `kiosk_web_view_close`.
typedef struct KioskWebView KioskWebView;

/// What happened to a page (`kiosk_web_callbacks.event`).
enum {
    /// The page finished loading.
    KIOSK_WEB_LOADED = 1,
    /// The page could not be loaded; the message says why (WebKit's error, the URL).
    KIOSK_WEB_LOAD_FAILED = 2,
    /// The web process ended without being asked to (a crash, or killed); the message says how.
    KIOSK_WEB_PROCESS_GONE = 3,
    /// A navigation to an origin the widget does not allow was refused; the message is its URL.
    KIOSK_WEB_NAVIGATION_REFUSED = 4,
    /// The page's main frame went to a new address (a load, a link, a redirect, a script); the message is it.
    KIOSK_WEB_NAVIGATED = 5,
    /// The loaded page answered no ping for `hang_timeout_ms`: its web process is being ended (KIOSK_WEB_PROCESS_GONE
    /// follows). The message says for how long.
    KIOSK_WEB_HUNG = 6,
    /// The page's bridge sent a message (`window.kioskd.emit`): its text, a JSON object {action, payload}.
    KIOSK_WEB_MESSAGE = 7,
    /// Tab went past the page's last tab stop (Shift-Tab before its first; either on a page with none): the keyboard
    /// focus leaves the page. The message is "forward" or "backward".
    KIOSK_WEB_FOCUS_LEFT = 8,
};

typedef struct {
    /// A frame of the page: premultiplied ARGB32 in native byte order, `stride` bytes a row, readable only during
    /// the call; (`damage_x`, `damage_y`, `damage_width`, `damage_height`) bounds the pixels that differ from the
    /// view's previous frame (the whole frame for the first). No further frame comes until `kiosk_web_view_frame_done`.
    void (*frame)(void *context, const uint8_t *pixels, int width, int height, int stride,
                  int damage_x, int damage_y, int damage_width, int damage_height);
    /// A KIOSK_WEB_* event with its message (never NULL).
    void (*event)(void *context, int kind, const char *message);
    /// The view is closed: no callback with `context` follows. Called once, on the web thread.
    void (*closed)(void *context);
    /// The script `id` of `kiosk_web_view_evaluate` ran: `ok` 1 with its value as text, else 0 with the error.
    void (*script)(void *context, uint64_t id, int ok, const char *text);
} kiosk_web_callbacks;

typedef struct {
    int width, height;
    /// 1.0 is the page's own size.
    double zoom;
    /// The page's background where it draws none (0...1 each; alpha 0 is transparent).
    double background_red, background_green, background_blue, background_alpha;
    /// NULL for WebKit's own.
    const char *user_agent;
    /// Origins ("https://host[:port]") navigations may go to, separated by '\n'; NULL allows any.
    const char *allowed_origins;
    int hide_scrollbars;
    /// While the page is loaded, a ping (a one-line script) goes to it every `ping_interval_ms` on the web thread;
    /// one unanswered for `hang_timeout_ms` ends the web process. 0 turns the watch off.
    int ping_interval_ms, hang_timeout_ms;
    /// Gives the page `window.kioskd` (data, on, emit) while it is at its own origin or an allowed one.
    int bridge;
} kiosk_web_options;

/// Loads WPE WebKit once per process (thread-safe). Returns 1 when it is usable, else 0 with the reason in `error`
/// (always NUL-terminated): a library or a symbol missing.
int kiosk_web_load(char *error, size_t error_size);

/// What every view of the process shares, set before the first view (later calls change nothing): where cookies,
/// local storage and caches persist (NULL: nowhere, each start is clean) and the web process's memory limit in
/// megabytes (0: WebKit's own), over which it is ended (and reported as KIOSK_WEB_PROCESS_GONE).
void kiosk_web_configure(const char *data_directory, unsigned memory_limit_mb);

/// Removes cookies, storage and caches of every page (asynchronously, on the web thread).
void kiosk_web_clear_data(void);

/// A view of `options`' size loading `url`. Returns NULL only when WPE WebKit cannot be loaded (see
/// `kiosk_web_load`). The strings are copied.
KioskWebView *kiosk_web_view_new(const char *url, const kiosk_web_options *options, kiosk_web_callbacks callbacks,
                                 void *context);
/// The frame handed to `callbacks.frame` is shown: WebKit may render the next.
void kiosk_web_view_frame_done(KioskWebView *view);
void kiosk_web_view_load(KioskWebView *view, const char *url);
/// Loads the page again (also after its web process ended: WebKit starts a new one).
void kiosk_web_view_reload(KioskWebView *view);
void kiosk_web_view_resize(KioskWebView *view, int width, int height);
/// A pointer event in the view's pixels: `kind` 0 motion, 1 press, 2 release (of the primary button).
void kiosk_web_view_pointer(KioskWebView *view, int kind, int x, int y, uint32_t time_ms);
/// A key of a keyboard, by the kernel's key code (linux/input-event-codes.h), pressed (1) or released (0): mapped
/// through the system's default xkb keymap to a key symbol with the modifiers held, and given to the page's
/// focused element.
void kiosk_web_view_key(KioskWebView *view, uint32_t code, int pressed, uint32_t time_ms);
/// The keyboard focus enters the page: its first tab stop takes it (its last when `backwards` is 1).
void kiosk_web_view_focus(KioskWebView *view, int backwards);
/// Runs `script` in the page's main frame; `callbacks.script` follows with `id` (also when the view is closed
/// first, with ok 0), unless the web process never answers.
void kiosk_web_view_evaluate(KioskWebView *view, uint64_t id, const char *script);
/// Ends the web process of the view (as a crash would): a hung page, and tests.
void kiosk_web_view_terminate_process(KioskWebView *view);
/// Closes the view; `callbacks.closed` follows on the web thread, and nothing else does.
void kiosk_web_view_close(KioskWebView *view);

#endif
