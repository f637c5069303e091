// Every shim is an inline function in CKioskShims.h; SwiftPM needs one source file to build the target.
#include "CKioskShims.h"
