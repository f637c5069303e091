#include "CKioskTLS.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The few GnuTLS declarations kioskd uses, as <gnutls/gnutls.h> and <gnutls/x509.h> of GnuTLS 3.7 declare them
// (stable ABI since 3.0, soname libgnutls.so.30).
typedef struct { unsigned char *data; unsigned int size; } gnutls_datum_t;
typedef ssize_t (*gnutls_pull_func)(void *, void *, size_t);
typedef ssize_t (*gnutls_push_func)(void *, const void *, size_t);
typedef int (*gnutls_pull_timeout_func)(void *, unsigned int);
enum {
    GNUTLS_SERVER = 1,
    GNUTLS_NONBLOCK = 1 << 3,
    GNUTLS_CRD_CERTIFICATE = 1,
    GNUTLS_X509_FMT_PEM = 1,
    GNUTLS_E_AGAIN = -28,
    GNUTLS_E_INTERRUPTED = -52,
    GNUTLS_E_WARNING_ALERT_RECEIVED = -16,
    GNUTLS_E_CERTIFICATE_KEY_MISMATCH = -60,
};

static struct {
    int (*certificate_allocate_credentials)(void **credentials);
    void (*certificate_free_credentials)(void *credentials);
    int (*certificate_set_x509_key_mem)(void *credentials, const gnutls_datum_t *cert, const gnutls_datum_t *key, int format);
    int (*x509_crt_init)(void **certificate);
    int (*x509_crt_import)(void *certificate, const gnutls_datum_t *data, int format);
    void (*x509_crt_deinit)(void *certificate);
    int (*x509_privkey_init)(void **key);
    int (*x509_privkey_import2)(void *key, const gnutls_datum_t *data, int format, const char *password, unsigned flags);
    void (*x509_privkey_deinit)(void *key);
    int (*init)(void **session, unsigned flags);
    void (*deinit)(void *session);
    int (*set_default_priority)(void *session);
    int (*credentials_set)(void *session, int type, void *credentials);
    void (*handshake_set_timeout)(void *session, unsigned ms);
    void (*transport_set_ptr)(void *session, void *pointer);
    void (*transport_set_push_function)(void *session, gnutls_push_func push);
    void (*transport_set_pull_function)(void *session, gnutls_pull_func pull);
    void (*transport_set_pull_timeout_function)(void *session, gnutls_pull_timeout_func pull_timeout);
    void (*transport_set_errno)(void *session, int err);
    int (*handshake)(void *session);
    ssize_t (*record_recv)(void *session, void *data, size_t size);
    ssize_t (*record_send)(void *session, const void *data, size_t size);
    int (*error_is_fatal)(int error);
    const char *(*strerror)(int error);
} tls;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_failure[512];

static void load_gnutls(void) {
    void *library = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_failure, sizeof load_failure, "GnuTLS is not installed: %s (install libgnutls30)", dlerror());
        return;
    }
    struct { const char *name; void **slot; } symbols[] = {
        {"gnutls_certificate_allocate_credentials", (void **)&tls.certificate_allocate_credentials},
        {"gnutls_certificate_free_credentials", (void **)&tls.certificate_free_credentials},
        {"gnutls_certificate_set_x509_key_mem", (void **)&tls.certificate_set_x509_key_mem},
        {"gnutls_x509_crt_init", (void **)&tls.x509_crt_init},
        {"gnutls_x509_crt_import", (void **)&tls.x509_crt_import},
        {"gnutls_x509_crt_deinit", (void **)&tls.x509_crt_deinit},
        {"gnutls_x509_privkey_init", (void **)&tls.x509_privkey_init},
        {"gnutls_x509_privkey_import2", (void **)&tls.x509_privkey_import2},
        {"gnutls_x509_privkey_deinit", (void **)&tls.x509_privkey_deinit},
        {"gnutls_init", (void **)&tls.init},
        {"gnutls_deinit", (void **)&tls.deinit},
        {"gnutls_set_default_priority", (void **)&tls.set_default_priority},
        {"gnutls_credentials_set", (void **)&tls.credentials_set},
        {"gnutls_handshake_set_timeout", (void **)&tls.handshake_set_timeout},
        {"gnutls_transport_set_ptr", (void **)&tls.transport_set_ptr},
        {"gnutls_transport_set_push_function", (void **)&tls.transport_set_push_function},
        {"gnutls_transport_set_pull_function", (void **)&tls.transport_set_pull_function},
        {"gnutls_transport_set_pull_timeout_function", (void **)&tls.transport_set_pull_timeout_function},
        {"gnutls_transport_set_errno", (void **)&tls.transport_set_errno},
        {"gnutls_handshake", (void **)&tls.handshake},
        {"gnutls_record_recv", (void **)&tls.record_recv},
        {"gnutls_record_send", (void **)&tls.record_send},
        {"gnutls_error_is_fatal", (void **)&tls.error_is_fatal},
        {"gnutls_strerror", (void **)&tls.strerror},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(load_failure, sizeof load_failure, "GnuTLS has no %s (GnuTLS 3.6 or later is needed)", symbols[i].name);
            return;
        }
    }
}

