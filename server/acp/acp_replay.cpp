#include "server/acp/acp_replay.h"

#include <algorithm>
#include <map>

#include "server/acp/acp_updates.h"
#include "server/events/pi_encoder.h"

namespace rebound::server::acp {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;
using protocol::StopReason;

namespace {

Json chunk(const char* kind, Json content, const std::string& message_id) {
  Json body = Json::object();
  body["sessionUpdate"] = kind;
  body["content"] = std::move(content);
  body["messageId"] = message_id;
  return body;
}

// A text block replayed as chunks of at most kReplayChunkBytes each (cut between UTF-8
// characters), so no replay line grows with the message: a 500 MB message was one 500 MB line.
void text_chunks(const char* kind, const std::string& text, const std::string& message_id,
                 std::vector<Json>& out) {
  std::size_t from = 0;
  do {
    std::size_t to = std::min(text.size(), from + kReplayChunkBytes);
    while (to < text.size() && to > from && (static_cast<unsigned char>(text[to]) & 0xC0) == 0x80)
      --to;
    if (to == from) to = std::min(text.size(), from + kReplayChunkBytes);  // not UTF-8 at all
    out.push_back(chunk(kind, text_content(text.substr(from, to - from)), message_id));
    from = to;
  } while (from < text.size());
}

// A result as the replay shows it: its content (a long text cut) put in `body`, and returned.
session::ToolResult result_content(const AgentMessage& result, Json& body) {
  session::ToolResult tool_result;
  tool_result.content = result.content;
  // A long result text (an MCP server's) is cut for the replay: its content and rawOutput
  // would make one line of twice its size. The session file keeps it whole.
  for (auto& c : tool_result.content) {
    if (c.kind != ContentBlock::Kind::text || c.text.size() <= kReplayChunkBytes) continue;
    std::size_t cut = kReplayChunkBytes;
    while (cut > 0 && (static_cast<unsigned char>(c.text[cut]) & 0xC0) == 0x80)
      --cut;
    const std::size_t rest = c.text.size() - cut;
    c.text.resize(cut);
    c.text += "\n\n[" + std::to_string(rest) + " more bytes of this result are not replayed]";
  }
  if (!result.details.is_null()) tool_result.details = result.details;
  tool_result.is_error = result.is_error;
  body["content"] = content_of(tool_result);
  return tool_result;
}

// A tool call of the history with its final state (its result, when the history has one).
Json replayed_call(const ContentBlock& block, const AgentMessage* result, const std::string& cwd) {
  const ToolCallInfo info = tool_call_info(block.name, block.arguments, cwd);
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call";
  body["toolCallId"] = block.id;
  body["title"] = info.title;
  body["kind"] = info.kind;
  body["status"] = !result || result->is_error ? "failed" : "completed";
  session::ToolResult tool_result;
  if (result) tool_result = result_content(*result, body);
  Json locations = info.locations;
  // An edit's first changed line is known once it ran (tools.md section 4.3's details).
  if (block.name == "edit" && result && locations.is_array() && !locations.empty() &&
      result->details.is_object()) {
    const auto line = result->details.find("firstChangedLine");
    if (line != result->details.end() && line->is_number_integer() && *line >= 1 &&
        *line <= 4294967295LL)
      locations[0]["line"] = *line;
  }
  if (!locations.is_null()) body["locations"] = std::move(locations);
  body["rawInput"] = block.arguments.is_object() ? block.arguments : Json::object();
  if (result) body["rawOutput"] = pi_tool_result_json(tool_result);
  return body;
}

void replay_user(const AgentMessage& m, std::vector<Json>& out) {
  for (const auto& block : m.content) {
    if (block.kind == ContentBlock::Kind::text) {
      text_chunks("user_message_chunk", block.text, m.entry_id, out);
    } else if (block.kind == ContentBlock::Kind::image) {
      out.push_back(chunk("user_message_chunk", image_content(block), m.entry_id));
    }
  }
}

void replay_assistant(const AgentMessage& m,
                      const std::map<std::string, const AgentMessage*>& results,
                      const std::string& cwd, std::vector<Json>& out) {
  const bool error = m.stop_reason == StopReason::error;
  bool wrote_text = false;
  for (const auto& block : m.content) {
    if (block.kind == ContentBlock::Kind::text) {
      text_chunks("agent_message_chunk", block.text, m.entry_id, out);
      wrote_text = true;
    } else if (block.kind == ContentBlock::Kind::thinking && !error) {
      text_chunks("agent_thought_chunk", block.text, m.entry_id, out);
    }
  }
  if (error) {
    out.push_back(chunk("agent_message_chunk",
                        text_content((wrote_text ? "\n\nError: " : "Error: ") +
                                     m.error_message.value_or("Unknown error")),
                        m.entry_id + "-error"));
    return;
  }
  if (m.stop_reason == StopReason::aborted) return;
  for (const auto& block : m.content) {
    if (block.kind != ContentBlock::Kind::tool_call) continue;
    const auto found = results.find(block.id);
    out.push_back(replayed_call(block, found == results.end() ? nullptr : found->second, cwd));
  }
}

}  // namespace

void complete_replayed_calls(std::vector<Json>& updates, const std::vector<AgentMessage>& results) {
  for (const auto& result : results) {
    for (auto& body : updates) {
      if (body.value("sessionUpdate", "") != "tool_call" || body.contains("content") ||
          body.value("toolCallId", "") != result.tool_call_id)
        continue;
      body["status"] = result.is_error ? "failed" : "completed";
      const session::ToolResult shown = result_content(result, body);
      body["rawOutput"] = pi_tool_result_json(shown);
    }
  }
}

std::vector<Json> replay_updates(const std::vector<AgentMessage>& history, const std::string& cwd) {
  std::map<std::string, const AgentMessage*> results;
  for (const auto& m : history) {
    if (m.role == Role::tool_result) results[m.tool_call_id] = &m;
  }
  std::vector<Json> out;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const AgentMessage& m = history[i];
    if (m.role == Role::user) {
      replay_user(m, out);
      continue;
    }
    if (!m.is_assistant()) continue;  // tool results complete their call; the rest is not shown
    // An attempt that was retried: the next message on the path is the retry's.
    if (m.stop_reason == StopReason::error && i + 1 < history.size() &&
        history[i + 1].is_assistant())
      continue;
    replay_assistant(m, results, cwd, out);
  }
  return out;
}

}  // namespace rebound::server::acp
