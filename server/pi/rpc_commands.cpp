// The rpc mode's command table (protocol.md section 2): each command is one registration of
// its name, its argument reader and its handler, and the response shapes are built here, in
// this one layer. Texts of errors come from the session's Error values.

#include <nlohmann/json.hpp>

#include "server/events/event_output.h"
#include "server/events/pi_encoder.h"
#include "server/pi/command_table.h"
#include "server/pi/rpc_dialogs.h"
#include "session/agent_session.h"
#include "session/mcp_control.h"

namespace rebound::server {

using protocol::Json;
using C = CommandContext;

namespace {

Json stats_json(const session::AgentSession& s) {
  const auto st = s.stats();
  Json data = Json::object();
  if (s.session_file()) data["sessionFile"] = *s.session_file();
  data["sessionId"] = s.session_id();
  data["userMessages"] = st.user_messages;
  data["assistantMessages"] = st.assistant_messages;
  data["toolCalls"] = st.tool_calls;
  data["toolResults"] = st.tool_results;
  data["totalMessages"] = st.total_messages;
  data["tokens"] = Json{{"input", st.tokens.input},
                        {"output", st.tokens.output},
                        {"cacheRead", st.tokens.cache_read},
                        {"cacheWrite", st.tokens.cache_write},
                        {"total", st.tokens.total_tokens}};
  data["cost"] = protocol::json_number(st.tokens.cost_total);
  return data;
}

Json bash_json(const protocol::AgentMessage& m) {
  Json data = Json::object();
  data["output"] = m.output;
  data["exitCode"] = m.exit_code ? Json(*m.exit_code) : Json(nullptr);
  data["cancelled"] = m.cancelled;
  data["truncated"] = m.truncated;
  if (m.full_output_path) data["fullOutputPath"] = *m.full_output_path;
  return data;
}

session::UserInput input_of(protocol::MessageArgs& a) {
  session::UserInput input;
  input.text = std::move(a.message);
  input.images = std::move(a.images);
  return input;
}

}  // namespace

namespace {

// The prompting commands: answered when accepted; the run's events follow.
void add_prompting_commands(CommandTable& t) {
  using namespace protocol;
  // Answered once accepted, after the message's UserPromptSubmit hooks (extensions.md 5.1).
  const auto submit = [](C& c, MessageArgs& a, Reply r, session::SubmitKind kind) {
    auto pending = std::make_shared<Reply>(std::move(r));
    c.session.submit(input_of(a), kind, a.streaming_behavior, [pending](session::Status status) {
      if (status) {
        pending->ok();
      } else {
        pending->fail(status.error());
      }
    });
  };
  t.add<MessageArgs>("prompt", read_prompt_args, [submit](C& c, MessageArgs a, Reply r) {
    submit(c, a, std::move(r), session::SubmitKind::prompt);
  });
  t.add<MessageArgs>("steer", read_message_args, [submit](C& c, MessageArgs a, Reply r) {
    submit(c, a, std::move(r), session::SubmitKind::steer);
  });
  t.add<MessageArgs>("follow_up", read_message_args, [submit](C& c, MessageArgs a, Reply r) {
    submit(c, a, std::move(r), session::SubmitKind::follow_up);
  });
  t.add("abort", [](C& c, Reply r) {
    // Open dialogs resolve to their defaults (extensions.md section 8).
    if (c.dialogs) c.dialogs->cancel_all();
    // Answered once the run has ended (after running tool calls' abort results).
    auto pending = std::make_shared<Reply>(std::move(r));
    c.session.abort([pending] { pending->ok(); });
  });
}

// Reading the session's state.
void add_state_commands(CommandTable& t) {
  using namespace protocol;
  t.add("get_state", [](C& c, Reply r) { r.ok(to_json(c.session.state())); });
  t.add("get_messages", [](C& c, Reply r) {
    r.ok(Json{{"messages", to_json(c.session.messages())}});
  });
  t.add("get_last_assistant_text", [](C& c, Reply r) {
    const auto text = c.session.last_assistant_text();
    r.ok(text ? Json{{"text", *text}} : Json::object());
  });
  t.add("get_session_stats", [](C& c, Reply r) { r.ok(stats_json(c.session)); });
  t.add("get_tools", [](C& c, Reply r) {
    // Each tool exactly as sent to OpenAI's `function` object (tools.md section 9).
    Json tools = Json::array();
    for (const auto& d : c.session.tool_definitions())
      tools.push_back(
          Json{{"name", d.name}, {"description", d.description}, {"parameters", d.parameters}});
    r.ok(Json{{"tools", std::move(tools)}});
  });
}

// MCP servers (mcp.md section 8).
void add_mcp_commands(CommandTable& t) {
  using namespace protocol;
  t.add<McpServersArgs>(
      "get_mcp_servers", read_mcp_servers_args, [](C& c, McpServersArgs a, Reply r) {
        if (!c.mcp) {
          r.ok(Json{{"servers", Json::array()}});
          return;
        }
        if (!a.wait) {
          r.ok(c.mcp->servers_json());
          return;
        }
        auto pending = std::make_shared<Reply>(std::move(r));
        session::McpControl* manager = c.mcp;
        manager->after_settled([pending, manager] { pending->ok(manager->servers_json()); });
      });
  t.add<RestartMcpServerArgs>(
      "restart_mcp_server", read_restart_mcp_server_args,
      [](C& c, RestartMcpServerArgs a, Reply r) {
        if (!c.mcp) {
          r.fail(session::Error{session::ErrorKind::not_found, "MCP server not found: " + a.name});
          return;
        }
        auto pending = std::make_shared<Reply>(std::move(r));
        if (auto error =
                c.mcp->restart(a.name, [pending](Json server) { pending->ok(std::move(server)); }))
          pending->fail(session::Error{session::ErrorKind::not_found, *error});
      });
}

// Extensions (extensions.md sections 6.1, 7.1, 7.2).
void add_extension_commands(CommandTable& t) {
  using namespace protocol;
  t.add<ExtensionsArgs>(
      "get_extensions", read_mcp_servers_args, [](C& c, ExtensionsArgs a, Reply r) {
        if (!c.extensions) {
          r.ok(Json{{"extensions", Json::array()}, {"hooks", Json::array()}});
          return;
        }
        auto pending = std::make_shared<Reply>(std::move(r));
        c.extensions->list(a.wait, [pending](Json j) { pending->ok(std::move(j)); });
      });
  t.add<RestartExtensionArgs>(
      "restart_extension", read_restart_mcp_server_args, [](C& c, RestartExtensionArgs a, Reply r) {
        if (!c.extensions) {
          r.fail(session::Error{session::ErrorKind::not_found, "Extension not found: " + a.name});
          return;
        }
        auto pending = std::make_shared<Reply>(std::move(r));
        c.extensions->restart(a.name, [pending](session::Result<Json> info) {
          if (!info) return pending->fail(info.error());
          pending->ok(std::move(*info));
        });
      });
  // The permission policy (policy.md section 7): answered at once, also while a run streams.
  t.add<McpServersArgs>("get_policy", read_mcp_servers_args, [](C& c, McpServersArgs a, Reply r) {
    if (!c.policy) return r.fail(session::Error{session::ErrorKind::failed, "No policy"});
    auto pending = std::make_shared<Reply>(std::move(r));
    c.policy->describe(a.wait, [pending](Json j) { pending->ok(std::move(j)); });
  });
  t.add<PermissionModeArgs>(
      "set_permission_mode", read_permission_mode_args, [](C& c, PermissionModeArgs a, Reply r) {
        if (!c.policy || !c.policy->set_mode(a.mode))
          return r.fail(session::Error{session::ErrorKind::failed, "No policy"});
        r.ok(Json{{"mode", a.mode}});
      });
  // The slash commands a prompt can name (extensions.md section 7.5, sessions.md section 11).
  t.add("get_commands", [](C& c, Reply r) {
    Json commands = Json::array();
    for (auto& entry : c.session.command_list())
      commands.push_back(std::move(entry));
    r.ok(Json{{"commands", std::move(commands)}});
  });
  // An answer, not a command: no response line (section 6.1).
  t.add<UiResponseArgs>(
      "extension_ui_response", read_ui_response_args, [](C& c, UiResponseArgs a, Reply r) {
        if (c.dialogs)
          c.dialogs->answer(a.id,
                            session::DialogAnswer{std::move(a.value), a.confirmed, a.cancelled});
        r.acknowledge();
      });
}

// Models and thinking.
void add_models_commands(CommandTable& t) {
  using namespace protocol;
  t.add("get_available_models", [](C& c, Reply r) {
    Json models = Json::array();
    for (const auto& m : c.session.available_models())
      models.push_back(to_json(m));
    r.ok(Json{{"models", std::move(models)}});
  });
  t.add<SetModelArgs>("set_model", read_set_model_args, [](C& c, SetModelArgs a, Reply r) {
    auto model = c.session.set_model(a.provider, a.model_id);
    if (!model) {
      r.fail(model.error());
    } else {
      r.ok(to_json(*model));
    }
  });
  t.add("cycle_model", [](C& c, Reply r) {
    const auto next = c.session.cycle_model();
    if (!next) {
      r.ok(Json(nullptr));
      return;
    }
    Json data = Json::object();
    data["model"] = to_json(next->model);
    data["thinkingLevel"] = to_string(next->thinking_level);
    data["isScoped"] = false;
    r.ok(std::move(data));
  });
  t.add<ThinkingLevelArgs>("set_thinking_level", read_thinking_level_args,
                           [](C& c, ThinkingLevelArgs a, Reply r) {
                             c.session.set_thinking_level(a.level);
                             r.ok();
                           });
  t.add("cycle_thinking_level", [](C& c, Reply r) {
    const auto level = c.session.cycle_thinking_level();
    r.ok(level ? Json{{"level", to_string(*level)}} : Json(nullptr));
  });
}

// Queue modes.
void add_queue_modes_commands(CommandTable& t) {
  using namespace protocol;
  t.add<QueueModeArgs>("set_steering_mode", read_queue_mode_args,
                       [](C& c, QueueModeArgs a, Reply r) {
                         c.session.set_steering_mode(a.mode);
                         r.ok();
                       });
  t.add<QueueModeArgs>("set_follow_up_mode", read_queue_mode_args,
                       [](C& c, QueueModeArgs a, Reply r) {
                         c.session.set_follow_up_mode(a.mode);
                         r.ok();
                       });
  t.add<InterruptModeArgs>("set_interrupt_mode", read_interrupt_mode_args,
                           [](C& c, InterruptModeArgs a, Reply r) {
                             c.session.set_interrupt_mode(a.mode);
                             r.ok();
                           });
}

// Retry, retry control (retry.md sections 11 to 17) and compaction.
void add_retry_and_compaction_commands(CommandTable& t) {
  using namespace protocol;
  t.add<EnabledArgs>("set_auto_retry", read_enabled_args, [](C& c, EnabledArgs a, Reply r) {
    c.session.set_auto_retry(a.enabled, c.persist_settings);
    r.ok();
  });
  t.add("abort_retry", [](C& c, Reply r) {
    c.session.abort_retry();
    r.ok();
  });
  // Retry control (retry.md sections 11 to 17).
  t.add("get_retry_state", [](C& c, Reply r) { r.ok(c.session.retry_state_json()); });
  t.add_object("set_retry_policy", [](C& c, const Json& command, Reply r) {
    auto policy = c.session.set_retry_policy(command);
    if (!policy) {
      r.fail(policy.error());
    } else {
      r.ok(std::move(*policy));
    }
  });
  t.add("retry_now", [](C& c, Reply r) {
    // The answer is written before the continued run's agent_start.
    c.session.retry_now([&r](const Json& data) { r.ok(data); });
  });
  t.add<EnabledArgs>("set_auto_compaction", read_enabled_args, [](C& c, EnabledArgs a, Reply r) {
    c.session.set_auto_compaction(a.enabled);
    r.ok();
  });
  t.add<CompactArgs>("compact", read_compact_args, [](C& c, CompactArgs a, Reply r) {
    // Answered when the summary is in (or fails); other commands go on meanwhile.
    auto pending = std::make_shared<Reply>(std::move(r));
    c.session.compact(a.custom_instructions,
                      [pending](session::Result<session::CompactionResult> result) {
                        if (!result) {
                          pending->fail(result.error());
                        } else {
                          pending->ok(pi_compaction_result_json(*result));
                        }
                      });
  });
}

// Sessions, the event filter and bash.
void add_sessions_and_output_commands(CommandTable& t) {
  using namespace protocol;
  // Both abort a running tool batch first and answer after its agent_end (tools.md section 7).
  t.add<NewSessionArgs>("new_session", read_new_session_args, [](C& c, NewSessionArgs a, Reply r) {
    auto pending = std::make_shared<Reply>(std::move(r));
    c.session.new_session(a.parent_session, [pending] {
      pending->ok(Json{{"cancelled", false}});  // no hook can veto it here (docs/decisions.md)
    });
  });
  t.add<SwitchSessionArgs>(
      "switch_session", read_switch_session_args, [](C& c, SwitchSessionArgs a, Reply r) {
        auto pending = std::make_shared<Reply>(std::move(r));
        c.session.switch_session(a.session_path, [pending](session::Status status) {
          if (!status) {
            pending->fail(status.error());
          } else {
            pending->ok(Json{{"cancelled", false}});
          }
        });
      });

  // The session tree (sessions.md sections 3 to 6).
  t.add("get_fork_messages", [](C& c, Reply r) {
    auto messages = c.session.fork_messages();
    if (!messages) return r.fail(messages.error());
    Json list = Json::array();
    for (auto& m : *messages)
      list.push_back(Json{{"entryId", std::move(m.entry_id)}, {"text", std::move(m.text)}});
    r.ok(Json{{"messages", std::move(list)}});
  });
  t.add<ForkArgs>("fork", read_fork_args, [](C& c, ForkArgs a, Reply r) {
    auto pending = std::make_shared<Reply>(std::move(r));
    c.session.fork(a.entry_id, [pending](session::Result<std::string> text) {
      if (!text) return pending->fail(text.error());
      pending->ok(Json{{"text", std::move(*text)}, {"cancelled", false}});
    });
  });
  t.add("clone", [](C& c, Reply r) {
    auto pending = std::make_shared<Reply>(std::move(r));
    c.session.clone([pending](session::Status status) {
      if (!status) return pending->fail(status.error());
      pending->ok(Json{{"cancelled", false}});
    });
  });
  t.add<SessionNameArgs>("set_session_name", read_session_name_args,
                         [](C& c, SessionNameArgs a, Reply r) {
                           auto status = c.session.set_session_name(a.name);
                           if (!status) return r.fail(status.error());
                           r.ok();
                         });
  t.add<EntriesArgs>("get_entries", read_entries_args, [](C& c, EntriesArgs a, Reply r) {
    // Built as text from the file's lines: the answer is held once (issue 50).
    auto page = c.session.entries(a.since);
    if (!page) return r.fail(page.error());
    r.ok_text([&](std::string& out) { page->append_json(out); });
  });

  // export_html (sessions.md section 12): answered at once, also during a run.
  t.add<ExportHtmlArgs>("export_html", read_export_html_args, [](C& c, ExportHtmlArgs a, Reply r) {
    auto path = c.session.export_html(a.output_path);
    if (!path) return r.fail(path.error());
    r.ok(Json{{"path", std::move(*path)}});
  });

  // The connection's event filter (protocol.md section 8); it applies from this response on.
  t.add<EventFilterArgs>(
      "set_event_filter", read_event_filter_args, [](C& c, EventFilterArgs a, Reply r) {
        Json data = Json::object();
        data["events"] = a.events ? Json(*a.events) : Json(nullptr);
        data["messageUpdates"] = a.delta_updates ? "delta" : "full";
        if (!c.events) {
          r.fail(session::Error{session::ErrorKind::failed, "No event output on this connection"});
          return;
        }
        c.events->set_filter(EventFilter{std::move(a.events), a.delta_updates});
        r.ok(std::move(data));
      });

  // bash: answered when the command ends; other commands go on meanwhile.
  t.add<BashArgs>("bash", read_bash_args, [](C& c, BashArgs a, Reply r) {
    auto pending = std::make_shared<Reply>(std::move(r));
    auto status = c.session.bash(
        a.command, [pending](const protocol::AgentMessage& m) { pending->ok(bash_json(m)); });
    if (!status) pending->fail(status.error());
  });
  t.add("abort_bash", [](C& c, Reply r) {
    c.session.abort_bash();
    r.ok();
  });
}

}  // namespace

CommandTable rpc_command_table() {
  CommandTable t;
  add_prompting_commands(t);
  add_state_commands(t);
  add_mcp_commands(t);
  add_extension_commands(t);
  add_models_commands(t);
  add_queue_modes_commands(t);
  add_retry_and_compaction_commands(t);
  add_sessions_and_output_commands(t);
  return t;
}

}  // namespace rebound::server
