#define PCRE2_CODE_UNIT_WIDTH 8
#include "tools/regex.h"

#include <pcre2.h>

#include <algorithm>
#include <cstdint>

namespace rebound::tools {

namespace {
// Limits on one match attempt: far above what a sane pattern needs on a line, small enough
// that a catastrophic one gives up within milliseconds.
constexpr std::uint32_t kMatchLimit = 2'000'000;
constexpr std::uint32_t kDepthLimit = 10'000;
constexpr std::uint32_t kHeapLimitKiB = 64 * 1024;
constexpr std::size_t kJitStackMax = 4 * 1024 * 1024;
// The work one unit of the match limit stands for grows with the compiled pattern (a large
// counted group is walked per backtrack: `(?:a?){5000}a{5000}$` spent 0.8 s in 2,000,000 units
// and larger ones minutes, issue 50), so the limit is shared out by size: about this many
// pattern bytes per match, never under kMinMatchLimit.
constexpr std::uint64_t kMatchBudget = 2'000'000ULL * 512;
constexpr std::uint32_t kMinMatchLimit = 2'000;
}  // namespace

struct Regex::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
  std::uint32_t match_limit = kMatchLimit;
  ~Impl() {
    if (code) pcre2_code_free(code);
  }
};

Regex::Regex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Regex::~Regex() = default;

session::Result<std::shared_ptr<const Regex>> Regex::compile(std::string_view pattern,
                                                             Options options) {
  std::uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_BSUX;
  if (options.ignore_case) flags |= PCRE2_CASELESS;
  if (options.literal) flags = (flags & ~PCRE2_ALT_BSUX) | PCRE2_LITERAL;
  if (options.multiline && !options.literal) flags |= PCRE2_MULTILINE;
  pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(cc, PCRE2_NEWLINE_ANYCRLF);
  if (!options.literal) pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
  pcre2_set_parens_nest_limit(cc, 1000);
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 flags, &code, &offset, cc);
  pcre2_compile_context_free(cc);
  if (!re) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(code, buf, sizeof buf);
    return session::failure(std::string(reinterpret_cast<const char*>(buf)) + " at offset " +
                            std::to_string(offset));
  }
  auto impl = std::make_unique<Impl>();
  impl->code = re;
  impl->jit = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
  std::size_t size = 0;
  if (pcre2_pattern_info(re, PCRE2_INFO_SIZE, &size) == 0 && size > 0)
    impl->match_limit = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(kMatchBudget / size, kMinMatchLimit, kMatchLimit));
  return std::shared_ptr<const Regex>(new Regex(std::move(impl)));  // NOLINT: private ctor
}

struct Matcher::State {
  std::shared_ptr<const Regex> regex;
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ~State() {
    if (data) pcre2_match_data_free(data);
    if (context) pcre2_match_context_free(context);
    if (stack) pcre2_jit_stack_free(stack);
  }
};

Matcher::Matcher(std::shared_ptr<const Regex> regex) : state_(std::make_unique<State>()) {
  state_->regex = std::move(regex);
  const pcre2_code* code = state_->regex->impl().code;
  state_->data = pcre2_match_data_create_from_pattern(code, nullptr);
  state_->context = pcre2_match_context_create(nullptr);
  pcre2_set_match_limit(state_->context, state_->regex->impl().match_limit);
  pcre2_set_depth_limit(state_->context, kDepthLimit);
  pcre2_set_heap_limit(state_->context, kHeapLimitKiB);
  if (state_->regex->impl().jit) {
    state_->stack = pcre2_jit_stack_create(32 * 1024, kJitStackMax, nullptr);
    pcre2_jit_stack_assign(state_->context, nullptr, state_->stack);
  }
}

Matcher::~Matcher() = default;

Matcher::Result Matcher::search(std::string_view subject, std::size_t start,
                                std::size_t& match_start) {
  const int rc =
      pcre2_match(state_->regex->impl().code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                  subject.size(), start, 0, state_->data, state_->context);
  if (rc >= 0) {
    match_start = pcre2_get_ovector_pointer(state_->data)[0];
    return Result::match;
  }
  if (rc == PCRE2_ERROR_NOMATCH) return Result::no_match;
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
      rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_NOMEMORY)
    return Result::too_complex;
  return Result::no_match;  // invalid UTF is matched around (PCRE2_MATCH_INVALID_UTF)
}

bool Matcher::matches(std::string_view subject) {
  std::size_t at = 0;
  return search(subject, 0, at) == Result::match;
}

}  // namespace rebound::tools
