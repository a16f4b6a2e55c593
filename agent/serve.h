// The agent's main loop: hello, then one request at a time until stdin
// closes. Separate from main() so that tests drive it through pipes.
#pragma once

#include <string>

namespace cc::agent {

struct ServeOptions {
  // Root for /proc, /sys, /etc (tests: a fixture tree). Default: real root.
  std::string root = "/";
  // Protocol version this agent claims in hello. Only tests change it.
  int protocol_version = -1;  // -1: protocol::kVersion
};

// Returns the process exit code: 0 when stdin closed normally.
int Serve(int in_fd, int out_fd, const ServeOptions& options);

}  // namespace cc::agent
