// KioskService: kioskd under systemd: readiness, status, reload and stop notifications, the watchdog fed from the frame path's health, and socket activation, through libsystemd.
