#pragma once
// A stream's common events repeat an earlier event's bytes around a few values: a text delta, a
// sequence number, running usage counts. A template holds such an event cut at those values, so
// that the next one is recognised by comparing bytes and checking only the values that differ,
// instead of scanning it whole (json_scan.h). Replacing a whole JSON value of a valid text by
// another valid value leaves a valid text with the same structure, so a text that matches reads
// as the template's event with the new values, which is what the decoders rely on.
// Pure; a template allocates when built, never when matched.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace rebound::protocol::json_scan {

class Template {
 public:
  /// What a hole holds: a string token, or a plain non-negative integer (`0` or up to 308
  /// digits without a leading zero).
  enum class Kind : std::uint8_t { string, integer };
  struct Hole {
    std::string_view value;  // a span of the text given to build()
    Kind kind;
  };
  static constexpr std::size_t kMaxHoles = 8;

  /// From `text`, valid JSON (scan() accepted it), and up to kMaxHoles spans of it, each one
  /// whole value of its kind (a value, never a key: build cannot tell them apart), not
  /// overlapping; an empty span is no hole (a value this event does not have). False, and no
  /// template, when they are not.
  bool build(std::string_view text, std::initializer_list<Hole> holes);
  void clear() { built_ = false; }
  bool built() const { return built_; }

  /// `text` is the template's bytes around a value of each hole's kind: true, and `values[i]`
  /// the span in `text` of the i-th hole given to build() (empty for an empty one). A text
  /// that matches is valid JSON, the template's value with these values in place.
  bool match(std::string_view text, std::string_view* values) const;

 private:
  // A hole with the constant bytes before it, in the text's order.
  struct Slot {
    std::size_t before = 0;  // the bytes of constants_ between the hole before and this one
    Kind kind = Kind::string;
    std::size_t index = 0;  // its place in build()'s list
  };

  std::string constants_;  // the template's text without its holes
  Slot slots_[kMaxHoles];
  std::size_t holes_ = 0;  // slots_ in use
  std::size_t given_ = 0;  // holes given to build(), empty ones too
  bool built_ = false;
};

}  // namespace rebound::protocol::json_scan
