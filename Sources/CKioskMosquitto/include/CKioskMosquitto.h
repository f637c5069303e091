#ifndef CKIOSKMOSQUITTO_H
#define CKIOSKMOSQUITTO_H

// libmosquitto (and with it OpenSSL) is loaded with dlopen when the first MQTT client is made, so a kiosk without
// `mqtt:` in its config never maps them. This target defines the libmosquitto functions kioskd calls, with the
// prototypes of <mosquitto.h>, each forwarding to the library's own once it is loaded; KioskFleet calls them as
// usual through CMosquitto (headers only, nothing linked).

// Why libmosquitto could not be loaded (not installed, a symbol missing), or NULL once it is loaded. Loads it on
// the first call; thread-safe.
const char *kiosk_mosquitto_load_failure(void);

#endif
