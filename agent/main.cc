// clustercheck-agent: pushed to every node; answers JSON lines on stdout
// for requests on stdin (agent/protocol.h). Exits when stdin closes.
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "agent/serve.h"

// The static libstdc++ of Debian 12 drags in std::random_device, which
// calls arc4random: a glibc 2.36 symbol that would make the agent refuse
// to start on Ubuntu 22.04 (glibc 2.35) nodes. Defining it here binds that
// reference inside the binary (getrandom is glibc 2.25). The agent itself
// never draws random numbers; this only has to be correct, not fast.
// tests/e2e/agent_static_test.sh checks the glibc versions the agent needs.
extern "C" uint32_t arc4random(void) {
  uint32_t v = 0;
  auto* p = reinterpret_cast<unsigned char*>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = getrandom(p + got, sizeof v - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      abort();  // no entropy source at all: nothing sane to return
    }
  }
  return v;
}

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
