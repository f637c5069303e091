#ifndef CKIOSKCURL_H
#define CKIOSKCURL_H

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call: each typed
// wrapper here passes one argument type. KioskFetch is the only module that calls them.
#include <curl/curl.h>

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
