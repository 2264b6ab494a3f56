#pragma once
// A protocol line as pieces: owned text, and read-only spans of shared append-only buffers.
// A full message_update carries the partial assistant message twice and the next one carries
// it again, grown by one delta; with spans the message's bytes are kept once and the line only
// points at them, so building a line costs the same however long the answer gets, and the one
// copy left is the kernel's (writev in the stdout writer thread).
//
// Threads: a SharedBytes is appended to on the event loop only, past every span handed out so
// far; a span's bytes never change once a line holds it, so the writer thread may read them
// without a lock (the queue's mutex orders the hand-over).

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::server {

/// Fixed-capacity, append-only bytes.
class SharedBytes {
 public:
  explicit SharedBytes(std::size_t capacity) : data_(new char[capacity]), capacity_(capacity) {}
  std::size_t size() const { return size_; }
  std::size_t room() const { return capacity_ - size_; }
  /// Appends all of `text`; the caller checked room().
  void append(std::string_view text) {
    text.copy(data_.get() + size_, text.size());
    size_ += text.size();
  }
  const char* data() const { return data_.get(); }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

class OutLine {
 public:
  struct Part {
    std::string text;                           // owned, when `shared` is empty
    std::shared_ptr<const SharedBytes> shared;  // else this buffer's [offset, offset + length)
    std::size_t offset = 0;
    std::size_t length = 0;
    std::string_view view() const {
      return shared ? std::string_view(shared->data() + offset, length) : std::string_view(text);
    }
  };

  OutLine() = default;
  explicit OutLine(std::string text) {
    size_ = text.size();
    parts_.push_back(Part{std::move(text), nullptr, 0, 0});
  }

  /// Owned text at the end (joined to an owned last part).
  void append(std::string_view text) {
    if (parts_.empty() || parts_.back().shared) parts_.push_back(Part{});
    parts_.back().text += text;
    size_ += text.size();
  }
  /// A span of `bytes` at the end.
  void append_shared(const std::shared_ptr<const SharedBytes>& bytes, std::size_t offset,
                     std::size_t length) {
    if (length == 0) return;
    parts_.push_back(Part{{}, bytes, offset, length});
    size_ += length;
  }
  /// `head` in front and `tail` before the final LF (the JSON-RPC notification around an event).
  void wrap(std::string_view head, std::string_view tail) {
    parts_.insert(parts_.begin(), Part{std::string(head), nullptr, 0, 0});
    Part& last = parts_.back();  // an event line always ends in owned text with its LF
    last.text.insert(last.text.size() - 1, tail);
    size_ += head.size() + tail.size();
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<Part>& parts() const { return parts_; }
  /// The one owned text, when the line is nothing else (a plain line).
  std::string* plain() {
    return parts_.size() == 1 && !parts_[0].shared ? &parts_[0].text : nullptr;
  }
  /// The whole line as one string (tests; the short lines the writer gathers).
  std::string flatten() const {
    std::string out;
    out.reserve(size_);
    for (const Part& p : parts_)
      out += p.view();
    return out;
  }

 private:
  std::vector<Part> parts_;
  std::size_t size_ = 0;
};

/// Where finished lines go (the stdout writer).
class LineWriter {
 public:
  virtual ~LineWriter() = default;
  virtual void write_line(OutLine line) = 0;
  /// A short line that the writer copies now (the caller's buffer is reused).
  virtual void write_text(std::string_view line) = 0;
};

}  // namespace rebound::server
