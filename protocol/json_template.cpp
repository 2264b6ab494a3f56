#include "protocol/json_template.h"

#include <algorithm>
#include <cstring>

#include "protocol/json_scan.h"

namespace rebound::protocol::json_scan {

namespace {

// memcmp, but never handed a null pointer (an empty text's data) for no bytes.
bool same_bytes(const char* a, const char* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}

bool decimal_digit(char c) {
  return c >= '0' && c <= '9';
}

// The end of the plain non-negative integer at `p`, or nullptr. Past 308 digits the general
// parser may refuse it (too large for a double): not a plain integer to a template.
const char* integer_end(const char* p, const char* end) {
  if (p >= end || !decimal_digit(*p)) return nullptr;
  if (*p == '0') return p + 1 < end && decimal_digit(p[1]) ? nullptr : p + 1;
  const char* begin = p;
  while (p < end && decimal_digit(*p))
    ++p;
  return p - begin <= 308 ? p : nullptr;
}

// The end of the value of this kind at `p`, or nullptr.
const char* hole_end(const char* p, const char* end, Template::Kind kind) {
  if (kind == Template::Kind::integer) return integer_end(p, end);
  const auto length = string_token_length(std::string_view(p, static_cast<std::size_t>(end - p)));
  return length ? p + *length : nullptr;
}

}  // namespace

bool Template::build(std::string_view text, std::initializer_list<Hole> holes) {
  built_ = false;
  if (holes.size() > kMaxHoles) return false;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  holes_ = 0;
  given_ = holes.size();
  for (std::size_t i = 0; i < holes.size(); ++i) {
    const Hole& h = *(holes.begin() + i);
    if (h.value.empty()) continue;  // no hole
    if (h.value.data() < begin || h.value.data() + h.value.size() > end) return false;
    Slot& s = slots_[holes_++];
    s.kind = h.kind;
    s.index = i;
  }
  // In text order; each hole must be exactly one value of its kind.
  const auto start = [&](const Slot& s) { return (holes.begin() + s.index)->value.data(); };
  std::sort(slots_, slots_ + holes_,
            [&](const Slot& a, const Slot& b) { return start(a) < start(b); });
  constants_.clear();
  const char* p = begin;
  for (std::size_t i = 0; i < holes_; ++i) {
    Slot& s = slots_[i];
    const std::string_view value = (holes.begin() + s.index)->value;
    if (value.data() < p) return false;  // overlaps the one before
    if (hole_end(value.data(), end, s.kind) != value.data() + value.size()) return false;
    s.before = static_cast<std::size_t>(value.data() - p);
    constants_.append(p, s.before);
    p = value.data() + value.size();
  }
  constants_.append(p, static_cast<std::size_t>(end - p));
  built_ = true;
  return true;
}

bool Template::match(std::string_view text, std::string_view* values) const {
  if (!built_) return false;
  const char* p = text.data();
  const char* const end = p + text.size();
  const char* constant = constants_.data();
  for (std::size_t i = 0; i < given_; ++i)
    values[i] = {};
  for (std::size_t i = 0; i < holes_; ++i) {
    const Slot& s = slots_[i];
    if (static_cast<std::size_t>(end - p) < s.before || !same_bytes(p, constant, s.before))
      return false;
    p += s.before;
    constant += s.before;
    const char* value_end = hole_end(p, end, s.kind);
    if (!value_end) return false;
    values[s.index] = std::string_view(p, static_cast<std::size_t>(value_end - p));
    p = value_end;
  }
  const auto tail = static_cast<std::size_t>(constants_.data() + constants_.size() - constant);
  return static_cast<std::size_t>(end - p) == tail && same_bytes(p, constant, tail);
}

}  // namespace rebound::protocol::json_scan
