// KioskCore: the main loop, the layer tree and the layer engine that turns layer changes into composed, paced frames, knowing displays and drawing only through protocols.
