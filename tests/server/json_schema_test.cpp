// --json-schema's subset (oneshot.md sections 11.1, 11.3, 11.4): the start-up check of a schema,
// and each keyword's problem text, pointer and order.

#include "server/oneshot/json_schema.h"

#include <doctest/doctest.h>

#include <variant>

using namespace rebound;
using protocol::Json;
using server::oneshot::JsonSchema;
using server::oneshot::SchemaProblem;

namespace {

std::string compile_error(const std::string& schema) {
  auto made = JsonSchema::compile(Json::parse(schema));
  const auto* error = (made ? nullptr : &made.error().message);
  return error ? *error : std::string();
}

// The problems as "- pointer: text" lines.
std::vector<std::string> problems(const std::string& schema, const std::string& instance) {
  auto made = JsonSchema::compile(Json::parse(schema));
  REQUIRE(made.ok());
  std::vector<std::string> out;
  for (const SchemaProblem& p : made.value().validate(Json::parse(instance)))
    out.push_back("- " + p.pointer + ": " + p.text);
  return out;
}

const char* kRootError = R"(--json-schema: the root must be an object schema ("type":"object"))";

}  // namespace

TEST_CASE("json-schema: the root must be an object schema, then only supported keywords") {
  CHECK(compile_error(R"({"type":"array"})") == kRootError);
  CHECK(compile_error(R"({"type":["object","null"]})") == kRootError);
  CHECK(compile_error(R"({"properties":{}})") == kRootError);
  CHECK(compile_error("true") == kRootError);
  CHECK(compile_error(R"([1])") == kRootError);
  // The root check comes before the keywords.
  CHECK(compile_error(R"({"type":"string","oneOf":[]})") == kRootError);
  CHECK(compile_error(R"({"type":"object","oneOf":[{"type":"object"}]})") ==
        "--json-schema: unsupported keyword 'oneOf' at (root)");
  CHECK(compile_error(
            R"({"type":"object","properties":{"a/b":{"type":"integer","multipleOf":2}}})") ==
        "--json-schema: unsupported keyword 'multipleOf' at /properties/a~1b");
  CHECK(compile_error(R"({"type":"object","$defs":{"x":{"uniqueItems":true}}})") ==
        "--json-schema: unsupported keyword 'uniqueItems' at /$defs/x");
  CHECK(compile_error(R"({"type":"object","items":{"not":{}}})") ==
        "--json-schema: unsupported keyword 'not' at /items");
  CHECK(compile_error(R"({"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}})") ==
        R"(--json-schema: unresolvable $ref "#/$defs/missing" at /properties/a)");
  CHECK(compile_error(R"({"type":"object","required":"a"})") ==
        "--json-schema: 'required' must be an array of strings at (root)");
  CHECK(compile_error(R"({"type":"object","pattern":"("})")
            .rfind(R"(--json-schema: invalid pattern "(" at (root): )", 0) == 0);
  // Annotations pass, and a fine schema compiles.
  CHECK(compile_error(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
      "title":"t","description":"d","properties":{"a":{"type":"string","format":"email",
      "default":"x","examples":["y"],"deprecated":false,"readOnly":true,"writeOnly":false}}})")
            .empty());
}

TEST_CASE("json-schema: the spec's example, required before additionalProperties") {
  CHECK(problems(R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"],
                     "additionalProperties":false})",
                 R"({"nom":"x"})") ==
        std::vector<std::string>{"- (root): missing required property 'name'",
                                 "- (root): property 'nom' is not allowed"});
}

TEST_CASE("json-schema: each keyword's text and pointer") {
  const char* schema = R"({"type":"object","properties":{
      "n":{"type":"integer","minimum":1,"exclusiveMaximum":10},
      "x":{"type":["string","null"]},
      "e":{"enum":["a",1]},
      "c":{"const":{"k":[1,2]}},
      "s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-z]+$"},
      "l":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"boolean"}},
      "o":{"type":"object","additionalProperties":{"type":"number"}},
      "a":{"anyOf":[{"type":"string"},{"type":"number"}]},
      "f":false,
      "r":{"$ref":"#/$defs/pos"}},
    "$defs":{"pos":{"type":"number","exclusiveMinimum":0}}})";
  CHECK(problems(schema, R"({"n":1.0,"x":null,"e":1.0,"c":{"k":[1,2.0]},"s":"ab","l":[true],
                            "o":{"p":1},"a":2,"r":0.5})")
            .empty());
  CHECK(problems(schema, R"({"n":1.5})") ==
        std::vector<std::string>{"- /n: expected integer, got number"});
  CHECK(problems(schema, R"({"n":0,"x":3,"e":"b","c":{"k":[2,1]}})") ==
        std::vector<std::string>{
            "- /n: expected a number >= 1", "- /x: expected string or null, got number",
            R"(- /e: expected one of ["a",1])", R"(- /c: expected {"k":[1,2]})"});
  CHECK(
      problems(schema, R"({"n":10,"s":"A","l":[1,true,false],"o":{"p":"q"},"a":[],"f":1,"r":0})") ==
      std::vector<std::string>{
          "- /n: expected a number < 10", "- /s: expected at least 2 characters, got 1",
          R"(- /s: does not match the pattern "^[a-z]+$")", "- /l: expected at most 2 items, got 3",
          "- /l/0: expected boolean, got number", "- /o/p: expected number, got string",
          "- /a: does not match any of the anyOf schemas", "- /f: no value is allowed here",
          "- /r: expected a number > 0"});
  // Code points, not bytes.
  CHECK(problems(schema, R"({"s":"äöüß"})") ==
        std::vector<std::string>{"- /s: expected at most 3 characters, got 4",
                                 R"(- /s: does not match the pattern "^[a-z]+$")"});
  CHECK(problems(schema, R"({"l":[]})") ==
        std::vector<std::string>{"- /l: expected at least 1 items, got 0"});
  CHECK(problems(schema, "[]") == std::vector<std::string>{"- (root): expected object, got array"});
}

TEST_CASE("json-schema: allOf in order, a $ref loop ends, five lines at most in the text") {
  CHECK(problems(R"({"type":"object","allOf":[{"required":["a"]},{"required":["b"]}]})", "{}") ==
        std::vector<std::string>{"- (root): missing required property 'a'",
                                 "- (root): missing required property 'b'"});
  CHECK(!problems(R"({"type":"object","properties":{"x":{"$ref":"#/$defs/l"}},
                      "$defs":{"l":{"$ref":"#/$defs/l"}}})",
                  R"({"x":1})")
             .empty());
  std::vector<SchemaProblem> many(7, SchemaProblem{"(root)", "x"});
  const std::string text = server::oneshot::problems_text(many);
  CHECK(text.rfind("Structured output does not match the schema:\n- (root): x\n", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 5);
}
