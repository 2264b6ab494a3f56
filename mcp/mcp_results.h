#pragma once
// An MCP `tools/call` answer as a tool result (mcp.md section 6): content blocks converted one by
// one, structuredContent kept, the built-in tools' head truncation over the text, `details`
// naming server and tool. Pure.

#include <string>

#include "protocol/json.h"
#include "session/error.h"
#include "session/tool.h"

namespace rebound::mcp {

/// The tool result of a CallToolResult `result` from server `server` for its tool `tool`, or the
/// reason it is not a valid CallToolResult (the caller makes that
/// `MCP server <name> sent an invalid result: <reason>`).
session::Result<session::ToolResult> convert_call_result(const protocol::Json& result,
                                                         const std::string& server,
                                                         const std::string& tool);

/// The number of bytes a base64 text decodes to.
std::size_t base64_decoded_size(const std::string& data);

}  // namespace rebound::mcp
