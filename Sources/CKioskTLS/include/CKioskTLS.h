#ifndef CKIOSKTLS_H
#define CKIOSKTLS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// GnuTLS for the VNC server's VeNCrypt, loaded with dlopen (libgnutls.so.30, on every Debian 12 system) the first
// time a `vnc.tls` certificate is read, rather than linked: a kiosk without `tls:` never maps it, and no -dev
// package is needed to build. Only the calls kioskd makes are resolved; their declarations are in tls.c.
//
// A session has no socket: its transport is two byte buffers. The caller feeds what the socket read
// (`kiosk_tls_feed`), lets GnuTLS take what it needs (`kiosk_tls_handshake`, `kiosk_tls_recv`), and writes out what
// GnuTLS made (`kiosk_tls_output`, `kiosk_tls_consumed`) when the socket takes it. Nothing here ever waits: a call
// that needs bytes not yet fed returns at once, to be called again after the next feed. Not thread-safe: one
// session is used by one thread at a time (the VNC server's, the main thread).

/// A certificate chain with its private key, shared by the sessions made from it.
typedef struct KioskTLSCredentials KioskTLSCredentials;
/// One TLS server connection over memory buffers.
typedef struct KioskTLSSession KioskTLSSession;

/// Which file a credentials error is about (`kiosk_tls_credentials_new`).
enum {
    KIOSK_TLS_LIBRARY = 0,
    KIOSK_TLS_CERTIFICATE = 1,
    KIOSK_TLS_KEY = 2,
};

/// Results of `kiosk_tls_handshake`, `kiosk_tls_recv` and `kiosk_tls_send` besides bytes and GnuTLS's (negative)
/// error codes.
enum {
    /// More bytes from the peer are needed: feed them and call again.
    KIOSK_TLS_WANTS_MORE = 0,
    /// The peer ended the TLS session (close_notify).
    KIOSK_TLS_CLOSED = -1000,
    /// The peer sent more than a session buffers (`kiosk_tls_max_input`) before GnuTLS took it.
    KIOSK_TLS_INPUT_FULL = -1001,
};

/// Loads GnuTLS once; 1 when it is usable, else 0 with the reason in `error`.
int kiosk_tls_load(char *error, size_t error_size);

/// Checks a PEM certificate (chain) and a PEM private key and makes credentials of them, or returns NULL with the
/// file at fault in `*which` (KIOSK_TLS_CERTIFICATE, KIOSK_TLS_KEY, or KIOSK_TLS_LIBRARY) and the reason in `error`.
KioskTLSCredentials *kiosk_tls_credentials_new(const uint8_t *certificate, size_t certificate_size, const uint8_t *key,
                                               size_t key_size, int *which, char *error, size_t error_size);
void kiosk_tls_credentials_free(KioskTLSCredentials *credentials);

/// A server session with GnuTLS's default priorities; NULL with the reason in `error`. The credentials must outlive
/// it.
KioskTLSSession *kiosk_tls_session_new(KioskTLSCredentials *credentials, char *error, size_t error_size);
void kiosk_tls_session_free(KioskTLSSession *session);

/// The most bytes a session holds from the peer that GnuTLS has not taken yet.
size_t kiosk_tls_max_input(void);
/// Appends bytes read from the socket; 0, or KIOSK_TLS_INPUT_FULL past `kiosk_tls_max_input`.
int kiosk_tls_feed(KioskTLSSession *session, const uint8_t *bytes, size_t count);
/// Advances the handshake: 1 when it is done, KIOSK_TLS_WANTS_MORE, or a GnuTLS error (fatal: close).
int kiosk_tls_handshake(KioskTLSSession *session);
/// Decrypted bytes into `buffer`: their count, KIOSK_TLS_WANTS_MORE, KIOSK_TLS_CLOSED, or a GnuTLS error.
ssize_t kiosk_tls_recv(KioskTLSSession *session, uint8_t *buffer, size_t size);
/// Encrypts up to `count` bytes into the output: the count taken, or a GnuTLS error.
ssize_t kiosk_tls_send(KioskTLSSession *session, const uint8_t *bytes, size_t count);
/// The encrypted bytes waiting for the socket (`*count` of them; NULL when none).
const uint8_t *kiosk_tls_output(KioskTLSSession *session, size_t *count);
/// Drops the first `count` bytes of the output: the socket took them.
void kiosk_tls_consumed(KioskTLSSession *session, size_t count);
/// GnuTLS's text for an error code.
const char *kiosk_tls_strerror(int code);

#endif
