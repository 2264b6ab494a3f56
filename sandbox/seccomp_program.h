#pragma once
// The seccomp filter of policy.md section 8.5, built with libseccomp for the native architecture
// and exported as a BPF program (the bytes bubblewrap reads from `--seccomp FD`).

#include <string>

#include "session/error.h"

namespace rebound::sandbox {

/// The program's bytes, or why it cannot be built.
struct SeccompProgram {
  std::string bpf;
};
session::Result<SeccompProgram> build_seccomp_program();

}  // namespace rebound::sandbox
