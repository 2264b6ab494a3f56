#include "workspace/export_setup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "export/html_export.h"
#include "session/session_file.h"
#include "tools/paths.h"

namespace rebound::server {

namespace fs = std::filesystem;

namespace {

session::Error write_error(int err, const std::string& abs) {
  return session::Error{session::ErrorKind::failed, tools::fs_error(err, "open", abs)};
}

// `text` into a new file beside `target`, then renamed over it; errno on failure.
int replace_file(const fs::path& target, const std::string& text) {
  std::string temp =
      (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return errno;
  ::fchmod(fd, 0644);
  std::size_t done = 0;
  int err = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(temp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(temp.c_str());
  return err;
}

}  // namespace

session::Result<std::string> write_html_export(session::ExportRequest r) {
  const fs::path cwd(r.cwd);
  fs::path target;
  if (!r.output_path) {
    const std::string name =
        r.session_file ? fs::path(*r.session_file).stem().string() : r.session_id;
    target = cwd / ("rebound-session-" + name + ".html");
  } else {
    const fs::path given(*r.output_path);
    target = given.is_absolute() ? given : cwd / given;
  }
  target = target.lexically_normal();
  const std::string abs = target.string();
  if (target.filename().empty()) return write_error(EISDIR, abs);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return write_error(ec.value(), abs);
  exporter::ExportPage page;
  page.count = r.count;
  page.size_hint = r.size_hint;
  page.entry = std::move(r.entry);
  page.kinds.reserve(r.kinds.size());
  for (const session::EntryKind k : r.kinds) {
    using session::EntryKind;
    page.kinds.push_back(k == EntryKind::user_message        ? exporter::PathKind::user
                         : k == EntryKind::assistant_message ? exporter::PathKind::assistant
                         : k == EntryKind::other_message     ? exporter::PathKind::other_message
                                                             : exporter::PathKind::other);
  }
  page.title = r.session_name ? *r.session_name : "Rebound session " + r.session_id;
  page.session_id = r.session_id;
  page.session_file = r.session_file;
  page.cwd = r.cwd;
  page.model = r.model;
  page.exported_at = session::iso_timestamp(r.now_ms);
  page.version = REBOUND_VERSION;
  if (const int err = replace_file(target, exporter::render_html(page)); err != 0)
    return write_error(err, abs);
  return abs;
}

}  // namespace rebound::server
