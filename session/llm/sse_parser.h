#pragma once
// A pure server-sent-events parser (WHATWG "event stream" interpretation): bytes in, events out,
// no I/O. Lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of
// the next are one line end); ':' lines are comments; `data:` lines accumulate; a blank line
// dispatches. Bytes are kept until an event is complete, so a UTF-8 character split across
// chunks arrives whole. One owner; not thread-safe.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rebound::session::llm {

struct SseEvent {
  std::string event = "message";  // the `event:` field, "message" when absent
  std::string data;               // `data:` lines joined with LF
  std::optional<std::string> id;  // the last `id:` seen in this event
};

class SseParser {
 public:
  using Sink = std::function<void(SseEvent)>;

  void feed(std::string_view bytes, const Sink& sink);
  /// End of stream: an event whose blank line never came is dispatched when it has data (the
  /// providers end streams that way too often to drop it).
  void finish(const Sink& sink);

 private:
  void line(std::string_view text, const Sink& sink);
  void dispatch(const Sink& sink);

  std::string pending_;   // bytes of an unfinished line
  bool skip_lf_ = false;  // the previous chunk ended in CR
  bool started_ = false;  // a leading BOM has been dealt with
  std::string event_;
  std::string data_;
  bool has_data_ = false;
  std::optional<std::string> id_;
};

}  // namespace rebound::session::llm
