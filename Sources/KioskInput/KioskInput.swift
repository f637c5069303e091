// KioskInput: touch, pointer and keys from libinput on the main loop, handed out as value-type input events.
