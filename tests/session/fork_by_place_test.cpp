// fork and clone of a resumed file (sessions.md section 4): its entries are copied as the lines
// read back, checked against the file's fingerprint, and the copy's context and counts come from
// the live session's where restoring would give the same. Each case runs beside a storage that
// cannot read back (the entries copied as JSON) and must give the same copy, context, counts
// and name; and each copy must be what a session resuming the copied file has.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "session/session_file.h"
#include "tests/support/jsonl.h"
#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using testing::SessionHarness;

namespace {

const std::string kAssistantTail =
    R"("provider":"scripted","model":"script","api":"scripted","usage":{"input":7,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.25}},"timestamp":1)";

std::string entry(const std::string& id, const std::string& parent, const std::string& body) {
  return R"({"id":")" + id + R"(","parentId":)" + (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"timestamp":"2026-12-01T08:00:00.000Z",)" + body + "}\n";
}

std::string user(const std::string& id, const std::string& parent, const std::string& text) {
  return entry(id, parent,
               R"("type":"message","message":{"role":"user","content":[{"type":"text","text":")" +
                   text + R"("}],"timestamp":1})");
}

std::string answer(const std::string& id, const std::string& parent, const std::string& content,
                   const std::string& stop = "stop", const std::string& error = "") {
  return entry(id, parent,
               R"("type":"message","message":{"role":"assistant","content":)" + content +
                   R"(,"stopReason":")" + stop + "\"" +
                   (error.empty() ? "" : R"(,"errorMessage":")" + error + "\"") + "," +
                   kAssistantTail + "}");
}

std::string text_block(const std::string& text) {
  return R"([{"type":"text","text":")" + text + R"("}])";
}

// A linear file: model and level, u1, a failed attempt (with text) and its retry, a name, u2, a
// tool call and its result, the answer, u3 and a3.
std::string session_text() {
  std::string t =
      R"({"type":"session","version":3,"id":"src","timestamp":"2026-12-01T08:00:00.000Z","cwd":"/work"})"
      "\n";
  t += entry("m1", "", R"("type":"model_change","provider":"scripted","modelId":"script")");
  t += entry("l1", "m1", R"("type":"thinking_level_change","thinkingLevel":"off")");
  t += user("u1", "l1", "one");
  t += answer("e1", "u1", text_block("half"), "error", "503 overloaded");
  t += answer("a1", "e1", text_block("answer one"));
  t += entry("n1", "a1", R"("type":"session_info","name":"the name")");
  t += user("u2", "n1", "two");
  t += answer("a2", "u2",
              R"([{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}])",
              "toolUse");
  t += entry(
      "r2", "a2",
      R"("type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"file"}],"isError":false,"timestamp":1})");
  t += answer("b2", "r2", text_block("answer two"));
  t += user("u3", "b2", "three");
  t += answer("a3", "u3", text_block("answer three"));
  return t;
}

struct Side {
  explicit Side(bool by_place) {
    h.files.no_read_back = !by_place;
    h.files.files["/s.jsonl"] = session_text();
    REQUIRE(h.session.switch_session("/s.jsonl"));
  }
  SessionHarness h{R"([{"text":"more"},{"text":"again"},{"text":"last"}])"};
};

std::vector<Json> context_of(const session::AgentSession& s) {
  std::vector<Json> out;
  for (const auto& m : s.messages()) {
    Json j = protocol::to_json(m);
    j["id"] = m.entry_id;
    j["parentId"] = nullptr;
    out.push_back(std::move(j));
  }
  return out;
}

// The copy's entries after its header, as JSON (none while it is not written).
std::vector<Json> copied_entries(const SessionHarness& h) {
  const auto file = h.files.files.find(*h.session.session_file());
  if (file == h.files.files.end()) return {};
  auto lines = testing::parse_jsonl(file->second);
  lines.erase(lines.begin());
  return lines;
}

// The entries with random ids (appended by the sessions) named by their place instead.
std::vector<Json> without_new_ids(std::vector<Json> entries) {
  for (auto& e : entries) {
    if (e["id"].get<std::string>().size() == 8) e["id"] = "new";
    if (e["parentId"].is_string() && e["parentId"].get<std::string>().size() == 8)
      e["parentId"] = "new";
  }
  return entries;
}

void check_stats(const session::MessageStats& a, const session::MessageStats& b) {
  CHECK(a.user_messages == b.user_messages);
  CHECK(a.assistant_messages == b.assistant_messages);
  CHECK(a.tool_calls == b.tool_calls);
  CHECK(a.tool_results == b.tool_results);
  CHECK(a.total_messages == b.total_messages);
  CHECK(a.tokens.input == b.tokens.input);
  CHECK(a.tokens.total_tokens == b.tokens.total_tokens);
  CHECK(a.tokens.cost_total == doctest::Approx(b.tokens.cost_total));
}

