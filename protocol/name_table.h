#pragma once
// Wire names of enumerators, declared once beside the enum as {value, name} pairs: the one
// helper for every enum that is written or read by name (thinking levels, queue modes, stream
// update kinds, retry error classes, compaction reasons, MCP statuses). Pure, constexpr.

#include <cstddef>
#include <optional>
#include <string_view>

namespace rebound::protocol {

template <typename E>
struct Named {
  E value;
  std::string_view name;
};

/// The name of `value` in `table` ("" when the table does not list it).
template <typename E, std::size_t N>
constexpr std::string_view name_of(E value, const Named<E> (&table)[N]) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return {};
}

/// The enumerator named `name` in `table`, or none.
template <typename E, std::size_t N>
constexpr std::optional<E> value_named(std::string_view name, const Named<E> (&table)[N]) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

}  // namespace rebound::protocol
