#ifndef CKIOSKSYS_H
#define CKIOSKSYS_H

// Linux system headers only. KioskCore depends on this target and must never see a display library (libdrm,
// Cairo, Pango): those shims live in their own targets.
//
// Swift's Glibc module map stops short of these headers. Including them here lets Swift import epoll,
// eventfd, timerfd and signalfd as declared, including struct epoll_event with glibc's layout, which is packed
// on x86 (__EPOLL_PACKED) and padded elsewhere; a struct declared in Swift could express only the latter; and
// malloc.h's mallopt, for the daemon's arena limit (kioskd's MallocArenas).
//
// Every constant KioskCore uses imports directly: the EPOLL* event bits as members of enum EPOLL_EVENTS, the
// *_CLOEXEC, *_NONBLOCK and TFD_TIMER_ABSTIME flags as anonymous enum constants (typed Int in Swift), the
// EPOLL_CTL_* operations as integer macros. A macro Swift cannot import belongs here as a static inline
// function named kiosk_..., with a comment saying why it exists.
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <unistd.h>

// gettid(2): glibc declares it only under _GNU_SOURCE, which Swift's Glibc module is not built with.
static inline pid_t kiosk_gettid(void) { return (pid_t)syscall(SYS_gettid); }

// Whether the kernel says the system clock is not synchronized (NTP): 1 not synchronized, 0 synchronized, -1 with
// errno on failure. adjtimex(2) with modes 0 only reads, unprivileged. A shim because struct timex ends in
// anonymous padding bit-fields Swift does not import, and STA_UNSYNC and TIME_ERROR are best read beside it.
static inline int kiosk_clock_unsynchronized(void) {
    struct timex t = {0};
    int state = adjtimex(&t);
    if (state == -1) return -1;
    return (state == TIME_ERROR || (t.status & STA_UNSYNC)) ? 1 : 0;
}

#endif
