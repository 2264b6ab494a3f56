#pragma once
// Keeping a secret (the API key) out of texts that quote what an LLM server sent: error bodies
// and malformed events. A text is scrubbed before it is cut, and a cut that ends inside the
// secret loses that beginning too, so no part of the key survives either step. Pure functions.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rebound::session::llm {

/// `text` with every occurrence of `secret` replaced by "***" (unchanged when there is none).
std::string scrub_secret(std::string text, const std::optional<std::string>& secret);

/// At most the first `limit` bytes of `text` with `secret` scrubbed first. The cut never splits
/// a UTF-8 character, and a beginning of `secret` left at the end by the cut becomes "***".
std::string cut_without_secret(std::string_view text, std::size_t limit,
                               const std::optional<std::string>& secret);

}  // namespace rebound::session::llm
