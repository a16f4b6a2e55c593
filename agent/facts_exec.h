// Runs a helper program (ompi_info, python, bash -lc) for the facts, with a
// deadline: fork/exec, stdout and stderr through pipes, the whole process
// group killed when the deadline passes. No shell is involved unless the
// caller asks for one in argv.
#pragma once

#include <string>
#include <vector>

#include "common/deadline.h"

namespace cc::agent {

struct ExecResult {
  // False when the program could not be started (not found, not
  // executable); `error` says why and nothing else is set.
  bool started = false;
  bool timed_out = false;
  // Exit status when it exited, -1 when killed by a signal or timed out.
  int exit_code = -1;
  std::string out;    // stdout, capped at kMaxExecOutput
  std::string err;    // stderr, capped at kMaxExecOutput
  std::string error;  // why it did not start, e.g. "ompi_info: No such file or directory"
};

inline constexpr size_t kMaxExecOutput = 1 << 20;

// The facts sections' own deadlines (a helper program's 5 s, the login
// shell's 5 s, NVML's 60 s, ...) are their base times this scale. The
// controller asks for a larger one when it retests a node whose facts timed
// out under load. Process-wide; set by the facts command before its
// sections start (one facts command runs at a time). Values below 1 count
// as 1.
void SetFactsDeadlineScale(double scale);
// base_s times the current scale.
double FactsDeadlineS(double base_s);
// "5 s" for FactsDeadlineS(5) at scale 1, "15 s" at scale 3: for messages
// that name the deadline that passed.
std::string FactsDeadlineText(double base_s);

// argv[0] is looked up on PATH when it has no '/'. stdin is /dev/null.
// REQUIRES: argv is not empty.
ExecResult RunProgram(const std::vector<std::string>& argv, Deadline deadline);

}  // namespace cc::agent
