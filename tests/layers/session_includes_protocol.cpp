// Compiles: the session layer sees protocol/ and session/ (the control for layers.*).
#include "protocol/messages.h"
#include "session/event.h"
int main() {}
