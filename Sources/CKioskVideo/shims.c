#include "CKioskVideo.h"

void kiosk_gst_set_string(GstElement *element, const char *property, const char *value) {
    g_object_set(G_OBJECT(element), property, value, NULL);
}

void kiosk_gst_set_bool(GstElement *element, const char *property, int value) {
    g_object_set(G_OBJECT(element), property, (gboolean)(value != 0), NULL);
}

void kiosk_gst_set_double(GstElement *element, const char *property, double value) {
    g_object_set(G_OBJECT(element), property, value, NULL);
}

void kiosk_gst_set_uint(GstElement *element, const char *property, unsigned int value) {
    g_object_set(G_OBJECT(element), property, (guint)value, NULL);
}

void kiosk_gst_set_int64(GstElement *element, const char *property, int64_t value) {
    g_object_set(G_OBJECT(element), property, (gint64)value, NULL);
}

void kiosk_gst_set_element(GstElement *element, const char *property, GstElement *value) {
    g_object_set(G_OBJECT(element), property, value, NULL);
}

uint64_t kiosk_gst_sink_dropped(GstElement *sink) {
    GstStructure *stats = NULL;
    guint64 dropped = 0;
    g_object_get(G_OBJECT(sink), "stats", &stats, NULL);
    if (stats != NULL) {
        gst_structure_get_uint64(stats, "dropped", &dropped);
        gst_structure_free(stats);
    }
    return dropped;
}

const char *kiosk_gst_message_source_name(GstMessage *message) {
    return GST_MESSAGE_SRC(message) != NULL ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : NULL;
}
