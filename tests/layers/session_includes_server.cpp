// Must not compile: the session layer cannot see server/ (tests/CMakeLists.txt, layers.*).
#include "server/reply.h"
