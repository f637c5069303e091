// CKioskSys.h only includes system headers; SwiftPM needs one source file to build the target.
#include "CKioskSys.h"
