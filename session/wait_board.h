#pragma once
// What a run waits for besides the model, a tool batch, a backoff or a compaction (oneshot.md
// section 9): a hook the session awaits, an extension's `tool_call` interceptor, MCP servers
// still starting before a request. Whoever waits holds a mark for as long as it lasts; a front
// end that reports waits (one-shot's heartbeat) reads the oldest of a kind. Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "protocol/json.h"

namespace rebound::session {

class WaitBoard {
 public:
  enum class Kind { hook, extension, mcp };

 private:
  struct Entry {
    Kind kind;
    std::int64_t since_ms;
    std::function<protocol::Json()> keys;
  };
  using Entries = std::map<std::uint64_t, Entry>;

 public:
  /// One wait; it ends when the mark is destroyed or end() is called (the board may go first).
  class Mark {
   public:
    Mark() = default;
    Mark(const Mark&) = delete;
    Mark& operator=(const Mark&) = delete;
    Mark(Mark&& other) noexcept : entries_(std::move(other.entries_)), id_(other.id_) {
      other.entries_.reset();
    }
    Mark& operator=(Mark&& other) noexcept {
      if (this != &other) {
        end();
        entries_ = std::move(other.entries_);
        id_ = other.id_;
        other.entries_.reset();
      }
      return *this;
    }
    ~Mark() { end(); }
    void end() {
      if (auto e = entries_.lock()) e->erase(id_);
      entries_.reset();
    }

   private:
    friend class WaitBoard;
    Mark(std::weak_ptr<Entries> entries, std::uint64_t id)
        : entries_(std::move(entries)), id_(id) {}
    std::weak_ptr<Entries> entries_;
    std::uint64_t id_ = 0;
  };

  /// A wait of `kind` that began at `now_ms`; `keys` gives its heartbeat keys when asked (null:
  /// nothing to report at that moment).
  Mark begin(Kind kind, std::int64_t now_ms, std::function<protocol::Json()> keys) {
    const std::uint64_t id = ++next_;
    entries_->emplace(id, Entry{kind, now_ms, std::move(keys)});
    return Mark(entries_, id);
  }

  struct Seen {
    std::int64_t since_ms;
    protocol::Json keys;
  };
  /// The wait of `kind` that began first and has something to report.
  std::optional<Seen> oldest(Kind kind) const {
    for (const auto& [id, e] : *entries_) {
      if (e.kind != kind) continue;
      protocol::Json keys = e.keys ? e.keys() : protocol::Json();
      if (!keys.is_null()) return Seen{e.since_ms, std::move(keys)};
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<Entries> entries_ = std::make_shared<Entries>();
  std::uint64_t next_ = 0;
};

}  // namespace rebound::session
