#include "session/llm/secret_text.h"

#include <algorithm>

namespace rebound::session::llm {

std::string scrub_secret(std::string text, const std::optional<std::string>& secret) {
  if (!secret || secret->empty()) return text;
  for (auto at = text.find(*secret); at != std::string::npos; at = text.find(*secret, at + 3)) {
    text.replace(at, secret->size(), "***");
  }
  return text;
}

std::string cut_without_secret(std::string_view text, std::size_t limit,
                               const std::optional<std::string>& secret) {
  std::string out = scrub_secret(std::string(text), secret);
  if (out.size() <= limit) return out;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
    --cut;  // never inside a UTF-8 sequence
  out.resize(cut);
  if (secret && !secret->empty()) {
    // The longest beginning of the secret that the cut left at the end.
    for (std::size_t n = std::min(out.size(), secret->size() - 1); n > 0; --n) {
      if (std::string_view(out).substr(out.size() - n) == std::string_view(*secret).substr(0, n)) {
        out.replace(out.size() - n, n, "***");
        break;
      }
    }
  }
  return out;
}

}  // namespace rebound::session::llm