// The copy as a session resuming its file has it (restored from the entries, the way the
// copy's context and counts are checked against).
void check_resumes_the_same(const SessionHarness& h) {
  const std::string path = *h.session.session_file();
  if (h.files.files.count(path) == 0) return;  // not written yet
  SessionHarness resumed;
  resumed.files.files[path] = h.files.files.at(path);
  REQUIRE(resumed.session.switch_session(path));
  CHECK(context_of(resumed.session) == context_of(h.session));
  check_stats(resumed.session.stats(), h.session.stats());
  CHECK(resumed.session.state().session_name == h.session.state().session_name);
}

void check_same(Side& place, Side& json) {
  check_resumes_the_same(place.h);
  check_resumes_the_same(json.h);
  CHECK(place.h.files.read_backs > 0);
  CHECK(json.h.files.read_backs > 0);  // asked, and fell back to reading the file as JSON
  CHECK(without_new_ids(copied_entries(place.h)) == without_new_ids(copied_entries(json.h)));
  CHECK(without_new_ids(context_of(place.h.session)) ==
        without_new_ids(context_of(json.h.session)));
  check_stats(place.h.session.stats(), json.h.session.stats());
  CHECK(place.h.session.state().session_name == json.h.session.state().session_name);
  // Both go on the same way: the next request holds the same messages.
  place.h.prompt("next");
  place.h.scheduler.run_all();
  json.h.prompt("next");
  json.h.scheduler.run_all();
  REQUIRE(place.h.requests.size() == 1);
  REQUIRE(json.h.requests.size() == 1);
  CHECK(place.h.requests[0]["messages"] == json.h.requests[0]["messages"]);
}

std::string fork_on(Side& side, const std::string& id) {
  std::string text = "(not answered)";
  side.h.session.fork(id, [&text](session::Result<std::string> r) {
    text = r ? *r : "error: " + r.error().message;
  });
  side.h.scheduler.run_ready();
  return text;
}

}  // namespace

TEST_CASE("a fork near the end of a resumed file: its lines copied, the context the live one's") {
  Side place(true), json(false);
  CHECK(fork_on(place, "u3") == "three");
  CHECK(fork_on(json, "u3") == "three");
  const auto entries = copied_entries(place.h);
  REQUIRE(entries.size() == 10);  // the path to b2, ids kept, the file's own bytes
  CHECK(entries.front()["id"] == "m1");
  CHECK(entries.back()["id"] == "b2");
  const std::string copy = place.h.files.files.at(*place.h.session.session_file());
  CHECK(copy.substr(copy.find('\n') + 1) ==
        session_text().substr(session_text().find('\n') + 1, session_text().find(R"({"id":"u3")") -
                                                                 session_text().find('\n') - 1));
  CHECK(place.h.session.stats().user_messages == 2);
  CHECK(place.h.session.stats().assistant_messages == 4);  // the failed attempt counts
  CHECK(place.h.session.messages().size() == 6);           // it is not in the context
  check_same(place, json);
}

TEST_CASE("a fork far back, of the first message, and a clone: each as the JSON way gives") {
  SUBCASE("u2: more is left out than kept") {
    Side place(true), json(false);
    CHECK(fork_on(place, "u2") == "two");
    CHECK(fork_on(json, "u2") == "two");
    CHECK(place.h.session.state().session_name == std::optional<std::string>("the name"));
    check_same(place, json);
  }
  SUBCASE("u1: no answer in the copy, nothing written yet") {
    Side place(true), json(false);
    CHECK(fork_on(place, "u1") == "one");
    CHECK(fork_on(json, "u1") == "one");
    CHECK(place.h.session.messages().empty());
    CHECK(place.h.files.files.count(*place.h.session.session_file()) == 0);
    check_same(place, json);
  }
  SUBCASE("clone") {
    Side place(true), json(false);
    session::Status a = session::Error{session::ErrorKind::failed, "not answered"}, b = a;
    place.h.session.clone([&a](session::Status s) { a = s; });
    json.h.session.clone([&b](session::Status s) { b = s; });
    place.h.scheduler.run_ready();
    json.h.scheduler.run_ready();
    CHECK(a);
    CHECK(b);
    CHECK(copied_entries(place.h).size() == 12);
    check_same(place, json);
  }
}

TEST_CASE("entries appended after the load are copied from memory beside the file's lines") {
  Side place(true), json(false);
  for (Side* s : {&place, &json}) {
    for (const char* text : {"four", "five"}) {
      s->h.prompt(text);
      s->h.scheduler.run_all();
    }
  }
  for (Side* s : {&place, &json}) {
    const auto listed = s->h.session.fork_messages();
    REQUIRE(listed);
    REQUIRE(listed->size() == 5);
    CHECK(fork_on(*s, listed->back().entry_id) == "five");
  }
  CHECK(copied_entries(place.h).size() == 14);  // the file's 12, then "four" and its answer
  place.h.requests.clear();
  json.h.requests.clear();
  check_same(place, json);
}

