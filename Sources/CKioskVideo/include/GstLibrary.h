#ifndef KIOSK_GST_LIBRARY_H
#define KIOSK_GST_LIBRARY_H
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/base/gstbasesink.h>
#include <gst/video/video.h>

// GStreamer is loaded with dlopen when the first video player is made, not linked: a kiosk whose scenes have no
// video does not map its eleven libraries (about 1.3 MB of resident memory at startup), and a machine without
// GStreamer runs every other scene and names what is missing at the video widget. Every GStreamer function kioskd
// calls is in this table; the types and macros still come from GStreamer's headers.
#define KIOSK_GST_FUNCTIONS(X) \
    X(gst_init) \
    X(gst_app_sink_pull_preroll) X(gst_app_sink_pull_sample) X(gst_app_sink_set_callbacks) \
    X(gst_base_sink_get_latency) X(gst_bin_get_by_name) X(gst_buffer_map) X(gst_buffer_unmap) \
    X(gst_bus_set_sync_handler) X(gst_clock_get_time) \
    X(gst_element_factory_find) X(gst_element_factory_get_metadata) X(gst_element_factory_make) \
    X(gst_element_get_base_time) X(gst_element_get_bus) X(gst_element_get_clock) X(gst_element_get_factory) \
    X(gst_element_query_duration) X(gst_element_query_position) X(gst_element_seek_simple) \
    X(gst_element_set_state) X(gst_filename_to_uri) X(gst_message_parse_error) X(gst_message_parse_stream_status) \
    X(gst_mini_object_unref) X(gst_object_ref_sink) X(gst_object_unref) X(gst_parse_bin_from_description) \
    X(gst_sample_get_buffer) X(gst_sample_get_caps) X(gst_sample_get_segment) X(gst_segment_to_running_time) \
    X(gst_video_info_from_caps)

#define KIOSK_GST_FIELD(name) __typeof__(name) *name;
typedef struct KioskGstLibrary {
    KIOSK_GST_FUNCTIONS(KIOSK_GST_FIELD)
} KioskGstLibrary;
#undef KIOSK_GST_FIELD

// Loads GStreamer's libraries and resolves the table, once per process (later calls return the first result).
// Returns 1 when every function was found; 0 otherwise, with `*error` (static text) naming the library or
// function that is missing.
int kiosk_gst_load(const char **error);

// What kiosk_gst_load does, with the libraries named: opens each (dlopen) and fills `table` from them. Returns 1
// when every function was found; 0 otherwise, with `error` naming the library that would not open (and why) or
// the first function none of them has. Not cached: for tests.
int kiosk_gst_resolve(const char *const *libraries, size_t count, KioskGstLibrary *table, char *error, size_t size);

// The table; its entries are valid once kiosk_gst_load has returned 1.
const KioskGstLibrary *kiosk_gst_api(void);

// gst_sample_unref is inline in GStreamer's headers, over gst_mini_object_unref.
static inline void kiosk_gst_sample_unref(GstSample *sample) {
    kiosk_gst_api()->gst_mini_object_unref(GST_MINI_OBJECT_CAST(sample));
}

#endif
