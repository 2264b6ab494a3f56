// Must not compile: the session layer cannot see tools/ (the session knows only the seam).
#include "tools/walker.h"
