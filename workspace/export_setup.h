#pragma once
// export_html's writer (sessions.md section 12.1): where the page goes (the default name in the
// session cwd, a relative path against it), its folders created, the file replaced atomically.

#include "session/session_export.h"

namespace rebound::server {

session::Result<std::string> write_html_export(session::ExportRequest request);

}  // namespace rebound::server
