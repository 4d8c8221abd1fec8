// Empty: SwiftPM needs a source file to make a C target of the header; the function is in libFuzzer's runtime.
#include "CFuzzerDriver.h"
