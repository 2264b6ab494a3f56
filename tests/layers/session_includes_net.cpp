// Must not compile: the session layer cannot see net/ (tests/CMakeLists.txt, layers.*).
#include "net/http_client.h"
