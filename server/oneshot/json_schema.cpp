#include "server/oneshot/json_schema.h"

#include <cmath>
#include <set>
#include <string_view>
#include <utility>
#include <variant>

#include "protocol/json_line.h"
#include "tools/regex.h"

namespace rebound::server::oneshot {

using protocol::Json;

namespace {

// Deeper than this the schema (a $ref loop) or the instance is not followed (a problem).
constexpr int kMaxDepth = 200;

const std::set<std::string, std::less<>> kKeywords = {"type",
                                                      "enum",
                                                      "const",
                                                      "properties",
                                                      "required",
                                                      "additionalProperties",
                                                      "items",
                                                      "minItems",
                                                      "maxItems",
                                                      "minLength",
                                                      "maxLength",
                                                      "pattern",
                                                      "minimum",
                                                      "maximum",
                                                      "exclusiveMinimum",
                                                      "exclusiveMaximum",
                                                      "anyOf",
                                                      "allOf",
                                                      "$ref",
                                                      "$defs",
                                                      "definitions"};
const std::set<std::string, std::less<>> kAnnotations = {
    "$schema",  "$id",    "$comment",   "title",    "description", "default",
    "examples", "format", "deprecated", "readOnly", "writeOnly"};
const std::set<std::string, std::less<>> kTypeNames = {"null",   "boolean", "object", "array",
                                                       "number", "integer", "string"};

std::string compact(const Json& v) {
  std::string line = protocol::to_line(v);
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

std::string escape_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string child(const std::string& pointer, const std::string& token) {
  return pointer + "/" + escape_token(token);
}

std::string shown(const std::string& pointer) {
  return pointer.empty() ? "(root)" : pointer;
}

// JSON value equality, numbers by value (1 equals 1.0), objects whatever their key order.
bool same(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) return a.get<double>() == b.get<double>();
    if (a.is_number_unsigned() && b.is_number_unsigned())
      return a.get<std::uint64_t>() == b.get<std::uint64_t>();
    if (a.is_number_unsigned() || b.is_number_unsigned()) {
      const Json& u = a.is_number_unsigned() ? a : b;
      const Json& s = a.is_number_unsigned() ? b : a;
      return s.get<std::int64_t>() >= 0 &&
             static_cast<std::uint64_t>(s.get<std::int64_t>()) == u.get<std::uint64_t>();
    }
    return a.get<std::int64_t>() == b.get<std::int64_t>();
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items()) {
      const auto it = b.find(k);
      if (it == b.end() || !same(v, *it)) return false;
    }
    return true;
  }
  return a == b;
}

std::string type_of(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_number()) return "number";
  return "string";
}

