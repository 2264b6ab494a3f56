#!/usr/bin/env python3
"""Size limits of the product code (docs/architecture.md, "Size limits"): no function body over
150 lines and no file over 700 lines in the product folders, which it finds itself: every
top-level folder with C++ sources but tests/ and bench/ (tests, benchmarks and fuzz targets are
not product code). A function is a brace block at namespace or class scope whose head (the
text since the previous `;`, `{` or `}`) has a parameter list; lambdas and local classes count
towards the function they are written in. Comments, strings and preprocessor lines are blanked
before the braces are matched. It also holds the one error shape of the product headers: none
declares a `std::variant<T, std::string>` (a value or an error text); `session::Result<T>` is the
error return (docs/architecture.md, "The path of one command").

Usage: check_sizes.py [ROOT] [--max-function N] [--max-file N] [--self-test]; exit 1 with one
line per offender, 0 with a summary line otherwise. --self-test checks the scanner on known
input first (a function it must measure, braces in strings and comments it must not count)."""

import argparse
import pathlib
import re
import sys

# Not product code: the tests, the benchmarks, and folders that hold no C++.
NOT_PRODUCT = {"tests", "bench"}


def rooms(root):
    """The product folders, found rather than listed: every top-level folder (not hidden, not a
    build tree, not tests or bench) that holds C++ sources."""
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        name = folder.name
        if name.startswith(".") or name.startswith("build") or name in NOT_PRODUCT:
            continue
        if (folder / "CMakeCache.txt").exists() or name == "node_modules":
            continue
        if any(f.suffix in (".cpp", ".h") for f in folder.rglob("*")):
            out.append(name)
    return out

# A value-or-error-text variant: the error shape session::Result<T> replaced.
TEXT_ERROR_VARIANT = re.compile(r"std::variant<[^;{}]*,\s*std::string\s*>")

SCOPE_WORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def blank(text):
    """Comments, string and character literals and preprocessor lines become spaces; newlines
    stay, so line numbers are kept."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            while i < n and text[i] != "\n":
                # a continued directive goes on past the backslash-newline
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if raw:
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + '"')
            i = end
            continue
        if c in "\"'":
            # a digit separator (1'000) is no character literal
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of each function body at namespace or class scope."""
    code = blank(text)
    result = []
    stack = []  # per open brace: "scope" (namespace/class/other non-function) or "function"
    head_start = 0
    line = 1
    line_of = []
    for ch in code:
        line_of.append(line)
        if ch == "\n":
            line += 1
    for i, ch in enumerate(code):
        if ch == "{":
            if any(kind == "function" for kind, *_ in stack):
                stack.append(("inner",))
                continue
            head = code[head_start:i]
            is_function = ("(" in head and not SCOPE_WORDS.search(head.split("(")[0])
                           and not re.search(r"=\s*$", head))
            if is_function:
                name = re.findall(r"([~\w:]+)\s*\(", head)
                first = line_of[head_start + len(head) - len(head.lstrip())]
                stack.append(("function", name[0] if name else "?", first))
            else:
                stack.append(("scope",))
            head_start = i + 1
        elif ch == "}":
            if stack:
                top = stack.pop()
                if top[0] == "function":
                    result.append((top[1], top[2], line_of[i]))
            if not any(kind == "function" for kind, *_ in stack):
                head_start = i + 1
        elif ch == ";" and not any(kind == "function" for kind, *_ in stack):
            head_start = i + 1
    return result


SELF_TEST = r'''
namespace a {
struct S {
  int f() const {  // "{" in a comment
    return 1;
  }
};
const char* text = "{ not a function (";
int g(int x) {
  auto l = [x] { return x; };
  if (x) {
    return l();
  }
  /* } */
  return R"j({"a":[1]})j"[0];
}
}  // namespace a
'''


def self_test():
    found = {name: (first, last) for name, first, last in functions(SELF_TEST)}
    expected = {"f": (4, 6), "g": (9, 16)}
    if found != expected:
        print(f"check_sizes self-test failed: found {found}, expected {expected}")
        return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--max-function", type=int, default=150)
    parser.add_argument("--max-file", type=int, default=700)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test and not self_test():
        return 1
    root = pathlib.Path(args.root)
    offenders = []
    files = 0
    longest = ("", "", 0)
    found = rooms(root)
    for folder in found:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h") or not path.is_file():
                continue
            files += 1
            text = path.read_text(encoding="utf-8", errors="replace")
            rel = path.relative_to(root)
            lines = text.count("\n") + (0 if text.endswith("\n") else 1)
            if lines > args.max_file:
                offenders.append(f"{rel}: {lines} lines (file limit {args.max_file})")
            if path.suffix == ".h":
                for m in TEXT_ERROR_VARIANT.finditer(blank(text)):
                    line = text.count("\n", 0, m.start()) + 1
                    offenders.append(f"{rel}:{line}: std::variant<T, std::string> (an error "
                                     "return is session::Result<T>)")
            for name, first, last in functions(text):
                length = last - first + 1
                if length > longest[2]:
                    longest = (f"{rel}:{first}", name, length)
                if length > args.max_function:
                    offenders.append(
                        f"{rel}:{first}: {name} is {length} lines (function limit "
                        f"{args.max_function})")
    for o in offenders:
        print(o)
    if offenders:
        return 1
    print(f"sizes: {files} product files in {len(found)} rooms ({', '.join(found)}), none over {args.max_file} lines, no "
          f"std::variant<T, std::string> in a header; longest function "
          f"{longest[1]} at {longest[0]}, {longest[2]} lines (limit {args.max_function})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
