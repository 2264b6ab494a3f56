#pragma once
// A pure server-sent-events parser (WHATWG "event stream" interpretation): bytes in, events out,
// no I/O. Lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of
// the next are one line end); ':' lines are comments; `data:` lines accumulate; a blank line
// dispatches. Bytes are kept until an event is complete, so a UTF-8 character split across
// chunks arrives whole. A line and an event's data are bounded (16 MiB each by default): past
// either the parser fails, drops what it holds and ignores the rest of the stream, so a server
// that never ends a line cannot fill memory. One owner; not thread-safe.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rebound::session::llm {

struct SseEvent {
  std::string event = "message";  // the `event:` field, "message" when absent
  std::string data;               // `data:` lines joined with LF
  std::optional<std::string> id;  // the last `id:` seen in this event
  /// With keep_stray_lines: not an SSE event but the lines of unknown fields before a blank
  /// line, each ending in LF (a bare JSON object in the stream, as Gemini reports a failure).
  bool stray = false;
};

class SseParser {
 public:
  /// Gets each event by reference; it is valid during the call only (its buffers are reused).
  using Sink = std::function<void(const SseEvent&)>;
  static constexpr std::size_t kDefaultLimit = 16u << 20;

  explicit SseParser(std::size_t max_line_bytes = kDefaultLimit,
                     std::size_t max_event_bytes = kDefaultLimit)
      : max_line_(max_line_bytes), max_event_(max_event_bytes) {}

  /// Lines that are no SSE field (`{"error": {…}}`) are kept and handed on as one `stray` event
  /// at the next blank line or the end, instead of being ignored; bounded like an event.
  void keep_stray_lines(bool on) { keep_stray_ = on; }

  void feed(std::string_view bytes, const Sink& sink);
  /// End of stream: an event whose blank line never came is dispatched when it has data (the
  /// providers end streams that way too often to drop it).
  void finish(const Sink& sink);
  /// Why the stream was refused ("an SSE line longer than 16 MiB", "an SSE event larger than
  /// 16 MiB"), or empty while it is fine.
  const std::string& error() const { return error_; }

 private:
  void line(std::string_view text, const Sink& sink);
  void dispatch(const Sink& sink);
  void fail(const char* what, std::size_t limit);

  std::size_t max_line_;
  std::size_t max_event_;
  std::string error_;
  std::string pending_;   // bytes of an unfinished line
  bool skip_lf_ = false;  // the previous chunk ended in CR
  bool started_ = false;  // a leading BOM has been dealt with
  std::string event_;
  std::string data_;
  bool has_data_ = false;
  bool keep_stray_ = false;
  std::string stray_;
  std::optional<std::string> id_;
  SseEvent current_;  // handed to the sink; its data buffer goes back to data_ afterwards
};

}  // namespace rebound::session::llm
