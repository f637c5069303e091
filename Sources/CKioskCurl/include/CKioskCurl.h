#ifndef CKIOSKCURL_H
#define CKIOSKCURL_H

// libcurl, and with it OpenSSL, Kerberos, LDAP, SASL, libssh2 and a dozen more, is loaded with dlopen when the first
// fetcher is made, so a kiosk whose scenes fetch nothing never maps them (linked, they cost every kioskd about
// 6 MB at start). This target defines the libcurl functions KioskFetch calls, with the prototypes of
// <curl/curl.h>, each forwarding to the library's own once it is loaded; KioskFetch calls them as usual through
// CCurl (headers only, nothing linked).
//
// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call: each typed
// wrapper below passes one argument type.
#include <curl/curl.h>

// Why libcurl could not be loaded (not installed, a symbol missing), or NULL once it is loaded. Loads it on the
// first call and runs curl_global_init; thread-safe.
const char *kiosk_curl_load_failure(void);

CURLcode kiosk_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode kiosk_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode kiosk_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode kiosk_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode kiosk_curl_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode kiosk_curl_setopt_write_function(CURL *handle, curl_write_callback callback);
CURLcode kiosk_curl_setopt_header_function(CURL *handle, curl_write_callback callback);

CURLcode kiosk_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode kiosk_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode kiosk_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

CURLMcode kiosk_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

#endif
