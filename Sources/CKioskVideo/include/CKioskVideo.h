#ifndef CKIOSKVIDEO_H
#define CKIOSKVIDEO_H
#include <stdint.h>
#include <gst/gst.h>
#include "GstLibrary.h"

// g_object_set and g_object_get are variadic, which Swift cannot call: one typed setter per value kind kioskd sets.
void kiosk_gst_set_string(GstElement *element, const char *property, const char *value);
void kiosk_gst_set_double(GstElement *element, const char *property, double value);
void kiosk_gst_set_uint(GstElement *element, const char *property, unsigned int value);
void kiosk_gst_set_element(GstElement *element, const char *property, GstElement *value);

// GST_MESSAGE_SRC is a macro over a cast; the name of the element that posted a message, or NULL.
const char *kiosk_gst_message_source_name(GstMessage *message);

// On a STREAM_STATUS message of kind ENTER (posted by a streaming thread as it starts, on that thread), sets the
// calling thread's nice value to the main thread's plus `increment` unless the thread belongs to an audio element (a sound card's ring
// buffer must not starve). Threads the decoder starts from there inherit it. Returns 1 when it did.
int kiosk_gst_lower_entering_stream_thread(GstMessage *message, int increment);

// Connects `callback` to playbin's `about-to-finish` signal (emitted on a streaming thread when the current clip's
// data has all been read, so that the next URI can be set for gapless playback), with `data` given to it and
// `destroy` called on `data` when the signal is disconnected or the element goes.
void kiosk_gst_connect_about_to_finish(GstElement *playbin, void (*callback)(GstElement *, void *), void *data,
                                       void (*destroy)(void *));

// ThreadSanitizer's happens-before annotations, for a pointer handed to GStreamer's threads through GLib, whose locks
// the sanitizer cannot see (they are futexes, not pthread mutexes). No-ops unless the sanitizer's runtime is linked.
void kiosk_tsan_release(const void *address);
void kiosk_tsan_acquire(const void *address);

#endif
