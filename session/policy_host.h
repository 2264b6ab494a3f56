#pragma once
// What the front ends need of the permission policy (policy.md section 7): the effective policy
// as get_policy shows it, and the session's mode. Event loop only.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"

namespace rebound::session {

class PolicyControl {
 public:
  virtual ~PolicyControl() = default;
  /// The `Policy` object; with `wait`, once the sandbox check is done.
  virtual void describe(bool wait, std::function<void(protocol::Json)> done) = 0;
  /// Sets the mode for calls not judged yet; false for an unknown mode name.
  virtual bool set_mode(std::string_view mode) = 0;
  /// The mode's name (hooks' `permission_mode`).
  virtual std::string mode() const = 0;
};

}  // namespace rebound::session
