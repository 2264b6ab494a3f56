#pragma once
// Session files kept in memory: a map from path to bytes, with the same loading rules as the
// real storage (session::parse_session_file) and a switch that makes appends fail.

#include <map>
#include <memory>
#include <string>

#include "session/session_storage.h"

namespace rebound::testing {

class MemorySessionStorage : public session::SessionStorage {
 public:
  std::optional<std::string> new_session_path(const std::string& session_id,
                                              std::int64_t) override {
    if (no_session) return std::nullopt;
    return "/sessions/" + session_id + ".jsonl";
  }
  std::string cwd() const override { return "/work"; }
  session::Result<session::LoadedSession> load(const std::string& path) override {
    auto it = files.find(path);
    if (it == files.end()) return session::failure("Session file not found: " + path);
    return session::parse_session_file(it->second);
  }
  std::shared_ptr<const session::FileBytes> read_back(const std::string& path,
                                                      std::uint64_t fingerprint_bytes) override {
    ++read_backs;
    auto it = files.find(path);
    if (it == files.end() || no_read_back) return nullptr;
    auto bytes = std::make_shared<Bytes>(it->second);
    bytes->fingerprint.add(std::string_view(bytes->text).substr(0, fingerprint_bytes));
    return bytes;
  }
  std::unique_ptr<session::SessionFileSink> open_for_append(const std::string& path,
                                                            std::string& error) override {
    if (fail_open) {
      error = "disk on fire";
      return nullptr;
    }
    ++opens;
    return std::make_unique<Sink>(*this, path);
  }

  std::map<std::string, std::string> files;
  std::map<std::string, int> writes;  // single writes per path
  bool no_session = false;
  bool fail_open = false;
  bool fail_writes = false;
  int opens = 0;
  int read_backs = 0;
  bool no_read_back = false;  // read_back as a storage without it

 private:
  struct Bytes : session::FileBytes {
    explicit Bytes(std::string t) : text(std::move(t)) {}
    std::string_view view() const override { return text; }
    std::string text;
  };
  struct Sink : session::SessionFileSink {
    Sink(MemorySessionStorage& s, std::string p) : storage(s), path(std::move(p)) {}
    bool append(std::string_view lines) override {
      if (storage.fail_writes) return false;
      storage.files[path] += lines;
      ++storage.writes[path];
      return true;
    }
    MemorySessionStorage& storage;
    std::string path;
  };
};

}  // namespace rebound::testing
