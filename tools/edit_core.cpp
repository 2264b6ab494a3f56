#include "tools/edit_core.h"

#include <algorithm>
#include <cstdint>

namespace rebound::tools {

namespace {

std::string to_lf(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The fuzzy form (section 4.3) with, for each of its bytes, the offset of the original byte
// it came from; `origin` has one more entry: the end of the original.
struct Fuzzy {
  std::string text;
  std::vector<std::size_t> origin;
};

// The replacement for a typographic character starting at s[i], and its length.
std::size_t fuzzy_char(std::string_view s, std::size_t i, char& replacement) {
  if (i + 1 < s.size() && static_cast<unsigned char>(s[i]) == 0xC2 &&
      static_cast<unsigned char>(s[i + 1]) == 0xA0) {
    replacement = ' ';
    return 2;
  }
  if (i + 2 >= s.size()) return 0;
  const auto a = static_cast<unsigned char>(s[i]), b = static_cast<unsigned char>(s[i + 1]),
             c = static_cast<unsigned char>(s[i + 2]);
  if (a == 0xE2 && b == 0x80) {
    if (c >= 0x98 && c <= 0x9B)
      replacement = '\'';  // ‘ ’ ‚ ‛
    else if (c >= 0x9C && c <= 0x9F)
      replacement = '"';  // “ ” „ ‟
    else if (c >= 0x90 && c <= 0x95)
      replacement = '-';  // U+2010–U+2015
    else if (c >= 0x82 && c <= 0x8A)
      replacement = ' ';  // U+2002–U+200A
    else if (c == 0xAF)
      replacement = ' ';  // U+202F
    else
      return 0;
    return 3;
  }
  if (a == 0xE2 && b == 0x88 && c == 0x92) {  // U+2212
    replacement = '-';
    return 3;
  }
  if (a == 0xE2 && b == 0x81 && c == 0x9F) {  // U+205F
    replacement = ' ';
    return 3;
  }
  if (a == 0xE3 && b == 0x80 && c == 0x80) {  // U+3000
    replacement = ' ';
    return 3;
  }
  return 0;
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

Fuzzy fuzzy_form(std::string_view s) {
  Fuzzy f;
  f.text.reserve(s.size());
  f.origin.reserve(s.size() + 1);
  std::size_t line_start = 0;  // in f.text
  auto strip_trailing = [&] {
    while (f.text.size() > line_start && is_blank(f.text.back())) {
      f.text.pop_back();
      f.origin.pop_back();
    }
  };
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '\n') {
      strip_trailing();
      f.text += '\n';
      f.origin.push_back(i);
      ++i;
      line_start = f.text.size();
      continue;
    }
    char r = 0;
    if (const std::size_t n = (i + 1 < s.size()) ? fuzzy_char(s, i, r) : 0) {
      f.text += r;
      f.origin.push_back(i);
      i += n;
    } else {
      f.text += s[i];
      f.origin.push_back(i);
      ++i;
    }
  }
  strip_trailing();
  f.origin.push_back(s.size());
  return f;
}

std::size_t count_occurrences(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + needle.size()))
    ++n;
  return n;
}

struct Match {
  std::size_t start, end, index;
};

std::vector<std::string_view> diff_lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

enum class Op { same, del, add };

