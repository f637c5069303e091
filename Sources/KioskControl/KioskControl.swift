// KioskControl: the command registry and the JSON-Lines control-socket protocol and server, with no C imports.
