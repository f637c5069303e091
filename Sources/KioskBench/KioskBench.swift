// KioskBench: what `kioskd bench` measures against (a naive redraw, the scenarios and their figures); not product code.
