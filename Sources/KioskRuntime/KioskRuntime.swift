// KioskRuntime: the scene on screen: widgets built into layers, their motion (clocks, tickers, animations) and the controller that loads scenes and applies data, pages and widget changes.
