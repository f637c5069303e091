#include "CKioskMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// Declared with hidden visibility: these definitions serve kioskd's own calls and never stand in for the library's
// exports when it resolves its own symbols.
#pragma GCC visibility push(hidden)
#include <mosquitto.h>
#pragma GCC visibility pop

// The library's functions that kioskd calls, resolved once.
static struct {
    int (*lib_init)(void);
    struct mosquitto *(*new_client)(const char *, bool, void *);
    void (*destroy)(struct mosquitto *);
    int (*int_option)(struct mosquitto *, enum mosq_opt_t, int);
    int (*username_pw_set)(struct mosquitto *, const char *, const char *);
    int (*tls_set)(struct mosquitto *, const char *, const char *, const char *, const char *,
                   int (*)(char *, int, int, void *));
    int (*will_set)(struct mosquitto *, const char *, int, const void *, int, bool);
    void (*user_data_set)(struct mosquitto *, void *);
    void (*connect_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int));
    void (*publish_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int));
    void (*message_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *,
                                                                 const struct mosquitto_message *,
                                                                 const mosquitto_property *));
    int (*connect_async)(struct mosquitto *, const char *, int, int);
    int (*connect_bind_v5)(struct mosquitto *, const char *, int, int, const char *, const mosquitto_property *);
    int (*disconnect)(struct mosquitto *);
    int (*socket)(struct mosquitto *);
    int (*loop_read)(struct mosquitto *, int);
    int (*loop_write)(struct mosquitto *, int);
    int (*loop_misc)(struct mosquitto *);
    bool (*want_write)(struct mosquitto *);
    int (*publish_v5)(struct mosquitto *, int *, const char *, int, const void *, int, bool, const mosquitto_property *);
    int (*subscribe)(struct mosquitto *, int *, const char *, int);
    int (*unsubscribe)(struct mosquitto *, int *, const char *);
    int (*topic_matches_sub)(const char *, const char *, bool *);
    int (*property_add_binary)(mosquitto_property **, int, const void *, uint16_t);
    int (*property_add_int32)(mosquitto_property **, int, uint32_t);
    const mosquitto_property *(*property_read_binary)(const mosquitto_property *, int, void **, uint16_t *, bool);
    const mosquitto_property *(*property_read_string)(const mosquitto_property *, int, char **, bool);
    void (*property_free_all)(mosquitto_property **);
    const char *(*strerror)(int);
    const char *(*connack_string)(int);
} mosq;

static pthread_once_t mosq_once = PTHREAD_ONCE_INIT;
static char mosq_failure[256];
static int mosq_loaded;

static void load_mosquitto(void) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(mosq_failure, sizeof mosq_failure, "libmosquitto is not installed (%s)", dlerror());
        return;
    }
    struct { const char *name; void **slot; } symbols[] = {
        {"mosquitto_lib_init", (void **)&mosq.lib_init},
        {"mosquitto_new", (void **)&mosq.new_client},
        {"mosquitto_destroy", (void **)&mosq.destroy},
        {"mosquitto_int_option", (void **)&mosq.int_option},
        {"mosquitto_username_pw_set", (void **)&mosq.username_pw_set},
        {"mosquitto_tls_set", (void **)&mosq.tls_set},
        {"mosquitto_will_set", (void **)&mosq.will_set},
        {"mosquitto_user_data_set", (void **)&mosq.user_data_set},
        {"mosquitto_connect_callback_set", (void **)&mosq.connect_callback_set},
        {"mosquitto_publish_callback_set", (void **)&mosq.publish_callback_set},
        {"mosquitto_message_v5_callback_set", (void **)&mosq.message_v5_callback_set},
        {"mosquitto_connect_async", (void **)&mosq.connect_async},
        {"mosquitto_connect_bind_v5", (void **)&mosq.connect_bind_v5},
        {"mosquitto_disconnect", (void **)&mosq.disconnect},
        {"mosquitto_socket", (void **)&mosq.socket},
        {"mosquitto_loop_read", (void **)&mosq.loop_read},
        {"mosquitto_loop_write", (void **)&mosq.loop_write},
        {"mosquitto_loop_misc", (void **)&mosq.loop_misc},
        {"mosquitto_want_write", (void **)&mosq.want_write},
        {"mosquitto_publish_v5", (void **)&mosq.publish_v5},
        {"mosquitto_subscribe", (void **)&mosq.subscribe},
        {"mosquitto_unsubscribe", (void **)&mosq.unsubscribe},
        {"mosquitto_topic_matches_sub", (void **)&mosq.topic_matches_sub},
        {"mosquitto_property_add_binary", (void **)&mosq.property_add_binary},
        {"mosquitto_property_add_int32", (void **)&mosq.property_add_int32},
        {"mosquitto_property_read_binary", (void **)&mosq.property_read_binary},
        {"mosquitto_property_read_string", (void **)&mosq.property_read_string},
        {"mosquitto_property_free_all", (void **)&mosq.property_free_all},
        {"mosquitto_strerror", (void **)&mosq.strerror},
        {"mosquitto_connack_string", (void **)&mosq.connack_string},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(mosq_failure, sizeof mosq_failure, "libmosquitto has no %s (1.6 or later is needed)",
                     symbols[i].name);
            return;
        }
    }
    mosq_loaded = 1;
}

const char *kiosk_mosquitto_load_failure(void) {
    pthread_once(&mosq_once, load_mosquitto);
    return mosq_loaded ? NULL : mosq_failure;
}

