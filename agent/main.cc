// clustercheck-agent: pushed to every node; answers JSON lines on stdout
// for requests on stdin (agent/protocol.h). Exits when stdin closes.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/serve.h"

// The glibc versions this binary may need are pinned in
// agent/glibc_floor/glibc_floor.c (linked into the agent only).

int main(int argc, char** argv) {
  cc::agent::ServeOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--root=", 0) == 0) {
      options.root = a.substr(7);
    } else if (a.rfind("--protocol-version=", 0) == 0) {
      options.protocol_version = std::stoi(a.substr(19));
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: clustercheck-agent [--root=DIR]\n"
          "Reads JSON-line requests on stdin, answers on stdout; exits when\n"
          "stdin closes. Started by clustercheck, not by hand.\n");
      return 0;
    } else {
      std::fprintf(stderr, "clustercheck-agent: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  // A dead controller closes our stdout; writing must not kill us before we
  // see stdin's EOF and clean up listeners.
  signal(SIGPIPE, SIG_IGN);
  return cc::agent::Serve(STDIN_FILENO, STDOUT_FILENO, options);
}