// Myers' O((N+M)D) shortest edit script over lines; a plain replacement when D grows past
// `max_d` (a diff is shown to the model, it need not be minimal for huge rewrites).
std::vector<Op> edit_script(const std::vector<std::string_view>& a,
                            const std::vector<std::string_view>& b) {
  // Common prefix and suffix first.
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre])
    ++pre;
  std::size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre &&
         a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  const std::int64_t n = static_cast<std::int64_t>(a.size() - pre - suf);
  const std::int64_t m = static_cast<std::int64_t>(b.size() - pre - suf);
  std::vector<Op> middle;
  const std::int64_t max_d = std::min<std::int64_t>(n + m, 2000);
  std::vector<std::vector<std::int64_t>> trace;
  std::vector<std::int64_t> v(2 * static_cast<std::size_t>(max_d) + 3, 0);
  const std::int64_t off = max_d + 1;
  bool found = n + m == 0;
  std::int64_t d_found = 0;
  for (std::int64_t d = 0; d <= max_d && !found; ++d) {
    for (std::int64_t k = -d; k <= d; k += 2) {
      std::int64_t x;
      if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) {
        x = v[off + k + 1];
      } else {
        x = v[off + k - 1] + 1;
      }
      std::int64_t y = x - k;
      while (x < n && y < m && a[pre + x] == b[pre + y]) {
        ++x;
        ++y;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = true;
        d_found = d;
        break;
      }
    }
    trace.push_back(v);
  }
  if (!found) {
    middle.assign(static_cast<std::size_t>(n), Op::del);
    middle.insert(middle.end(), static_cast<std::size_t>(m), Op::add);
  } else if (n + m > 0) {
    // Walk back through the trace.
    std::int64_t x = n, y = m;
    std::vector<Op> rev;
    for (std::int64_t d = d_found; d > 0; --d) {
      const auto& pv = trace[static_cast<std::size_t>(d - 1)];
      const std::int64_t k = x - y;
      std::int64_t prev_k;
      if (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) {
        prev_k = k + 1;
      } else {
        prev_k = k - 1;
      }
      const std::int64_t prev_x = pv[off + prev_k];
      const std::int64_t prev_y = prev_x - prev_k;
      while (x > prev_x && y > prev_y) {
        rev.push_back(Op::same);
        --x;
        --y;
      }
      rev.push_back(x == prev_x ? Op::add : Op::del);
      x = prev_x;
      y = prev_y;
    }
    while (x > 0 && y > 0) {
      rev.push_back(Op::same);
      --x;
      --y;
    }
    middle.assign(rev.rbegin(), rev.rend());
  }
  std::vector<Op> ops(pre, Op::same);
  // Removed lines before added ones within each changed stretch.
  for (std::size_t i = 0; i < middle.size();) {
    if (middle[i] == Op::same) {
      ops.push_back(Op::same);
      ++i;
      continue;
    }
    std::size_t j = i, dels = 0, adds = 0;
    for (; j < middle.size() && middle[j] != Op::same; ++j)
      (middle[j] == Op::del ? dels : adds)++;
    ops.insert(ops.end(), dels, Op::del);
    ops.insert(ops.end(), adds, Op::add);
    i = j;
  }
  ops.insert(ops.end(), suf, Op::same);
  return ops;
}

}  // namespace

std::string line_diff(std::string_view old_text, std::string_view new_text,
                      std::size_t& first_changed) {
  constexpr std::size_t kContext = 4;
  const auto a = diff_lines(old_text);
  const auto b = diff_lines(new_text);
  const std::size_t count = std::max(std::count(old_text.begin(), old_text.end(), '\n'),
                                     std::count(new_text.begin(), new_text.end(), '\n')) +
                            1;
  const std::size_t width = std::to_string(count).size();
  auto num = [&](std::size_t n) {
    std::string s = std::to_string(n);
    return std::string(width - std::min(width, s.size()), ' ') + s;
  };
  const auto ops = edit_script(a, b);
  std::vector<std::string> out;
  first_changed = 0;
  std::size_t ai = 0, bi = 0;
  for (std::size_t i = 0; i < ops.size();) {
    if (ops[i] != Op::same) {
      if (first_changed == 0) first_changed = bi + 1;
      if (ops[i] == Op::del) {
        out.push_back("-" + num(ai + 1) + " " + std::string(a[ai]));
        ++ai;
      } else {
        out.push_back("+" + num(bi + 1) + " " + std::string(b[bi]));
        ++bi;
      }
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < ops.size() && ops[j] == Op::same)
      ++j;
    const std::size_t run = j - i;
    const bool before = i > 0, after = j < ops.size();
    auto show = [&](std::size_t from, std::size_t to) {  // lines of the run, [from, to)
      for (std::size_t k = from; k < to; ++k)
        out.push_back(" " + num(ai + k + 1) + " " + std::string(a[ai + k]));
    };
    const std::string skipped = " " + std::string(width, ' ') + " ...";
    if (before && after) {
      if (run <= 2 * kContext) {
        show(0, run);
      } else {
        show(0, kContext);
        out.push_back(skipped);
        show(run - kContext, run);
      }
    } else if (before) {
      show(0, std::min(run, kContext));
      if (run > kContext) out.push_back(skipped);
    } else if (after) {
      if (run > kContext) out.push_back(skipped);
      show(run > kContext ? run - kContext : 0, run);
    }
    ai += run;
    bi += run;
    i = j;
  }
  std::string s;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (k > 0) s += '\n';
    s += out[k];
  }
  return s;
}

