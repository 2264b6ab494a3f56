#pragma once
// How limits are written in error texts: "16 MiB", "64 KiB", "4999 bytes".

#include <cstddef>
#include <string>

namespace rebound::session {

/// Whole MiB or KiB when the size is a multiple of one, else bytes.
inline std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace rebound::session
