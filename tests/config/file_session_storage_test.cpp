#include "config/file_session_storage.h"

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "config/json_file.h"
#include "tests/support/temp_dir.h"

using namespace rebound;
using config::FileSessionStorage;
using config::SessionStorageOptions;
using testing::TempDir;

namespace {

const std::string kHeader =
    R"({"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T08:00:00.000Z","cwd":"/w"})"
    "\n";
const std::string kEntry =
    R"({"type":"model_change","id":"abcd1234","parentId":null,"timestamp":"2026-11-30T08:00:00.000Z","provider":"p","modelId":"m"})"
    "\n";

}  // namespace

TEST_CASE("new session files go under the agent dir per working directory, or --session-dir") {
  CHECK(config::encode_cwd("/work/main") == "--work-main--");
  CHECK(config::session_file_name("abc", 1796027882123) == "2026-11-30T08-38-02-123Z_abc.jsonl");
  FileSessionStorage storage(SessionStorageOptions{"/agent", "/work/main", std::nullopt, false});
  CHECK(storage.new_session_path("abc", 1796027882123) ==
        "/agent/sessions/--work-main--/2026-11-30T08-38-02-123Z_abc.jsonl");
  FileSessionStorage in_dir(SessionStorageOptions{"/agent", "/work/main", "/elsewhere", false});
  CHECK(in_dir.new_session_path("abc", 0) == "/elsewhere/1970-01-01T00-00-00-000Z_abc.jsonl");
  FileSessionStorage none(SessionStorageOptions{"/agent", "/work/main", std::nullopt, true});
  CHECK_FALSE(none.new_session_path("abc", 0));
}

TEST_CASE("open_for_append creates the file (mode 0600) and its folders, appends whole lines") {
  TempDir dir;
  FileSessionStorage storage(SessionStorageOptions{dir.path(), "/w", std::nullopt, false});
  const std::string path = (dir.path() / "a/b/s.jsonl").string();
  std::string error;
  auto sink = storage.open_for_append(path, error);
  REQUIRE(sink);
  CHECK(sink->append(kHeader + kEntry));
  CHECK(sink->append(kEntry));
  CHECK(dir.read("a/b/s.jsonl") == kHeader + kEntry + kEntry);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto loaded = storage.load(path);
  REQUIRE(loaded.ok());
  CHECK(loaded.value().entries.size() == 2);
}

TEST_CASE("before the first append a torn last line is cut off and a complete one gets its LF") {
  TempDir dir;
  FileSessionStorage storage(SessionStorageOptions{dir.path(), "/w", std::nullopt, false});
  std::string error;
  SUBCASE("torn") {
    const auto path = dir.write("t.jsonl", kHeader + kEntry + kEntry.substr(0, 30));
    auto loaded = storage.load(path.string());
    REQUIRE(loaded.ok());
    CHECK(loaded.value().warnings.size() == 1);
    auto sink = storage.open_for_append(path.string(), error);
    REQUIRE(sink);
    CHECK(dir.read("t.jsonl") == kHeader + kEntry);
    CHECK(sink->append(kEntry));
    CHECK(dir.read("t.jsonl") == kHeader + kEntry + kEntry);
  }
  SUBCASE("complete but without LF") {
    const auto path = dir.write("c.jsonl", kHeader + kEntry.substr(0, kEntry.size() - 1));
    auto sink = storage.open_for_append(path.string(), error);
    REQUIRE(sink);
    CHECK(dir.read("c.jsonl") == kHeader + kEntry);
  }
}

TEST_CASE("loading names what is wrong") {
  TempDir dir;
  FileSessionStorage storage(SessionStorageOptions{dir.path(), "/w", std::nullopt, false});
  const std::string missing = (dir.path() / "none.jsonl").string();
  CHECK(storage.load(missing).error().message == "Session file not found: " + missing);
  const auto v2 = dir.write("v2.jsonl", R"({"type":"session","version":2,"id":"x"})"
                                        "\n");
  CHECK(storage.load(v2.string()).error().message ==
        "Cannot load session file " + v2.string() +
            ": unsupported session file version 2 (this server reads version 3)");
}

TEST_CASE("only regular files are sessions: a FIFO, a device or a directory is refused at once") {
  TempDir dir;
  const auto fifo = dir.path() / "pipe.jsonl";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  FileSessionStorage storage(SessionStorageOptions{dir.path(), dir.path(), std::nullopt, false});
  auto error_of = [&](const std::string& path) {
    auto r = storage.load(path);
    return !r.ok() ? r.error().message : std::string();
  };
  CHECK(error_of(fifo.string()) ==
        "Not a session file: " + fifo.string() + " is not a regular file");
  CHECK(error_of("/dev/zero") == "Not a session file: /dev/zero is not a regular file");
  CHECK(error_of(dir.path().string()) ==
        "Not a session file: " + dir.path().string() + " is a directory");
  CHECK(error_of((dir.path() / "none.jsonl").string()) ==
        "Session file not found: " + (dir.path() / "none.jsonl").string());
  std::string error;
  CHECK_FALSE(storage.open_for_append(fifo.string(), error));
  CHECK(error == "not a regular file");
  // A valid file still loads.
  const auto ok = dir.write("ok.jsonl", kHeader + kEntry);
  CHECK(storage.load(ok.string()).ok());
}

