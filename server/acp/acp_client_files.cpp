// The gate's file work through the client (acp.md section 7.4): read through
// fs/read_text_file, write through fs/write_text_file, edit by reading, editing the text and
// writing it back (each half through the client when it offers it, else locally through the
// tools' file layer).

#include <utility>

#include "server/acp/acp_gate.h"
#include "server/acp/acp_gate_call.h"
#include "tools/builtin_tools.h"
#include "tools/edit_core.h"
#include "tools/file_io.h"
#include "tools/paths.h"
#include "tools/tool_args.h"

namespace rebound::server::acp {

using session::ToolResult;

namespace {

// The client's answer to a file request: the error text, or none.
std::optional<std::string> client_error(const Json& answer) {
  if (const auto error = answer.find("error"); error != answer.end()) {
    if (error->is_object() && error->contains("message") && (*error)["message"].is_string())
      return (*error)["message"].get<std::string>();
    return std::string("The client could not do it");
  }
  return std::nullopt;
}

// The text of a successful fs/read_text_file answer.
std::optional<std::string> read_content(const Json& answer) {
  const auto result = answer.find("result");
  if (result == answer.end() || !result->is_object()) return std::nullopt;
  const auto content = result->find("content");
  if (content == result->end() || !content->is_string()) return std::nullopt;
  return content->get<std::string>();
}

constexpr const char* kNoContent = "The client's fs/read_text_file answer has no content text";

ToolResult could_not_edit(const std::string& given, int error) {
  return ToolResult::error("Could not edit file: " + given +
                           ". Error code: " + tools::errno_name(error) + ".");
}

}  // namespace

void ToolGate::call_client(const Call& call, const char* method, const std::string& path,
                           const std::string* content, protocol::JsonRpcPeer::Answer answer) {
  Json params = Json::object();
  params["sessionId"] = call->session_id;
  params["path"] = path;
  if (content) params["content"] = *content;
  call->waiting = true;
  std::weak_ptr<bool> alive = alive_;
  env_.request_client(method, std::move(params),
                      [alive, call, answer = std::move(answer)](const Json& response) {
                        // A call that ended meanwhile (cancelled, its session gone) ignores it.
                        if (take_answer(alive, call)) answer(response);
                      });
}

void ToolGate::client_read(const Call& call) {
  const std::string abs =
      tools::resolve_path(tools::string_arg(call->args, "path"), call->context.cwd);
  call_client(call, "fs/read_text_file", abs, nullptr, [this, call](const Json& answer) {
    if (auto error = client_error(answer)) return finish(call, ToolResult::error(*error));
    const auto text = read_content(answer);
    if (!text) return finish(call, ToolResult::error(kNoContent));
    finish(call, tools::read_text(call->args, *text));
  });
}

void ToolGate::client_write(const Call& call) {
  const std::string given = tools::string_arg(call->args, "path");
  const std::string abs = tools::resolve_path(given, call->context.cwd);
  const std::string content = tools::string_arg(call->args, "content");
  auto write = [this, call, given, abs, content] {
    if (call->dead || call->finished) return;
    // Rebound makes the parent directories itself (section 7.4).
    std::string failed_dir;
    if (const int err = tools::make_parent_dirs(abs, failed_dir, call->context.open_file))
      return finish(call, ToolResult::error(tools::fs_error(err, "mkdir", failed_dir)));
    call_client(call, "fs/write_text_file", abs, &content,
                [this, call, given, content](const Json& answer) {
                  if (auto error = client_error(answer))
                    return finish(call, ToolResult::error(*error));
                  if (ToolState* state = state_of(call)) state->after = content;
                  finish(call,
                         tools::text_result("Successfully wrote " + std::to_string(content.size()) +
                                            " bytes to " + given));
                });
  };
  if (!env_.caps.fs_read) return write();
  // The diff's "before" is read the way the tool reads (acp.md section 15): through the client;
  // a file it cannot read counts as new.
  call_client(call, "fs/read_text_file", abs, nullptr, [this, call, write](const Json& answer) {
    if (ToolState* state = state_of(call))
      state->before = client_error(answer) ? std::nullopt : read_content(answer);
    write();
  });
}

void ToolGate::client_edit(const Call& call) {
  const std::string given = tools::string_arg(call->args, "path");
  const std::string abs = tools::resolve_path(given, call->context.cwd);
  bool any = false;
  for (const auto& e : call->args.value("edits", Json::array()))
    any = any || e.is_object();
  if (!any)
    return finish(call,
                  ToolResult::error("Edit tool input is invalid. edits must contain at least one "
                                    "replacement."));
  if (env_.caps.fs_read) {
    call_client(call, "fs/read_text_file", abs, nullptr, [this, call](const Json& answer) {
      if (auto error = client_error(answer)) return finish(call, ToolResult::error(*error));
      const auto text = read_content(answer);
      if (!text) return finish(call, ToolResult::error(kNoContent));
      edit_text(call, *text);
    });
    return;
  }
  read_local(call, abs, [this, call, given](std::optional<std::string> text, int error) {
    if (!text) return finish(call, could_not_edit(given, error ? error : ENOENT));
    edit_text(call, *text);
  });
}

// Edits the text, then writes it back (through the client, or locally in the write queue).
void ToolGate::edit_text(const Call& call, const std::string& original) {
  if (call->dead || call->finished) return;
  const std::string given = tools::string_arg(call->args, "path");
  const std::string abs = tools::resolve_path(given, call->context.cwd);
  std::vector<tools::TextEdit> edits;
  for (const auto& e : call->args.value("edits", Json::array())) {
    if (e.is_object())
      edits.push_back({tools::string_arg(e, "oldText"), tools::string_arg(e, "newText")});
  }
  tools::EditOutcome outcome = tools::apply_edits(original, edits, given);
  if (outcome.error) return finish(call, ToolResult::error(std::move(*outcome.error)));
  if (ToolState* state = state_of(call)) state->before = original;
  ToolResult done = tools::text_result("Successfully replaced " + std::to_string(edits.size()) +
                                       " block(s) in " + given + ".");
  done.details = Json{{"diff", outcome.diff}, {"firstChangedLine", outcome.first_changed_line}};
  auto written = [this, call, content = outcome.content, done]() mutable {
    if (ToolState* state = state_of(call)) state->after = content;
    finish(call, std::move(done));
  };
  if (!env_.caps.fs_write) {
    std::string content = outcome.content;
    write_local(call, abs, std::move(content), [this, call, given, written](int error) mutable {
      if (error) return finish(call, could_not_edit(given, error));
      written();
    });
    return;
  }
  call_client(call, "fs/write_text_file", abs, &outcome.content,
              [this, call, written](const Json& answer) mutable {
                if (auto error = client_error(answer))
                  return finish(call, ToolResult::error(*error));
                written();
              });
}

}  // namespace rebound::server::acp
