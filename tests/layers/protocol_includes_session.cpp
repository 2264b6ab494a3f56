// Must not compile: the protocol layer cannot see session/ (tests/CMakeLists.txt, layers.*).
#include "session/event.h"
