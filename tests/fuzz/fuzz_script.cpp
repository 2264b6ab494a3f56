// Script files: any bytes either load as steps or give a reason; never a crash.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/json_line.h"
#include "session/llm/script.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = rebound::protocol::parse_json_line(text);
  if (!parsed.value) return 0;
  const auto script = rebound::session::llm::parse_script(*parsed.value);
  if (script.error.empty() == script.steps.empty()) std::abort();
  for (const auto& step : script.steps) {
    if (step.text) {
      const auto pieces = rebound::session::llm::split_into_chunks(*step.text, step.chunks);
      std::string joined;
      for (const auto& p : pieces)
        joined += p;
      if (joined != *step.text) std::abort();
    }
  }
  return 0;
}
