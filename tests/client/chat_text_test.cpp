#include "client/chat_text.h"

#include <doctest/doctest.h>

using namespace rebound::chat;

TEST_CASE("the retry line rounds the remaining time to whole seconds") {
  CHECK(retry_status(1, 3, 2000) == "Retrying (1/3) in 2s… (esc to cancel)");
  CHECK(retry_status(2, 3, 3499) == "Retrying (2/3) in 3s… (esc to cancel)");
  CHECK(retry_status(2, 3, 3500) == "Retrying (2/3) in 4s… (esc to cancel)");
  CHECK(retry_status(3, 3, -20) == "Retrying (3/3) in 0s… (esc to cancel)");
  CHECK(retry_status(1, 3, 8000, true) ==
        "Retrying (1/3) in 8s… (esc to cancel, ctrl-r to retry now)");
}

TEST_CASE("the failure line") {
  CHECK(retry_failed(1, "Retry cancelled") == "Retry failed after 1 attempts: Retry cancelled");
  CHECK(retry_failed(3, "503 overloaded", "overloaded") ==
        "Retry failed after 3 attempts: 503 overloaded (overloaded)");
}

TEST_CASE("hook lines: context, notices, extension errors") {
  CHECK(hook_context("Stop hook feedback:\nrun the tests") ==
        "[hook] Stop hook feedback:\nrun the tests");
  CHECK(notice("warning", "Operation stopped by hook: enough") ==
        "[warning] Operation stopped by hook: enough");
  CHECK(notice("", "PreToolUse:bash says: ok") == "[info] PreToolUse:bash says: ok");
  CHECK(extension_error("hook:guard.sh", "PreToolUse", "Hook timed out after 30000 ms") ==
        "[extension error] hook:guard.sh (PreToolUse): Hook timed out after 30000 ms");
}

TEST_CASE("local commands: a leading colon, the word and the trimmed rest, and the fork list") {
  using rebound::chat::local_command;
  CHECK(local_command(":fork")->word == "fork");
  CHECK(local_command(":fork 2")->arg == "2");
  CHECK(local_command(":name   Nightly run  ")->arg == "Nightly run");
  CHECK_FALSE(local_command("/review").has_value());
  CHECK_FALSE(local_command(": not a command").has_value());
  CHECK_FALSE(local_command(":").has_value());
  CHECK(rebound::chat::fork_list({}) == "(nothing to fork from yet)\n");
  CHECK(rebound::chat::fork_list({"first\nsecond line", std::string(70, 'x')}) ==
        "  1  first\n  2  " + std::string(57, 'x') + "...\n");
}
