// clustercheck-agent: pushed to every node; answers JSON lines on stdout
// for requests on stdin (agent/protocol.h). Exits when stdin closes.
// Started with --connect=HOST:PORT (by Slurm, transport = "slurm", or by
// ssh with [ssh] dial_back), it dials the controller back and speaks over
// that connection instead (agent/dial_back.h).
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/dial_back.h"
#include "agent/serve.h"

// The glibc versions this binary may need are pinned in
// agent/glibc_floor/glibc_floor.c (linked into the agent only).

namespace {

// How long a dialling agent keeps trying: Slurm may start it before the
// controller's listener is reachable through a slow network.
constexpr double kDialTimeoutS = 30;

// Who this agent is to the controller: the inventory's name for the node
// (ssh), else Slurm's.
std::string NodeName() {
  if (const char* n = std::getenv(cc::kDialNodeEnv); n != nullptr && *n != '\0') return n;
  if (const char* n = std::getenv("SLURMD_NODENAME"); n != nullptr && *n != '\0') return n;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// Leaves the ssh command that started us (kDialDetachEnv), the classic
// way: a child carries on in its own session with stdio on /dev/null, and
// this process exits once the child is out of our process group. So the
// ssh command ends by itself with status 0 (the controller waits for that
// instead of closing a channel under a running process), no signal sent to
// the launcher's group reaches the agent, and neither it nor the programs
// it starts write to a closed pipe. Nothing is lost: a dialled agent says
// everything over its connection. Called before any thread exists.
void DetachFromLauncher() {
  int ready[2];
  const bool piped = pipe(ready) == 0;
  pid_t child = -1;
  if (piped) {
    child = fork();
    if (child > 0) {
      close(ready[1]);
      char c;
      while (read(ready[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    close(ready[0]);
  }
  // The child, or (no pipe, no fork) this process as it is.
  setsid();
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
    if (null > 2) close(null);
  }
  // Out of the launcher's group now: its exit may go ahead.
  if (piped) close(ready[1]);
}

// The descriptor of a connection to the controller, or -1 (said on stderr).
int DialController(const std::string& host_port) {
  const char* secret = std::getenv(cc::kDialSecretEnv);
  if (secret == nullptr || *secret == '\0') {
    std::fprintf(stderr, "clustercheck-agent: --connect needs %s in the environment\n",
                 cc::kDialSecretEnv);
    return -1;
  }
  const char* slot = std::getenv(cc::kDialSlotEnv);
  cc::DialHello hello{NodeName(), slot != nullptr && *slot != '\0' ? slot : cc::kDialMainSlot,
                      secret};
  // Not for the programs this agent starts.
  unsetenv(cc::kDialSecretEnv);
  unsetenv(cc::kDialSlotEnv);
  unsetenv(cc::kDialNodeEnv);
  const char* detach = std::getenv(cc::kDialDetachEnv);
  const bool leave_launcher = detach != nullptr && std::string(detach) == "1";
  unsetenv(cc::kDialDetachEnv);
  std::string why;
  int fd = cc::DialBack(host_port, hello, kDialTimeoutS, &why);
  if (fd < 0) {
    std::fprintf(stderr, "clustercheck-agent on %s: %s\n", hello.node.c_str(), why.c_str());
  } else if (leave_launcher) {
    DetachFromLauncher();
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  cc::agent::ServeOptions options;
  std::string connect;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--root=", 0) == 0) {
      options.root = a.substr(7);
    } else if (a.rfind("--protocol-version=", 0) == 0) {
      options.protocol_version = std::stoi(a.substr(19));
    } else if (a.rfind("--connect=", 0) == 0) {
      connect = a.substr(10);
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: clustercheck-agent [--root=DIR] [--connect=HOST:PORT]\n"
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
  if (!connect.empty()) {
    int fd = DialController(connect);
    if (fd < 0) return 3;
    return cc::agent::Serve(fd, fd, options);
  }
  return cc::agent::Serve(STDIN_FILENO, STDOUT_FILENO, options);
}
