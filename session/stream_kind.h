#pragma once
// What happens while an assistant message streams in: a content block starts, grows or ends
// (the nine kinds a message_update carries, session/event.h), the usage so far, and the end
// (done or error). One enum for the providers' stream events (session/llm/provider.h) and the
// session's message updates, with its wire names beside it. Pure.

#include <string_view>

#include "protocol/name_table.h"

namespace rebound::session {

enum class StreamKind {
  text_start,
  text_delta,
  text_end,
  thinking_start,
  thinking_delta,
  thinking_end,
  toolcall_start,
  toolcall_delta,
  toolcall_end,
  usage,  // usage so far (replaces the previous figures)
  done,   // finished; stop_reason says how
  error,  // failed; text holds the errorMessage (retry.md section 2 wording)
};

/// The block kinds' names as `assistantMessageEvent.type` writes them (protocol.md section 5).
inline constexpr protocol::Named<StreamKind> kStreamKindNames[] = {
    {StreamKind::text_start, "text_start"},
    {StreamKind::text_delta, "text_delta"},
    {StreamKind::text_end, "text_end"},
    {StreamKind::thinking_start, "thinking_start"},
    {StreamKind::thinking_delta, "thinking_delta"},
    {StreamKind::thinking_end, "thinking_end"},
    {StreamKind::toolcall_start, "toolcall_start"},
    {StreamKind::toolcall_delta, "toolcall_delta"},
    {StreamKind::toolcall_end, "toolcall_end"}};

}  // namespace rebound::session
