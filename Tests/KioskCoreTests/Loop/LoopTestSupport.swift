import KioskCore

/// The manual clock reading `offset` after a `MainLoop.manual()` loop started (at zero).
func manualTime(_ offset: Duration) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: 0) + offset
}