// Every call loads the library first (a no-op after the first); without it, each answers as libmosquitto does for
// a feature it lacks.
#define LOADED() (kiosk_mosquitto_load_failure() == NULL)

int mosquitto_lib_init(void) { return LOADED() ? mosq.lib_init() : MOSQ_ERR_NOT_SUPPORTED; }

struct mosquitto *mosquitto_new(const char *id, bool clean_session, void *obj) {
    return LOADED() ? mosq.new_client(id, clean_session, obj) : NULL;
}

void mosquitto_destroy(struct mosquitto *m) { if (LOADED()) mosq.destroy(m); }

int mosquitto_int_option(struct mosquitto *m, enum mosq_opt_t option, int value) {
    return LOADED() ? mosq.int_option(m, option, value) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_username_pw_set(struct mosquitto *m, const char *username, const char *password) {
    return LOADED() ? mosq.username_pw_set(m, username, password) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_tls_set(struct mosquitto *m, const char *cafile, const char *capath, const char *certfile,
                      const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return LOADED() ? mosq.tls_set(m, cafile, capath, certfile, keyfile, pw_callback) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_will_set(struct mosquitto *m, const char *topic, int payloadlen, const void *payload, int qos,
                       bool retain) {
    return LOADED() ? mosq.will_set(m, topic, payloadlen, payload, qos, retain) : MOSQ_ERR_NOT_SUPPORTED;
}

void mosquitto_user_data_set(struct mosquitto *m, void *obj) { if (LOADED()) mosq.user_data_set(m, obj); }

void mosquitto_connect_callback_set(struct mosquitto *m, void (*on_connect)(struct mosquitto *, void *, int)) {
    if (LOADED()) mosq.connect_callback_set(m, on_connect);
}

void mosquitto_publish_callback_set(struct mosquitto *m, void (*on_publish)(struct mosquitto *, void *, int)) {
    if (LOADED()) mosq.publish_callback_set(m, on_publish);
}

void mosquitto_message_v5_callback_set(struct mosquitto *m,
                                       void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *,
                                                          const mosquitto_property *props)) {
    if (LOADED()) mosq.message_v5_callback_set(m, on_message);
}

int mosquitto_connect_async(struct mosquitto *m, const char *host, int port, int keepalive) {
    return LOADED() ? mosq.connect_async(m, host, port, keepalive) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_connect_bind_v5(struct mosquitto *m, const char *host, int port, int keepalive, const char *bind_address,
                              const mosquitto_property *properties) {
    return LOADED() ? mosq.connect_bind_v5(m, host, port, keepalive, bind_address, properties) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_disconnect(struct mosquitto *m) { return LOADED() ? mosq.disconnect(m) : MOSQ_ERR_NOT_SUPPORTED; }

int mosquitto_socket(struct mosquitto *m) { return LOADED() ? mosq.socket(m) : -1; }

int mosquitto_loop_read(struct mosquitto *m, int max_packets) {
    return LOADED() ? mosq.loop_read(m, max_packets) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_loop_write(struct mosquitto *m, int max_packets) {
    return LOADED() ? mosq.loop_write(m, max_packets) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_loop_misc(struct mosquitto *m) { return LOADED() ? mosq.loop_misc(m) : MOSQ_ERR_NOT_SUPPORTED; }

bool mosquitto_want_write(struct mosquitto *m) { return LOADED() ? mosq.want_write(m) : false; }

int mosquitto_publish_v5(struct mosquitto *m, int *mid, const char *topic, int payloadlen, const void *payload,
                         int qos, bool retain, const mosquitto_property *properties) {
    return LOADED() ? mosq.publish_v5(m, mid, topic, payloadlen, payload, qos, retain, properties)
                    : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_subscribe(struct mosquitto *m, int *mid, const char *sub, int qos) {
    return LOADED() ? mosq.subscribe(m, mid, sub, qos) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_unsubscribe(struct mosquitto *m, int *mid, const char *sub) {
    return LOADED() ? mosq.unsubscribe(m, mid, sub) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_topic_matches_sub(const char *sub, const char *topic, bool *result) {
    return LOADED() ? mosq.topic_matches_sub(sub, topic, result) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_property_add_binary(mosquitto_property **proplist, int identifier, const void *value, uint16_t len) {
    return LOADED() ? mosq.property_add_binary(proplist, identifier, value, len) : MOSQ_ERR_NOT_SUPPORTED;
}

int mosquitto_property_add_int32(mosquitto_property **proplist, int identifier, uint32_t value) {
    return LOADED() ? mosq.property_add_int32(proplist, identifier, value) : MOSQ_ERR_NOT_SUPPORTED;
}

const mosquitto_property *mosquitto_property_read_binary(const mosquitto_property *proplist, int identifier,
                                                         void **value, uint16_t *len, bool skip_first) {
    return LOADED() ? mosq.property_read_binary(proplist, identifier, value, len, skip_first) : NULL;
}

const mosquitto_property *mosquitto_property_read_string(const mosquitto_property *proplist, int identifier,
                                                         char **value, bool skip_first) {
    return LOADED() ? mosq.property_read_string(proplist, identifier, value, skip_first) : NULL;
}

void mosquitto_property_free_all(mosquitto_property **properties) {
    if (LOADED()) mosq.property_free_all(properties);
}

const char *mosquitto_strerror(int mosq_errno) { return LOADED() ? mosq.strerror(mosq_errno) : mosq_failure; }

const char *mosquitto_connack_string(int connack_code) {
    return LOADED() ? mosq.connack_string(connack_code) : mosq_failure;
}
