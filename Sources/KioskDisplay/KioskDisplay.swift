// KioskDisplay: the outputs a frame is presented on, behind `DisplayBackend`: DRM/KMS (atomic, legacy, writeback) and headless.