EditOutcome apply_edits(std::string_view original, const std::vector<TextEdit>& edits,
                        std::string_view path) {
  EditOutcome r;
  const std::string p(path);
  const bool several = edits.size() > 1;
  auto fail = [&](std::string text) {
    r.error = std::move(text);
    return r;
  };
  std::string_view body = original;
  const bool bom = body.substr(0, 3) == "\xEF\xBB\xBF";
  if (bom) body.remove_prefix(3);
  const std::size_t first_nl = body.find('\n');
  const bool crlf =
      first_nl != std::string_view::npos && first_nl > 0 && body[first_nl - 1] == '\r';
  const std::string text = to_lf(body);

  for (std::size_t i = 0; i < edits.size(); ++i) {
    if (edits[i].old_text.empty()) {
      return fail(several
                      ? "edits[" + std::to_string(i) + "].oldText must not be empty in " + p + "."
                      : "oldText must not be empty in " + p + ".");
    }
  }
  const Fuzzy fuzzy_text = fuzzy_form(text);
  std::vector<Match> matches;
  std::vector<std::string> replacements;
  for (std::size_t i = 0; i < edits.size(); ++i) {
    const std::string old_lf = to_lf(edits[i].old_text);
    const Fuzzy fuzzy_old = fuzzy_form(old_lf);
    std::size_t start = text.find(old_lf), end = 0;
    if (start != std::string::npos) {
      end = start + old_lf.size();
    } else if (!fuzzy_old.text.empty()) {
      const std::size_t fpos = fuzzy_text.text.find(fuzzy_old.text);
      if (fpos != std::string::npos) {
        const std::size_t fend = fpos + fuzzy_old.text.size();
        start = fuzzy_text.origin[fpos];
        end = fuzzy_text.origin[fend - 1] + 1;
        // Continue over the rest of a multi-byte character the last fuzzy byte came from.
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
          ++end;
        // A match that ends a line takes the line's trailing blanks with it.
        if (fend == fuzzy_text.text.size() || fuzzy_text.text[fend] == '\n') {
          while (end < text.size() && is_blank(text[end]))
            ++end;
        }
      }
    }
    if (start == std::string::npos) {
      return fail(several ? "Could not find edits[" + std::to_string(i) + "] in " + p +
                                ". The oldText must match exactly including all whitespace and "
                                "newlines."
                          : "Could not find the exact text in " + p +
                                ". The old text must match exactly including all whitespace and "
                                "newlines.");
    }
    const std::size_t n = fuzzy_old.text.empty()
                              ? count_occurrences(text, old_lf)
                              : count_occurrences(fuzzy_text.text, fuzzy_old.text);
    if (n > 1) {
      return fail(several ? "Found " + std::to_string(n) + " occurrences of edits[" +
                                std::to_string(i) + "] in " + p +
                                ". Each oldText must be unique. Please provide more context to "
                                "make it unique."
                          : "Found " + std::to_string(n) + " occurrences of the text in " + p +
                                ". The text must be unique. Please provide more context to make "
                                "it unique.");
    }
    matches.push_back({start, end, i});
    replacements.push_back(to_lf(edits[i].new_text));
  }
  std::vector<Match> sorted = matches;
  std::sort(sorted.begin(), sorted.end(),
            [](const Match& x, const Match& y) { return x.start < y.start; });
  for (std::size_t k = 1; k < sorted.size(); ++k) {
    if (sorted[k - 1].end > sorted[k].start) {
      return fail("edits[" + std::to_string(sorted[k - 1].index) + "] and edits[" +
                  std::to_string(sorted[k].index) + "] overlap in " + p +
                  ". Merge them into one edit or target disjoint regions.");
    }
  }
  std::string result;
  result.reserve(text.size());
  std::size_t at = 0;
  for (const auto& m : sorted) {
    result.append(text, at, m.start - at);
    result += replacements[m.index];
    at = m.end;
  }
  result.append(text, at, std::string::npos);
  if (result == text) {
    return fail(several
                    ? "No changes made to " + p + ". The replacements produced identical content."
                    : "No changes made to " + p +
                          ". The replacement produced identical content. This might indicate "
                          "an issue with special characters or the text not existing as "
                          "expected.");
  }
  r.diff = line_diff(text, result, r.first_changed_line);
  std::string restored;
  if (bom) restored = "\xEF\xBB\xBF";
  if (crlf) {
    restored.reserve(result.size() + result.size() / 16);
    for (char c : result) {
      if (c == '\n') restored += '\r';
      restored += c;
    }
  } else {
    restored += result;
  }
  r.content = std::move(restored);
  return r;
}

}  // namespace rebound::tools
