#pragma once
// Fuzz inputs that hold several texts separated by NUL bytes (the walker and edit targets).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rebound::fuzz {

/// The NUL-separated parts of `data`, at most `max_parts` (the last one keeps any later NULs
/// out: splitting stops there).
inline std::vector<std::string> split_at_nul(const std::uint8_t* data, std::size_t size,
                                             std::size_t max_parts = SIZE_MAX) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (parts.size() < max_parts) {
    const std::size_t nul = input.find('\0', start);
    parts.push_back(
        input.substr(start, nul == std::string::npos ? std::string::npos : nul - start));
    if (nul == std::string::npos) break;
    start = nul + 1;
  }
  return parts;
}

}  // namespace rebound::fuzz
