#include "tools/paths.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace rebound::tools {

namespace {

// The UTF-8 forms of U+00A0, U+2000–U+200A, U+202F, U+205F and U+3000.
std::size_t unicode_space_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (i + 1 < s.size() && b(0) == 0xC2 && b(1) == 0xA0) return 2;
  if (i + 2 < s.size() && b(0) == 0xE2 && b(1) == 0x80 && b(2) >= 0x80 && b(2) <= 0x8A) return 3;
  if (i + 2 < s.size() && b(0) == 0xE2 && b(1) == 0x80 && b(2) == 0xAF) return 3;
  if (i + 2 < s.size() && b(0) == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;
  if (i + 2 < s.size() && b(0) == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;
  return 0;
}

// The path as the model gave it, cleaned: `@` removed, Unicode spaces made plain, `~` expanded.
std::string clean_path(std::string_view path) {
  if (!path.empty() && path.front() == '@') path.remove_prefix(1);
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size();) {
    if (const std::size_t n = unicode_space_length(path, i)) {
      out += ' ';
      i += n;
    } else {
      out += path[i++];
    }
  }
  if (out == "~" || out.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    out = std::string(home ? home : "") + out.substr(1);
  }
  return out;
}

}  // namespace

std::string resolve_path(std::string_view path, const std::string& cwd) {
  std::filesystem::path p(clean_path(path));
  if (p.is_relative()) p = std::filesystem::path(cwd) / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/')
    s.pop_back();
  return s;
}

std::string errno_name(int err) {
  switch (err) {
#define REBOUND_ERRNO(name) \
  case name:                \
    return #name;
    REBOUND_ERRNO(ENOENT)
    REBOUND_ERRNO(EACCES)
    REBOUND_ERRNO(EPERM)
    REBOUND_ERRNO(EISDIR)
    REBOUND_ERRNO(ENOTDIR)
    REBOUND_ERRNO(EEXIST)
    REBOUND_ERRNO(EROFS)
    REBOUND_ERRNO(ENOSPC)
    REBOUND_ERRNO(ELOOP)
    REBOUND_ERRNO(ENAMETOOLONG)
    REBOUND_ERRNO(EMFILE)
    REBOUND_ERRNO(EIO)
    REBOUND_ERRNO(EBUSY)
    REBOUND_ERRNO(ETXTBSY)
    REBOUND_ERRNO(EINVAL)
    REBOUND_ERRNO(EFBIG)
    REBOUND_ERRNO(EDQUOT)
    REBOUND_ERRNO(ENFILE)
    REBOUND_ERRNO(ENXIO)
    REBOUND_ERRNO(EAGAIN)
#undef REBOUND_ERRNO
    default:
      return "E" + std::to_string(err);
  }
}

namespace {

// libuv's reason text for the common codes, else strerror in lower case.
std::string errno_reason(int err) {
  switch (err) {
    case ENOENT:
      return "no such file or directory";
    case EACCES:
      return "permission denied";
    case EPERM:
      return "operation not permitted";
    case EISDIR:
      return "illegal operation on a directory";
    case ENOTDIR:
      return "not a directory";
    case EEXIST:
      return "file already exists";
    case EROFS:
      return "read-only file system";
    case ENOSPC:
      return "no space left on device";
    case ELOOP:
      return "too many symbolic links encountered";
    case ENAMETOOLONG:
      return "name too long";
    case EMFILE:
      return "too many open files";
    case EIO:
      return "i/o error";
    default: {
      std::string s = std::strerror(err);
      for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    }
  }
}

}  // namespace

std::string fs_error(int err, std::string_view operation, std::string_view path) {
  std::string s = errno_name(err) + ": " + errno_reason(err) + ", " + std::string(operation);
  if (!path.empty()) s += " '" + std::string(path) + "'";
  return s;
}

}  // namespace rebound::tools
