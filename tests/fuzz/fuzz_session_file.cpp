// Session files: any bytes either load (entries, warnings) or give a reason, and a loaded file
// always restores; never a crash. Each entry that loads also reads back after a round trip.
// The loader's slim parse (message entries parsed again from their line when restored) gives
// the very same conversation as the full one.

#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/json_line.h"
#include "session/session_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = rebound::session::parse_session_file(text);
  auto* loaded = parsed ? &*parsed : nullptr;
  if (!loaded) {
    if (parsed.error().message.empty()) std::abort();
    return 0;
  }
  std::size_t messages = 0;
  for (const auto& e : loaded->entries) {
    if (e["type"] == "message") ++messages;
    const auto again = rebound::protocol::parse_json_line(rebound::protocol::to_line(e));
    if (!again.value || !again.value->is_object()) std::abort();
  }
  const auto restored = rebound::session::restore_session(loaded->entries);
  if (restored.context().size() > messages + 1 || restored.history.size() > messages) std::abort();
  auto slim = rebound::session::parse_session_file(text, nullptr, false);
  auto* slim_loaded = slim ? &*slim : nullptr;
  if (!slim_loaded || slim_loaded->entries.size() != loaded->entries.size()) std::abort();
  const auto same = rebound::session::restore_session_releasing(*slim_loaded);
  if (rebound::protocol::to_json(same.history) != rebound::protocol::to_json(restored.history) ||
      rebound::protocol::to_json(same.context()) !=
          rebound::protocol::to_json(restored.context()) ||
      same.provider != restored.provider || same.model_id != restored.model_id)
    std::abort();
  return 0;
}
