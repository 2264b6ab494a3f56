#pragma once
// The JSON Schema subset of `--json-schema` (oneshot.md sections 11.1, 11.3 and 11.4): the
// start-up check of a schema (an object schema at the root, only the supported keywords) and the
// validation of a structured output against it, its problems in the spec's order and words.
// Pure: no I/O; patterns compiled once with the grep engine (PCRE2, limits against runaway
// backtracking), unanchored, `^`/`$` at the string's ends.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "session/error.h"

namespace rebound::tools {
class Regex;
}

namespace rebound::server::oneshot {

/// One problem of an instance: the JSON Pointer of the value (`(root)` for the root) and the
/// text of section 11.4's table.
struct SchemaProblem {
  std::string pointer;
  std::string text;
};

class JsonSchema {
 public:
  /// The schema checked as section 11.1 and 11.3 say, or the stderr text after `rebound: `
  /// (`--json-schema: …`).
  static session::Result<JsonSchema> compile(protocol::Json schema);

  /// Every problem of `instance`, in section 11.4's order (none: it matches).
  std::vector<SchemaProblem> validate(const protocol::Json& instance) const;
  const protocol::Json& schema() const { return *schema_; }

 private:
  explicit JsonSchema(protocol::Json schema);
  void check(const protocol::Json& schema, const protocol::Json& value, const std::string& pointer,
             std::vector<SchemaProblem>& out, int depth) const;
  const protocol::Json* resolve(const std::string& ref) const;

  std::shared_ptr<const protocol::Json> schema_;
  std::shared_ptr<std::map<std::string, std::shared_ptr<const tools::Regex>>> patterns_;
};

/// The text of `problems` as the model gets it: `Structured output does not match the schema:`
/// and one `- <pointer>: <text>` line per problem, at most five.
std::string problems_text(const std::vector<SchemaProblem>& problems);

}  // namespace rebound::server::oneshot
