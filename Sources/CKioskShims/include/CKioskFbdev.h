#ifndef CKIOSKFBDEV_H
#define CKIOSKFBDEV_H
#include <linux/fb.h>
#include <linux/kd.h>
#include <sys/ioctl.h>

// The Linux framebuffer (fbdev) requests the fbdev backend makes. ioctl() is variadic, which Swift cannot call,
// so each request kioskd makes has a typed wrapper here; struct fb_var_screeninfo and fb_fix_screeninfo import
// from <linux/fb.h> as declared.
static inline int kiosk_fb_get_vscreeninfo(int fd, struct fb_var_screeninfo *var) {
    return ioctl(fd, FBIOGET_VSCREENINFO, var);
}
static inline int kiosk_fb_get_fscreeninfo(int fd, struct fb_fix_screeninfo *fix) {
    return ioctl(fd, FBIOGET_FSCREENINFO, fix);
}
// FBIOBLANK takes the blank level as the argument itself, not a pointer to it.
static inline int kiosk_fb_blank(int fd, int level) {
    return ioctl(fd, FBIOBLANK, (unsigned long)level);
}
// FBIO_WAITFORVSYNC is defined with _IOW(), a function-like macro Swift cannot import. Blocks until the next
// vertical sync of CRTC 0; drivers without it answer ENOTTY (or EINVAL).
static inline int kiosk_fb_wait_for_vsync(int fd) {
    __u32 crtc = 0;
    return ioctl(fd, FBIO_WAITFORVSYNC, &crtc);
}
// KDGETMODE/KDSETMODE on a virtual terminal: KD_GRAPHICS stops the framebuffer console drawing text and its
// cursor into the framebuffer kioskd drives. KDSETMODE takes the mode as the argument itself.
static inline int kiosk_kd_get_mode(int fd, int *mode) {
    return ioctl(fd, KDGETMODE, mode);
}
static inline int kiosk_kd_set_mode(int fd, int mode) {
    return ioctl(fd, KDSETMODE, (unsigned long)mode);
}
#endif
