#pragma once
// One line per decoded stream event with every field, for the differential fuzz targets: a
// decoder's fast path must emit exactly the lines its general path does.

#include <string>
#include <vector>

#include "session/llm/stream_decoder.h"

namespace rebound::fuzz {

inline void record(std::vector<std::string>& to, const session::llm::StreamEvent& e) {
  to.push_back(std::to_string(static_cast<int>(e.kind)) + "|" + e.text + "|" + e.tool_id + "|" +
               e.tool_name + "|" +
               e.arguments.dump(-1, ' ', false, protocol::Json::error_handler_t::replace) + "|" +
               e.signature + "|" + std::to_string(static_cast<int>(e.stop_reason)) + "|" +
               std::to_string(e.usage.input) + "/" + std::to_string(e.usage.output) + "/" +
               std::to_string(e.usage.cache_read) + "/" + std::to_string(e.usage.cache_write) +
               "/" + std::to_string(e.usage.total_tokens) + "|" + e.response_id);
}

}  // namespace rebound::fuzz
