// Dialling back (transport = "slurm", or ssh with [ssh] dial_back): the
// launcher starts the agent on a node with `--connect=HOST:PORT`; the agent opens a TCP connection
// to the controller, writes one hello line naming itself and proving the run's secret, and then
// speaks the protocol (protocol.h) over that connection instead of its stdin and stdout. The secret
// comes through the environment (kDialSecretEnv), never the command line, which every user of the
// node can read in /proc.
//
//   {"dial":1,"node":"gpu017","slot":"main","secret":"9f0c..."}
//
// `slot` tells the agents of one node apart: "main" for the one the run
// starts on every node, a nonce for each later one (a Slurm step).
#pragma once

#include <optional>
#include <string>

namespace cc {

inline constexpr char kDialSecretEnv[] = "CLUSTERCHECK_DIAL_SECRET";
inline constexpr char kDialSlotEnv[] = "CLUSTERCHECK_DIAL_SLOT";
// The node's name as the inventory spells it, when ssh started the agent
// (Slurm's agents take SLURMD_NODENAME).
inline constexpr char kDialNodeEnv[] = "CLUSTERCHECK_DIAL_NODE";
// Set (to 1) when ssh started the agent: once dialled, the agent leaves the
// ssh session (its own session, stdio on /dev/null), which the controller
// then closes, so that it holds no ssh session per node for the run.
inline constexpr char kDialDetachEnv[] = "CLUSTERCHECK_DIAL_DETACH";
inline constexpr char kDialMainSlot[] = "main";
// The longest hello line either side accepts.
inline constexpr size_t kMaxDialHello = 1024;

struct DialHello {
  std::string node;
  std::string slot;
  std::string secret;
};

// The hello line, without '\n'.
std::string DialHelloLine(const DialHello& hello);
// nullopt when `line` is not a hello (not JSON, a field missing or not a
// string, or longer than kMaxDialHello).
std::optional<DialHello> ParseDialHello(const std::string& line);
// Compares in time independent of where they differ.
bool SecretsEqual(const std::string& a, const std::string& b);

// "HOST:PORT" (an IPv4 address or a name; "[v6]:PORT" too) -> its parts;
// false when it is not that.
bool SplitHostPort(const std::string& text, std::string* host, int* port);

// Connects to HOST:PORT, retrying refused or unreachable attempts until
// `timeout_s` has passed (the controller may still be binding), and writes
// the hello line. Returns the connected descriptor, or -1 with the reason.
int DialBack(const std::string& host_port, const DialHello& hello, double timeout_s,
             std::string* why);

}  // namespace cc
