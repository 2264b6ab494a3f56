// Retry classification and hint parsing on arbitrary error texts: no crash, no stack overflow,
// hints never negative.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "session/retry_policy.h"

using namespace rebound;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  protocol::AgentMessage m;
  m.role = protocol::Role::assistant;
  m.stop_reason = protocol::StopReason::error;
  m.error_message = std::string(reinterpret_cast<const char*>(data), size);
  session::is_retryable(m, 128000);
  session::is_context_overflow(m, 128000);
  session::is_usage_limit(*m.error_message);
  if (const auto hint = session::parse_retry_hint_ms(*m.error_message, 1445412480000)) {
    if (*hint < 0) std::abort();
  }
  return 0;
}
