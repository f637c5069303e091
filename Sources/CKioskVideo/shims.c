#include "CKioskVideo.h"
#include "GstLibrary.h"
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

void kiosk_gst_set_string(GstElement *element, const char *property, const char *value) {
    g_object_set(G_OBJECT(element), property, value, NULL);
}

void kiosk_gst_set_double(GstElement *element, const char *property, double value) {
    g_object_set(G_OBJECT(element), property, value, NULL);
}

void kiosk_gst_set_uint(GstElement *element, const char *property, unsigned int value) {
    g_object_set(G_OBJECT(element), property, (guint)value, NULL);
}

void kiosk_gst_set_element(GstElement *element, const char *property, GstElement *value) {
    g_object_set(G_OBJECT(element), property, value, NULL);
}

const char *kiosk_gst_message_source_name(GstMessage *message) {
    return GST_MESSAGE_SRC(message) != NULL ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : NULL;
}

int kiosk_gst_lower_entering_stream_thread(GstMessage *message, int increment) {
    if (GST_MESSAGE_TYPE(message) != GST_MESSAGE_STREAM_STATUS) return 0;
    GstStreamStatusType type;
    GstElement *owner = NULL;
    kiosk_gst_api()->gst_message_parse_stream_status(message, &type, &owner);
    if (type != GST_STREAM_STATUS_TYPE_ENTER) return 0;
    if (owner != NULL) {
        GstElementFactory *factory = kiosk_gst_api()->gst_element_get_factory(owner);
        const char *klass = factory != NULL ? kiosk_gst_api()->gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
        if (klass != NULL && strstr(klass, "Audio") != NULL) return 0;
    }
    // Relative to the main thread (whose id is the process id), not to this thread: GStreamer's task pool reuses
    // its threads, so a thread may enter many times.
    errno = 0;
    int base = getpriority(PRIO_PROCESS, (id_t)getpid());
    if (base == -1 && errno != 0) return 0;
    int wanted = base + increment > 19 ? 19 : base + increment;
    return setpriority(PRIO_PROCESS, 0, wanted) == 0 ? 1 : 0;
}

void kiosk_gst_connect_about_to_finish(GstElement *playbin, void (*callback)(GstElement *, void *), void *data,
                                       void (*destroy)(void *)) {
    g_signal_connect_data(playbin, "about-to-finish", G_CALLBACK(callback), data, (GClosureNotify)(void (*)(void))destroy, 0);
}

// Weak: resolved only when the ThreadSanitizer runtime is linked in.
extern void __tsan_release(void *address) __attribute__((weak));
extern void __tsan_acquire(void *address) __attribute__((weak));

void kiosk_tsan_release(const void *address) {
    if (__tsan_release) __tsan_release((void *)address);
}

void kiosk_tsan_acquire(const void *address) {
    if (__tsan_acquire) __tsan_acquire((void *)address);
}
