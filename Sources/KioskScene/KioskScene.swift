// KioskScene: the scene model read from YAML or JSON, validated with errors located at FILE:LINE:COL, and the decoder machinery board files share.
