// Must not compile: the tools layer cannot see server/ (tests/CMakeLists.txt, layers.*).
#include "server/child_process.h"