int kiosk_tls_load(char *error, size_t error_size) {
    pthread_once(&load_once, load_gnutls);
    if (load_failure[0]) {
        if (error && error_size) snprintf(error, error_size, "%s", load_failure);
        return 0;
    }
    return 1;
}

struct KioskTLSCredentials {
    void *credentials;
};

KioskTLSCredentials *kiosk_tls_credentials_new(const uint8_t *certificate, size_t certificate_size, const uint8_t *key,
                                               size_t key_size, int *which, char *error, size_t error_size) {
    *which = KIOSK_TLS_LIBRARY;
    if (!kiosk_tls_load(error, error_size)) return NULL;
    gnutls_datum_t cert_datum = {(unsigned char *)certificate, (unsigned int)certificate_size};
    gnutls_datum_t key_datum = {(unsigned char *)key, (unsigned int)key_size};
    // Each file alone first, so the error names the one at fault.
    void *parsed = NULL;
    int status = tls.x509_crt_init(&parsed);
    if (status == 0) status = tls.x509_crt_import(parsed, &cert_datum, GNUTLS_X509_FMT_PEM);
    if (parsed) tls.x509_crt_deinit(parsed);
    if (status < 0) {
        *which = KIOSK_TLS_CERTIFICATE;
        snprintf(error, error_size, "not a PEM X.509 certificate (%s)", tls.strerror(status));
        return NULL;
    }
    void *private_key = NULL;
    status = tls.x509_privkey_init(&private_key);
    if (status == 0) status = tls.x509_privkey_import2(private_key, &key_datum, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (private_key) tls.x509_privkey_deinit(private_key);
    if (status < 0) {
        *which = KIOSK_TLS_KEY;
        snprintf(error, error_size, "not an unencrypted PEM private key (%s)", tls.strerror(status));
        return NULL;
    }
    void *credentials = NULL;
    status = tls.certificate_allocate_credentials(&credentials);
    if (status < 0) {
        snprintf(error, error_size, "%s", tls.strerror(status));
        return NULL;
    }
    status = tls.certificate_set_x509_key_mem(credentials, &cert_datum, &key_datum, GNUTLS_X509_FMT_PEM);
    if (status < 0) {
        tls.certificate_free_credentials(credentials);
        *which = KIOSK_TLS_KEY;
        if (status == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) {
            snprintf(error, error_size, "this key is not the certificate's (%s)", tls.strerror(status));
        } else {
            snprintf(error, error_size, "cannot be used with the certificate (%s)", tls.strerror(status));
        }
        return NULL;
    }
    KioskTLSCredentials *result = calloc(1, sizeof *result);
    if (!result) {
        tls.certificate_free_credentials(credentials);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    result->credentials = credentials;
    return result;
}

void kiosk_tls_credentials_free(KioskTLSCredentials *credentials) {
    if (!credentials) return;
    tls.certificate_free_credentials(credentials->credentials);
    free(credentials);
}

// A byte queue: bytes live in [start, end) of data.
typedef struct {
    uint8_t *data;
    size_t start, end, capacity;
} Buffer;

static int buffer_append(Buffer *buffer, const uint8_t *bytes, size_t count) {
    if (buffer->start > 0 && buffer->end + count > buffer->capacity) {
        memmove(buffer->data, buffer->data + buffer->start, buffer->end - buffer->start);
        buffer->end -= buffer->start;
        buffer->start = 0;
    }
    if (buffer->end + count > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (capacity < buffer->end + count) capacity *= 2;
        uint8_t *data = realloc(buffer->data, capacity);
        if (!data) return -1;
        buffer->data = data;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->end, bytes, count);
    buffer->end += count;
    return 0;
}

static size_t buffer_take(Buffer *buffer, uint8_t *into, size_t size) {
    size_t count = buffer->end - buffer->start;
    if (count > size) count = size;
    memcpy(into, buffer->data + buffer->start, count);
    buffer->start += count;
    if (buffer->start == buffer->end) buffer->start = buffer->end = 0;
    return count;
}

struct KioskTLSSession {
    void *session;
    Buffer input, output;
    int out_of_memory;
};

// A record is at most 16 KiB of payload plus its header and padding (RFC 8446 §5.2): twice that, and a peer that
// sends faster than GnuTLS takes is refused rather than buffered.
static const size_t max_input = 2 * (16384 + 2048);

size_t kiosk_tls_max_input(void) { return max_input; }

// GnuTLS's transport: reads come from what was fed, with EAGAIN when it is empty; writes go to the output, always
// whole.
static ssize_t pull(void *pointer, void *data, size_t size) {
    KioskTLSSession *session = pointer;
    if (session->input.end == session->input.start) {
        tls.transport_set_errno(session->session, EAGAIN);
        return -1;
    }
    return (ssize_t)buffer_take(&session->input, data, size);
}

static ssize_t push(void *pointer, const void *data, size_t size) {
    KioskTLSSession *session = pointer;
    if (buffer_append(&session->output, data, size) != 0) {
        session->out_of_memory = 1;
        tls.transport_set_errno(session->session, ENOMEM);
        return -1;
    }
    return (ssize_t)size;
}

// Asked only when GnuTLS would wait with a timeout, which no session here sets (the handshake deadline is the
// VNC server's): whether bytes are there, never waiting.
static int pull_timeout(void *pointer, unsigned int ms) {
    (void)ms;
    KioskTLSSession *session = pointer;
    return session->input.end > session->input.start ? 1 : 0;
}

KioskTLSSession *kiosk_tls_session_new(KioskTLSCredentials *credentials, char *error, size_t error_size) {
    if (!kiosk_tls_load(error, error_size)) return NULL;
    KioskTLSSession *session = calloc(1, sizeof *session);
    if (!session) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    int status = tls.init(&session->session, GNUTLS_SERVER | GNUTLS_NONBLOCK);
    if (status == 0) status = tls.set_default_priority(session->session);
    if (status == 0) status = tls.credentials_set(session->session, GNUTLS_CRD_CERTIFICATE, credentials->credentials);
    if (status < 0) {
        snprintf(error, error_size, "%s", tls.strerror(status));
        kiosk_tls_session_free(session);
        return NULL;
    }
    tls.handshake_set_timeout(session->session, 0);
    tls.transport_set_ptr(session->session, session);
    tls.transport_set_push_function(session->session, push);
    tls.transport_set_pull_function(session->session, pull);
    tls.transport_set_pull_timeout_function(session->session, pull_timeout);
    return session;
}

void kiosk_tls_session_free(KioskTLSSession *session) {
    if (!session) return;
    if (session->session) tls.deinit(session->session);
    free(session->input.data);
    free(session->output.data);
    free(session);
}

int kiosk_tls_feed(KioskTLSSession *session, const uint8_t *bytes, size_t count) {
    if (session->input.end - session->input.start + count > max_input) return KIOSK_TLS_INPUT_FULL;
    return buffer_append(&session->input, bytes, count) == 0 ? 0 : KIOSK_TLS_INPUT_FULL;
}

// A non-fatal error (a warning alert, an interruption) is retried, a few times at most: a peer sending warnings
// in a loop is one to close, not to serve forever.
enum { retries = 8 };

int kiosk_tls_handshake(KioskTLSSession *session) {
    int status = 0;
    for (int attempt = 0; attempt < retries; attempt++) {
        status = tls.handshake(session->session);
        if (status == 0) return 1;
        if (status == GNUTLS_E_AGAIN) return KIOSK_TLS_WANTS_MORE;
        if (status != GNUTLS_E_INTERRUPTED && status != GNUTLS_E_WARNING_ALERT_RECEIVED && tls.error_is_fatal(status)) return status;
    }
    return status;
}

ssize_t kiosk_tls_recv(KioskTLSSession *session, uint8_t *buffer, size_t size) {
    ssize_t count = 0;
    for (int attempt = 0; attempt < retries; attempt++) {
        count = tls.record_recv(session->session, buffer, size);
        if (count > 0) return count;
        if (count == 0) return KIOSK_TLS_CLOSED;
        if (count == GNUTLS_E_AGAIN) return KIOSK_TLS_WANTS_MORE;
        if (count != GNUTLS_E_INTERRUPTED && tls.error_is_fatal((int)count)) return count;
    }
    return count;
}

ssize_t kiosk_tls_send(KioskTLSSession *session, const uint8_t *bytes, size_t count) {
    ssize_t sent = 0;
    for (int attempt = 0; attempt < retries; attempt++) {
        sent = tls.record_send(session->session, bytes, count);
        if (sent != GNUTLS_E_INTERRUPTED) return sent;
    }
    return sent;
}

const uint8_t *kiosk_tls_output(KioskTLSSession *session, size_t *count) {
    *count = session->output.end - session->output.start;
    return *count ? session->output.data + session->output.start : NULL;
}

void kiosk_tls_consumed(KioskTLSSession *session, size_t count) {
    size_t waiting = session->output.end - session->output.start;
    session->output.start += count < waiting ? count : waiting;
    if (session->output.start == session->output.end) session->output.start = session->output.end = 0;
}

const char *kiosk_tls_strerror(int code) {
    if (code == KIOSK_TLS_CLOSED) return "the peer closed the TLS session";
    if (code == KIOSK_TLS_INPUT_FULL) return "the peer sent more than a TLS session buffers";
    char error[8];
    if (!kiosk_tls_load(error, sizeof error)) return "GnuTLS is not loaded";
    return tls.strerror(code);
}
