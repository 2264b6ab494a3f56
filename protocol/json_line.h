#pragma once
// JSON <-> line conversion for the wire (protocol.md sections 1 and 4): strict UTF-8 checking
// on input, compact raw-UTF-8 output with invalid bytes replaced by U+FFFD. Every JSON
// exception is caught here and turned into a reason string; none crosses this boundary.
// Pure functions, thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"

namespace rebound::protocol {

/// Offset of the first byte that is not valid UTF-8 (overlongs, surrogates and code points
/// above U+10FFFF are invalid), or nullopt when the text is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

/// How deep arrays and objects may nest in any JSON that enters the server (stdin lines,
/// provider streams, session, settings, models, auth and script files). nlohmann_json copies,
/// compares and writes values recursively, one stack frame per level, so deeper input is
/// refused before it is parsed (docs/decisions.md "Limits on hostile input").
inline constexpr std::size_t kMaxJsonDepth = 512;

/// The offset of the opening bracket that nests deeper than `limit` (brackets inside strings do
/// not count), or nullopt. Linear, no recursion; texts shorter than `limit` bytes are skipped.
std::optional<std::size_t> find_excess_nesting(std::string_view text,
                                               std::size_t limit = kMaxJsonDepth);

/// JsonLine::what for text that is not JSON at all (the other values: "invalid UTF-8", and
/// "nesting deeper than 512 levels" for JSON nested past kMaxJsonDepth).
inline constexpr std::string_view kInvalidJson = "invalid JSON";

/// The result of reading one line: a JSON value, or why it is not one.
struct JsonLine {
  std::optional<Json> value;
  std::string error;  // set when `value` is empty, e.g. "invalid UTF-8 at byte 3"
  /// Set with `error`: what is wrong without any of the input's text ("invalid JSON",
  /// "invalid UTF-8", "nesting deeper than 512 levels") and the byte offset where it was found,
  /// for messages about files that may hold secrets (see error_position()).
  std::string what;
  std::size_t offset = 0;
};

/// Parses a line as JSON (any JSON value; the caller checks for an object). A lone UTF-16
/// surrogate escape inside a string (`"\uD800"`) is kept as a private marker that to_line()
/// writes back as the same escape (protocol.md section 1). Nesting deeper than kMaxJsonDepth
/// is an error.
JsonLine parse_json_line(std::string_view line);

/// "line L, column C" (both from 1, the column in bytes) of `offset` in `text`.
std::string error_position(std::string_view text, std::size_t offset);

/// Parses JSON from an LLM server leniently, as its text is kept (protocol.md section 1):
/// invalid UTF-8 becomes U+FFFD (one per maximal invalid subsequence) and a lone surrogate
/// escape becomes `\ufffd`. Still an error: invalid JSON and nesting deeper than kMaxJsonDepth.
JsonLine parse_provider_json(std::string_view text);

/// `text` with every maximal invalid UTF-8 subsequence replaced by U+FFFD.
std::string replace_invalid_utf8(std::string_view text);

/// Serializes compactly as one line ending in LF: raw UTF-8, invalid bytes replaced by U+FFFD,
/// lone surrogates read by parse_json_line() written back escaped.
std::string to_line(const Json& value);

/// The raw JSON text with every lone surrogate escape replaced by its marker (exposed for tests).
std::string mark_lone_surrogates(std::string_view json_text);
/// Marker bytes back to `\udxxx` escapes in serialized JSON (exposed for tests).
void unmark_lone_surrogates(std::string& json_text);

/// Every lone surrogate read by parse_json_line() as U+FFFD: for text that leaves the protocol
/// (a provider's request, a file, a command, the HTML export), where no escape can stand for it
/// and the marker must never appear (issue 50). In a string, or in every string of a value.
void replace_surrogate_markers(std::string& text);
void replace_surrogate_markers(Json& value);

}  // namespace rebound::protocol
