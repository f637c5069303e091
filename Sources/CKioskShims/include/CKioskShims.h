#ifndef CKIOSKSHIMS_H
#define CKIOSKSHIMS_H
#include <stdint.h>
#include <drm_fourcc.h>
#include "CKioskFbdev.h"

// fourcc_code() is a function-like macro, which Swift cannot import; each format kioskd names goes through here.
static inline uint32_t kiosk_fourcc_xrgb8888(void) { return DRM_FORMAT_XRGB8888; }
static inline uint32_t kiosk_fourcc_argb8888(void) { return DRM_FORMAT_ARGB8888; }

#endif