TEST_CASE("a file changed on disk after the load is not copied by place") {
  SUBCASE("same size, other text: the copy holds what the file holds now") {
    Side place(true);
    auto& file = place.h.files.files["/s.jsonl"];
    const auto at = file.find("answer two");
    REQUIRE(at != std::string::npos);
    file.replace(at, 10, "ANSWER TWO");
    CHECK(fork_on(place, "u3") == "three");
    CHECK(copied_entries(place.h).back()["message"]["content"][0]["text"] == "ANSWER TWO");
  }
  SUBCASE("cut short: the error, and the session stays") {
    Side place(true);
    auto& file = place.h.files.files["/s.jsonl"];
    file.resize(file.find(R"({"id":"u2")"));
    const std::string id = place.h.session.session_id();
    CHECK(fork_on(place, "u3") == "error: The session file /s.jsonl changed on disk");
    CHECK(place.h.session.session_id() == id);
  }
}

TEST_CASE("the fingerprint: the same for any pieces, another for one byte changed") {
  const std::string text = session_text();
  session::FileFingerprint whole;
  whole.add(text);
  for (std::size_t piece : {1u, 3u, 31u, 32u, 33u, 4096u}) {
    session::FileFingerprint parts;
    for (std::size_t at = 0; at < text.size(); at += piece)
      parts.add(std::string_view(text).substr(at, piece));
    CHECK(whole.matches(parts));
  }
  std::string changed = text;
  changed[text.size() / 2] ^= 1;
  session::FileFingerprint other;
  other.add(changed);
  CHECK_FALSE(whole.matches(other));
  session::FileFingerprint shorter;
  shorter.add(std::string_view(text).substr(0, text.size() - 1));
  CHECK_FALSE(whole.matches(shorter));
  whole.complete = false;  // a last line without LF: never matched
  CHECK_FALSE(whole.matches(whole));
}

TEST_CASE("the loader gives each entry's line, its kind, and the fingerprint of what it read") {
  const std::string text = session_text();
  auto parsed = session::parse_session_file(text, nullptr, false);
  auto& loaded = parsed.value();
  REQUIRE(loaded.lines.size() == loaded.entries.size());
  REQUIRE(loaded.lines.size() == 12);
  using K = session::EntryKind;
  const std::vector<K> kinds{K::model_change,      K::thinking_level_change, K::user_message,
                             K::assistant_message, K::assistant_message,     K::session_info,
                             K::user_message,      K::assistant_message,     K::other_message,
                             K::assistant_message, K::user_message,          K::assistant_message};
  for (std::size_t i = 0; i < kinds.size(); ++i)
    CHECK(loaded.lines[i].kind == kinds[i]);
  for (std::size_t i = 0; i < loaded.lines.size(); ++i) {
    const auto& l = loaded.lines[i];
    const Json line = Json::parse(text.substr(l.offset, l.length));
    CHECK(text[l.offset + l.length] == '\n');
    CHECK(line["id"] == loaded.entries[i]["id"]);
  }
  session::FileFingerprint all;
  all.add(text);
  CHECK(loaded.fingerprint.matches(all));
  // A last line without LF leaves the file's places unused.
  auto torn = session::parse_session_file(text.substr(0, text.size() - 1), nullptr, false);
  CHECK_FALSE(torn.value().fingerprint.complete);
}

TEST_CASE("a failed attempt the live context dropped but a resume keeps: the copy is restored") {
  // A failed attempt with text leaves the live context when its retry starts; the retry is then
  // cancelled, so nothing follows it but the next prompt. Resuming the file keeps it (it has
  // text and was not followed by an answer): a fork must give what the resume gives.
  SessionHarness h(R"([{"text":"half","error":"503 overloaded"},{"text":"two"},{"text":"three"}])");
  h.prompt("one");
  h.scheduler.run_ready();
  REQUIRE(h.session.is_retrying());
  h.session.abort_retry();
  h.scheduler.run_ready();
  for (const char* text : {"again", "third"}) {
    h.prompt(text);
    h.scheduler.run_all();
  }
  const auto listed = h.session.fork_messages();
  REQUIRE(listed);
  REQUIRE(listed->size() == 3);
  std::string text;
  h.session.fork(listed->back().entry_id,
                 [&text](session::Result<std::string> r) { text = r ? *r : r.error().message; });
  h.scheduler.run_ready();
  CHECK(text == "third");
  const auto context = context_of(h.session);
  REQUIRE(context.size() == 4);  // one, the failed attempt with its text, again, two
  CHECK(context[1]["stopReason"] == "error");
  CHECK(context[1]["content"][0]["text"] == "half");
  check_resumes_the_same(h);
}
