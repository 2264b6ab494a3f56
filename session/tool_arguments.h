#pragma once
// Checking a tool call's arguments against its definition's schema before it runs (tools.md
// section 5): the coercions, then the failure text listing every problem. Pure.

#include <optional>
#include <string>
#include "session/error.h"

#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::session {

/// Copies `prepared` (the received arguments after Tool::prepare_arguments) into `args` with
/// the coercions applied; returns the failure text, if any, which shows `received`.
std::optional<std::string> check_tool_arguments(const ToolDefinition& definition,
                                                const protocol::Json& prepared,
                                                protocol::Json& args,
                                                const protocol::Json& received);

/// The arguments `tool` runs with: `received` after Tool::prepare_arguments, checked and
/// coerced (an external tool's unchecked: its server validates them, mcp.md section 5); the
/// failure text when they do not pass.
Result<protocol::Json> tool_input(const Tool& tool, const protocol::Json& received);

}  // namespace rebound::session