TEST_CASE("a file read in pieces loads as its whole text parses: lines across pieces, a torn end") {
  TempDir dir;
  FileSessionStorage storage(SessionStorageOptions{dir.path(), "/w", std::nullopt, false});
  // Messages of many lengths, one longer than a whole piece, so that lines start and end at
  // every kind of place relative to the pieces' edges.
  std::string text = kHeader;
  std::string parent = "null";
  for (int i = 0; i < 400; ++i) {
    const std::size_t size = i == 200 ? config::kReadPieceBytes + 1234 : 3000 + 97 * i;
    const std::string id = "e" + std::to_string(i);
    text +=
        R"({"type":"message","id":")" + id + R"(","parentId":)" + parent +
        R"(,"timestamp":"2026-11-30T08:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":")" +
        std::string(size, static_cast<char>('a' + i % 26)) + R"("}],"timestamp":1}})" + "\n";
    if (i == 7) text += "   \n";  // a blank line is skipped
    parent = "\"" + id + "\"";
  }
  text += R"({"type":"message","id":"torn")";  // the writer stopped mid-line
  REQUIRE(text.size() > 3 * config::kReadPieceBytes);
  const auto path = dir.write("long.jsonl", text).string();
  auto whole = session::parse_session_file(text);
  REQUIRE(whole.ok());
  const auto& expected = whole.value();
  REQUIRE(expected.entries.size() == 400);
  REQUIRE(expected.warnings.size() == 1);

  auto loaded = storage.load(path);
  REQUIRE(loaded.ok());
  const auto& got = loaded.value();
  CHECK(got.entries == expected.entries);
  CHECK(got.warnings == expected.warnings);

  auto restored = storage.load_restored(path);
  REQUIRE(restored.ok());
  auto& slim = restored.value();
  REQUIRE(slim.restored);
  CHECK(slim.messages.empty());  // taken into the restored history
  const auto context = slim.restored->context();
  REQUIRE(context.size() == 400);
  CHECK(context[200].text().size() == config::kReadPieceBytes + 1234);
  CHECK(context[399].entry_id == "e399");
  CHECK(protocol::to_json(context) ==
        protocol::to_json(session::restore_session(expected.entries).context()));
  // The places of the entries in the file, across pieces, and the fingerprint of what was read
  // up to the torn end (a last line without LF: places are not taken from such a file).
  REQUIRE(got.lines.size() == 400);
  for (std::size_t i : {0u, 7u, 8u, 200u, 399u}) {
    const auto& l = got.lines[i];
    CHECK(protocol::Json::parse(text.substr(l.offset, l.length))["id"] == got.entries[i]["id"]);
  }
  CHECK_FALSE(got.fingerprint.complete);
}

TEST_CASE("read_back: the file's bytes with the fingerprint of the first ones, or nothing") {
  TempDir dir;
  FileSessionStorage storage(SessionStorageOptions{dir.path(), "/w", std::nullopt, false});
  std::string text = kHeader;
  for (int i = 0; i < 300; ++i)
    text += R"({"n":")" + std::string(997 + i, 'x') + "\"}\n";
  const auto path = dir.write("s.jsonl", text).string();
  auto parsed = session::parse_session_file(text);  // the header only is a session
  const auto& loaded = parsed.value();
  CHECK(loaded.fingerprint.complete);
  CHECK(loaded.fingerprint.bytes() == text.size());

  const auto bytes = storage.read_back(path, loaded.fingerprint.bytes());
  REQUIRE(bytes);
  CHECK(bytes->view() == text);
  CHECK(loaded.fingerprint.matches(bytes->fingerprint));
  // Of the first bytes only: what was appended since does not count.
  dir.write("s.jsonl", text + "{\"more\":1}\n");
  const auto grown = storage.read_back(path, loaded.fingerprint.bytes());
  REQUIRE(grown);
  CHECK(grown->view().size() == text.size() + 11);
  CHECK(loaded.fingerprint.matches(grown->fingerprint));
  // One byte changed inside, or the file cut: no match.
  std::string changed = text;
  changed[text.size() / 2] = 'y';
  dir.write("s.jsonl", changed);
  CHECK_FALSE(loaded.fingerprint.matches(storage.read_back(path, text.size())->fingerprint));
  dir.write("s.jsonl", text.substr(0, text.size() - 10));
  CHECK_FALSE(loaded.fingerprint.matches(storage.read_back(path, text.size())->fingerprint));
  // Nothing for a missing file, a FIFO or a directory (at once, never blocking).
  CHECK_FALSE(storage.read_back((dir.path() / "none.jsonl").string(), 0));
  const auto fifo = dir.path() / "fifo.jsonl";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(storage.read_back(fifo.string(), 0));
  CHECK_FALSE(storage.read_back(dir.path().string(), 0));
}
