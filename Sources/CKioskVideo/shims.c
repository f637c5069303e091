#include "CKioskVideo.h"

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
