// KioskRender: everything drawn with Cairo and Pango: the shadow compositor, layer contents, image decoding and PNG encoding.
