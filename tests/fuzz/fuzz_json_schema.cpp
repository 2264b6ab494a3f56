// --json-schema (oneshot.md sections 11.1, 11.3, 11.4): the input's NUL-separated parts are a
// schema, then instances (a model's structured_output arguments). Compiling and validating
// never throw or crash; a compiled schema has an object root whose `type` is "object"; every
// problem has a pointer that is `(root)` or starts with `/`; the model's text lists the first
// five problems; an instance is accepted exactly when it has no problem, and judging it twice gives
// the same problems.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "protocol/json_line.h"
#include "server/oneshot/json_schema.h"
#include "split_input.h"

using namespace rebound;
using server::oneshot::JsonSchema;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_at_nul(data, size, 8);
  const auto schema = protocol::parse_json_line(parts[0]);
  if (!schema.value) return 0;
  auto made = JsonSchema::compile(*schema.value);
  if (const auto* error = (made ? nullptr : &made.error().message)) {
    if (error->rfind("--json-schema: ", 0) != 0) std::abort();
    return 0;
  }
  const JsonSchema& compiled = made.value();
  if (!compiled.schema().is_object() ||
      compiled.schema().value("type", protocol::Json()) != "object")
    std::abort();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto instance = protocol::parse_json_line(parts[i]);
    if (!instance.value) continue;
    const auto problems = compiled.validate(*instance.value);
    for (const auto& p : problems) {
      if (p.text.empty()) std::abort();
      if (p.pointer != "(root)" && (p.pointer.empty() || p.pointer[0] != '/')) std::abort();
    }
    // The first five problems, each after "\n- " (a property name may hold a line feed itself).
    std::string expected = "Structured output does not match the schema:";
    for (std::size_t k = 0; k < problems.size() && k < 5; ++k)
      expected += "\n- " + problems[k].pointer + ": " + problems[k].text;
    if (server::oneshot::problems_text(problems) != expected) std::abort();
    const auto again = compiled.validate(*instance.value);
    if (again.size() != problems.size()) std::abort();
  }
  return 0;
}
