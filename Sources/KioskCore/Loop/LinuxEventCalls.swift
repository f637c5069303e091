#if canImport(Glibc)
import Glibc
#endif

/// The epoll, eventfd, timerfd and signalfd calls, which Swift's Glibc module does not import.
///
/// Glibc's Swift module map stops short of `<sys/epoll.h>`, `<sys/eventfd.h>`, `<sys/timerfd.h>` and
/// `<sys/signalfd.h>` (swift-nio carries a C shim target for the same reason). KioskCore has no C target, so
/// the functions are looked up once, by name, in the libc the process already has loaded, and called through
/// typed `@convention(c)` pointers, which use the C calling convention. The constants and struct layouts in
/// this file are the kernel's UAPI values. Should the core get a C shim target, this file becomes its imports.
///
/// Immutable after the lookup: used from the loop thread, and `write` on the eventfd comes from any thread.
struct LinuxEventCalls: Sendable {
    /// `int epoll_create1(int flags)`
    let epollCreate1: @convention(c) (Int32) -> Int32
    /// `int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)`
    let epollCtl: @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    /// `int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)`
    let epollWait: @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    /// `int eventfd(unsigned int initval, int flags)`
    let eventfd: @convention(c) (UInt32, Int32) -> Int32
    /// `int timerfd_create(int clockid, int flags)`
    let timerfdCreate: @convention(c) (Int32, Int32) -> Int32
    /// `int timerfd_settime(int fd, int flags, const struct itimerspec *new, struct itimerspec *old)`
    let timerfdSettime: @convention(c) (Int32, Int32, UnsafePointer<itimerspec>?, UnsafeMutablePointer<itimerspec>?) -> Int32
    /// `int signalfd(int fd, const sigset_t *mask, int flags)`
    let signalfd: @convention(c) (Int32, UnsafePointer<sigset_t>?, Int32) -> Int32

    /// Looked up on first use. A libc without one of the calls (a fully static musl build) gets an error naming
    /// it when an `EpollPoller` is made, instead of a crash.
    static let shared: Result<LinuxEventCalls, LoopError> = {
        do throws(LoopError) {
            return .success(try lookUp())
        } catch {
            return .failure(error)
        }
    }()

    private static func lookUp() throws(LoopError) -> LinuxEventCalls {
        // RTLD_DEFAULT is a null handle in glibc: search everything loaded, which always includes libc.
        func symbol<Function>(_ name: String, as type: Function.Type) throws(LoopError) -> Function {
            guard let address = dlsym(nil, name) else {
                throw LoopError(operation: "dlsym(\(name))", object: "libc", errno: ENOSYS)
            }
            return unsafeBitCast(address, to: type)
        }
        return LinuxEventCalls(
            epollCreate1: try symbol("epoll_create1", as: (@convention(c) (Int32) -> Int32).self),
            epollCtl: try symbol("epoll_ctl", as: (@convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32).self),
            epollWait: try symbol("epoll_wait", as: (@convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32).self),
            eventfd: try symbol("eventfd", as: (@convention(c) (UInt32, Int32) -> Int32).self),
            timerfdCreate: try symbol("timerfd_create", as: (@convention(c) (Int32, Int32) -> Int32).self),
            timerfdSettime: try symbol(
                "timerfd_settime",
                as: (@convention(c) (Int32, Int32, UnsafePointer<itimerspec>?, UnsafeMutablePointer<itimerspec>?) -> Int32).self
            ),
            signalfd: try symbol("signalfd", as: (@convention(c) (Int32, UnsafePointer<sigset_t>?, Int32) -> Int32).self)
        )
    }
}

/// `<sys/epoll.h>` values. The event bits and operations are the same on every Linux architecture.
enum EpollConstant {
    /// `EPOLLIN`
    static let readable: UInt32 = 0x001
    /// `EPOLLOUT`
    static let writable: UInt32 = 0x004
    /// `EPOLLERR`; always reported, whether asked for or not.
    static let error: UInt32 = 0x008
    /// `EPOLLHUP`; always reported, whether asked for or not.
    static let hangup: UInt32 = 0x010
    /// `EPOLL_CTL_ADD`
    static let controlAdd: Int32 = 1
    /// `EPOLL_CTL_DEL`
    static let controlDelete: Int32 = 2
    /// `EPOLL_CTL_MOD`
    static let controlModify: Int32 = 3
    /// `EPOLL_CLOEXEC`, which the kernel defines as `O_CLOEXEC`.
    static let closeOnExec: Int32 = O_CLOEXEC

    // struct epoll_event { uint32_t events; uint64_t data; } is packed on x86 only (glibc's __EPOLL_PACKED), so
    // its size and the offset of `data` differ between a PC and a Raspberry Pi. Swift cannot declare a packed
    // struct; events are read from raw bytes at these offsets instead.
    #if arch(x86_64) || arch(i386)
    /// `sizeof(struct epoll_event)` on x86 (packed).
    static let eventSize = 12
    /// `offsetof(struct epoll_event, data)` on x86 (packed).
    static let dataOffset = 4
    #else
    /// `sizeof(struct epoll_event)` where `uint64_t` is 8-byte aligned (arm64, 32-bit ARM EABI).
    static let eventSize = 16
    /// `offsetof(struct epoll_event, data)` where `uint64_t` is 8-byte aligned.
    static let dataOffset = 8
    #endif
}

/// `<sys/eventfd.h>`, `<sys/timerfd.h>` and `<sys/signalfd.h>` values.
enum EventFDConstant {
    /// `EFD_CLOEXEC`, `TFD_CLOEXEC` and `SFD_CLOEXEC`, which the kernel defines as `O_CLOEXEC`.
    static let closeOnExec: Int32 = O_CLOEXEC
    /// `EFD_NONBLOCK`, `TFD_NONBLOCK` and `SFD_NONBLOCK`, which the kernel defines as `O_NONBLOCK`.
    static let nonBlocking: Int32 = O_NONBLOCK
    /// `TFD_TIMER_ABSTIME`: the armed value is a point on the timer's clock, not a delay.
    static let timerAbsolute: Int32 = 1
    /// `sizeof(struct signalfd_siginfo)`; `ssi_signo` (uint32_t) is its first field.
    static let signalInfoSize = 128
}
