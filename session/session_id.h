#pragma once
// Fresh session ids: random RFC 4122 version-4 UUIDs in lowercase text form. Thread-safe.

#include <string>

namespace rebound::session {

std::string new_session_id();

}  // namespace rebound::session
