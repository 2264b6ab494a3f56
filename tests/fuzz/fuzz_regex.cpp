// The regex engine on arbitrary patterns and subjects: compile errors are reported, matching
// ends (match, no match or too complex) and never crashes. Input: one flag byte (bit 0 ignore
// case, bit 1 literal), the pattern up to NUL, the subject after it.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "tools/glob.h"
#include "tools/regex.h"

using namespace rebound::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t nul = rest.find('\0');
  const std::string pattern = rest.substr(0, nul);
  const std::string subject = nul == std::string::npos ? std::string() : rest.substr(nul + 1);
  Regex::Options options;
  options.ignore_case = flags & 1;
  options.literal = flags & 2;
  auto regex = Regex::compile(pattern, options);
  if (!regex) {
    if (regex.error().message.empty()) std::abort();  // a failure always says why
  } else {
    Matcher m(*regex);
    std::size_t pos = 0, at = 0;
    for (int i = 0; i < 64 && pos <= subject.size(); ++i) {
      if (m.search(subject, pos, at) != Matcher::Result::match) break;
      if (at < pos || at > subject.size()) std::abort();
      pos = at + 1;
    }
  }
  // The same bytes as a glob: its translation must always compile.
  for (bool braces : {false, true}) {
    auto glob = Regex::compile(glob_to_regex(pattern, braces), {false, false, false});
    if (glob) {
      Matcher g(*glob);
      g.matches(subject);
    }
  }
  return 0;
}