bool has_type(const Json& v, const std::string& name) {
  if (name == "integer") {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return type_of(v) == name;
}

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

bool is_count(const Json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

bool is_schema(const Json& v) {
  return v.is_object() || v.is_boolean();
}

// The start-up check of one schema object (section 11.3): the keywords, their values' kinds,
// every $ref resolvable, every pattern compiled; then the subschemas.
class SchemaCheck {
 public:
  SchemaCheck(const Json& root,
              std::map<std::string, std::shared_ptr<const tools::Regex>>& patterns)
      : root_(root), patterns_(patterns) {}

  std::optional<std::string> run(const Json& s, const std::string& pointer, int depth) {
    if (depth > kMaxDepth) return "the schema is nested too deeply at " + shown(pointer);
    if (s.is_boolean()) return std::nullopt;
    if (!s.is_object()) return "a schema must be an object or a boolean at " + shown(pointer);
    for (const auto& [k, v] : s.items()) {
      if (kAnnotations.count(k)) continue;
      if (!kKeywords.count(k)) return "unsupported keyword '" + k + "' at " + shown(pointer);
      if (auto problem = value_problem(k, v, pointer)) return problem;
    }
    auto sub = [&](const Json& v, const std::string& at) { return run(v, at, depth + 1); };
    for (const char* map_key : {"properties", "$defs", "definitions"}) {
      if (const auto it = s.find(map_key); it != s.end())
        for (const auto& [k, v] : it->items())
          if (auto p = sub(v, child(child(pointer, map_key), k))) return p;
    }
    for (const char* one : {"additionalProperties", "items"}) {
      if (const auto it = s.find(one); it != s.end())
        if (auto p = sub(*it, child(pointer, one))) return p;
    }
    for (const char* list : {"allOf", "anyOf"}) {
      if (const auto it = s.find(list); it != s.end())
        for (std::size_t i = 0; i < it->size(); ++i)
          if (auto p = sub((*it)[i], child(child(pointer, list), std::to_string(i)))) return p;
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> value_problem(const std::string& k, const Json& v,
                                           const std::string& pointer) {
    auto bad = [&](const char* kind) {
      return std::optional<std::string>("'" + k + "' must be " + kind + " at " + shown(pointer));
    };
    if (k == "type") {
      if (v.is_string())
        return kTypeNames.count(v.get<std::string>()) ? std::nullopt : bad("a type name");
      if (!v.is_array() || v.empty()) return bad("a type name or an array of them");
      for (const auto& t : v)
        if (!t.is_string() || !kTypeNames.count(t.get<std::string>()))
          return bad("a type name or an array of them");
      return std::nullopt;
    }
    if (k == "enum") return v.is_array() ? std::nullopt : bad("an array");
    if (k == "properties" || k == "$defs" || k == "definitions")
      return v.is_object() ? std::nullopt : bad("an object");
    if (k == "required") {
      if (!v.is_array()) return bad("an array of strings");
      for (const auto& n : v)
        if (!n.is_string()) return bad("an array of strings");
      return std::nullopt;
    }
    if (k == "additionalProperties" || k == "items")
      return is_schema(v) ? std::nullopt : bad("a schema");
    if (k == "minItems" || k == "maxItems" || k == "minLength" || k == "maxLength")
      return is_count(v) ? std::nullopt : bad("a non-negative integer");
    if (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum")
      return v.is_number() ? std::nullopt : bad("a number");
    if (k == "anyOf" || k == "allOf")
      return v.is_array() && !v.empty() ? std::nullopt : bad("a non-empty array");
    if (k == "pattern") {
      if (!v.is_string()) return bad("a string");
      const std::string text = v.get<std::string>();
      if (patterns_.count(text)) return std::nullopt;
      tools::Regex::Options options;
      options.multiline = false;
      auto regex = tools::Regex::compile(text, options);
      if (!regex)
        return "invalid pattern " + compact(v) + " at " + shown(pointer) + ": " +
               regex.error().message;
      patterns_.emplace(text, std::move(*regex));
      return std::nullopt;
    }
    if (k == "$ref") {
      if (!v.is_string()) return bad("a string");
      if (!resolve_ref(root_, v.get<std::string>()))
        return "unresolvable $ref " + compact(v) + " at " + shown(pointer);
      return std::nullopt;
    }
    return std::nullopt;  // const: any value
  }

 public:
  // `#`, or a JSON Pointer into $defs or definitions of `root`.
  static const Json* resolve_ref(const Json& root, const std::string& ref) {
    if (ref == "#") return &root;
    if (ref.rfind("#/$defs/", 0) != 0 && ref.rfind("#/definitions/", 0) != 0) return nullptr;
    const Json* at = &root;
    std::size_t pos = 2;
    while (pos <= ref.size()) {
      const std::size_t slash = ref.find('/', pos);
      std::string token =
          ref.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
      std::string key;
      for (std::size_t i = 0; i < token.size(); ++i) {
        if (token[i] == '~' && i + 1 < token.size() &&
            (token[i + 1] == '0' || token[i + 1] == '1')) {
          key += token[i + 1] == '0' ? '~' : '/';
          ++i;
        } else {
          key += token[i];
        }
      }
      if (!at->is_object()) return nullptr;
      const auto it = at->find(key);
      if (it == at->end()) return nullptr;
      at = &*it;
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
    return is_schema(*at) ? at : nullptr;
  }

 private:
  const Json& root_;
  std::map<std::string, std::shared_ptr<const tools::Regex>>& patterns_;
};

}  // namespace

JsonSchema::JsonSchema(Json schema)
    : schema_(std::make_shared<const Json>(std::move(schema))),
      patterns_(std::make_shared<std::map<std::string, std::shared_ptr<const tools::Regex>>>()) {}

session::Result<JsonSchema> JsonSchema::compile(Json schema) {
  const auto type = schema.is_object() ? schema.find("type") : schema.end();
  if (!schema.is_object() || type == schema.end() || *type != "object")
    return session::failure(
        std::string(R"(--json-schema: the root must be an object schema ("type":"object"))"));
  JsonSchema out(std::move(schema));
  SchemaCheck check(*out.schema_, *out.patterns_);
  if (auto problem = check.run(*out.schema_, "", 0))
    return session::failure("--json-schema: " + *problem);
  return out;
}

const Json* JsonSchema::resolve(const std::string& ref) const {
  return SchemaCheck::resolve_ref(*schema_, ref);
}

std::vector<SchemaProblem> JsonSchema::validate(const Json& instance) const {
  std::vector<SchemaProblem> out;
  check(*schema_, instance, "", out, 0);
  return out;
}

void JsonSchema::check(const Json& s, const Json& v, const std::string& pointer,
                       std::vector<SchemaProblem>& out, int depth) const {
  auto problem = [&](const std::string& at, std::string text) {
    out.push_back(SchemaProblem{shown(at), std::move(text)});
  };
  if (depth > kMaxDepth) return problem(pointer, "nested too deeply to check");
  if (s.is_boolean()) {
    if (!s.get<bool>()) problem(pointer, "no value is allowed here");
    return;
  }
  if (const auto ref = s.find("$ref"); ref != s.end())
    if (const Json* target = resolve(ref->get<std::string>()))
      check(*target, v, pointer, out, depth + 1);
  if (const auto type = s.find("type"); type != s.end()) {
    bool ok = false;
    std::string names;
    const Json list = type->is_array() ? *type : Json::array({*type});
    for (const auto& t : list) {
      const std::string name = t.get<std::string>();
      ok = ok || has_type(v, name);
      names += (names.empty() ? "" : " or ") + name;
    }
    if (!ok) return problem(pointer, "expected " + names + ", got " + type_of(v));
  }
  if (const auto e = s.find("enum"); e != s.end()) {
    bool found = false;
    for (const auto& x : *e)
      found = found || same(x, v);
    if (!found) problem(pointer, "expected one of " + compact(*e));
  }
  if (const auto c = s.find("const"); c != s.end() && !same(*c, v))
    problem(pointer, "expected " + compact(*c));
  auto count = [&](const char* key) -> std::optional<std::uint64_t> {
    const auto it = s.find(key);
    if (it == s.end()) return std::nullopt;
    return it->get<std::uint64_t>();
  };
  if (v.is_object()) {
    if (const auto req = s.find("required"); req != s.end())
      for (const auto& name : *req)
        if (!v.contains(name.get<std::string>()))
          problem(pointer, "missing required property '" + name.get<std::string>() + "'");
    const auto props = s.find("properties");
    if (props != s.end())
      for (const auto& [name, sub] : props->items())
        if (const auto it = v.find(name); it != v.end())
          check(sub, *it, child(pointer, name), out, depth + 1);
    if (const auto add = s.find("additionalProperties"); add != s.end()) {
      for (const auto& [name, member] : v.items()) {
        if (props != s.end() && props->contains(name)) continue;
        if (add->is_boolean() && !add->get<bool>()) {
          problem(pointer, "property '" + name + "' is not allowed");
        } else {
          check(*add, member, child(pointer, name), out, depth + 1);
        }
      }
    }
  } else if (v.is_array()) {
    if (auto n = count("minItems"); n && v.size() < *n)
      problem(pointer, "expected at least " + std::to_string(*n) + " items, got " +
                           std::to_string(v.size()));
    if (auto n = count("maxItems"); n && v.size() > *n)
      problem(pointer,
              "expected at most " + std::to_string(*n) + " items, got " + std::to_string(v.size()));
    if (const auto items = s.find("items"); items != s.end())
      for (std::size_t i = 0; i < v.size(); ++i)
        check(*items, v[i], child(pointer, std::to_string(i)), out, depth + 1);
  } else if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    const std::size_t length = code_points(text);
    if (auto n = count("minLength"); n && length < *n)
      problem(pointer, "expected at least " + std::to_string(*n) + " characters, got " +
                           std::to_string(length));
    if (auto n = count("maxLength"); n && length > *n)
      problem(pointer, "expected at most " + std::to_string(*n) + " characters, got " +
                           std::to_string(length));
    if (const auto p = s.find("pattern"); p != s.end()) {
      const auto it = patterns_->find(p->get<std::string>());
      tools::Matcher matcher(it->second);
      if (!matcher.matches(text)) problem(pointer, "does not match the pattern " + compact(*p));
    }
  } else if (v.is_number()) {
    const double x = v.get<double>();
    const std::pair<const char*, const char*> bounds[] = {
        {"minimum", ">="}, {"exclusiveMinimum", ">"}, {"maximum", "<="}, {"exclusiveMaximum", "<"}};
    for (const auto& [key, op] : bounds) {
      const auto it = s.find(key);
      if (it == s.end()) continue;
      const double b = it->get<double>();
      const std::string_view o = op;
      const bool ok = o == ">=" ? x >= b : o == ">" ? x > b : o == "<=" ? x <= b : x < b;
      if (!ok) problem(pointer, std::string("expected a number ") + op + " " + compact(*it));
    }
  }
  if (const auto all = s.find("allOf"); all != s.end())
    for (const auto& sub : *all)
      check(sub, v, pointer, out, depth + 1);
  if (const auto any = s.find("anyOf"); any != s.end()) {
    bool matched = false;
    for (const auto& sub : *any) {
      std::vector<SchemaProblem> branch;
      check(sub, v, pointer, branch, depth + 1);
      if (branch.empty()) {
        matched = true;
        break;
      }
    }
    if (!matched) problem(pointer, "does not match any of the anyOf schemas");
  }
}

std::string problems_text(const std::vector<SchemaProblem>& problems) {
  std::string out = "Structured output does not match the schema:";
  for (std::size_t i = 0; i < problems.size() && i < 5; ++i)
    out += "\n- " + problems[i].pointer + ": " + problems[i].text;
  return out;
}

}  // namespace rebound::server::oneshot
