// The ports stage's plan: which ports every receiver must accept from
// every sender, and how an agent's answer for one probe becomes a stored
// state and outcome. Pure: no I/O; thread-safe.
//
// The port set of a receiver R:
//   ssh        R's SSH port (node.ssh.port, 22 by default): its expected
//              holder is sshd, so R's agent does not try to listen there
//              (even when [stages.ports].ports lists it) and the probe
//              reads sshd's banner ("SSH-2.0-...") as the answer;
//   listed     [stages.ports].ports (default 29500), ranges "lo-hi"
//              expanded; R's agent listens on each and answers a token;
//   ephemeral  a sample of R's net.ipv4.ip_local_port_range (default 8),
//              where NCCL's data sockets listen after rendezvous.
// A listed port R could not bind because another process holds it
// (EADDRINUSE) is probed as a plain connect and stored as "in-use".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/outcome.h"
#include "common/status.h"

namespace cc {

// More distinct listed ports than this is a mistake ("1-65535"): every
// pair probes each one.
inline constexpr int kMaxListedPorts = 512;

struct PortsSettings {
  std::vector<int> ports = {29500};  // listed, sorted, unique
  int ephemeral_samples = 8;         // per receiver; 0 = none
  // Per connect; longer = filtered. 2 s lets one lost SYN be retransmitted
  // (Linux's first retransmission comes after 1 s) before we call it a DROP.
  int timeout_ms = 2000;
  int parallel = 256;  // connects in flight per node
  // Senders that probe one receiver at once, at most (probe_pacer.h): the
  // probes run in rounds of disjoint pairs, this many rounds at a time,
  // fewer while connect times rise.
  int senders_per_receiver = 8;
};

// Reads a [stages.ports] table (already type-checked by the inventory
// parser). kBadInventory naming stages.ports.ports when ranges expand to
// more than kMaxListedPorts ports.
Result<PortsSettings> ReadPortsSettings(const nlohmann::json& settings);

enum class PortKind { kSsh, kListed, kEphemeral };
const char* PortKindName(PortKind k);  // "ssh", "listed", "ephemeral"

// What one receiver's agent said after phase 1 ("listening").
struct ReceiverInfo {
  std::string node;
  std::string addr;                        // where senders connect
  std::optional<int> ssh_port;             // probed plain; none for local transport
  std::set<int> bound;                     // listed ports it listens on
  std::map<int, std::string> bind_errors;  // listed port -> "EADDRINUSE: ..."
  std::vector<int> ephemeral;              // the sample it listens on
  std::optional<std::pair<int, int>> ephemeral_range;
};

// The listed ports R's agent listens on: all but R's ssh port, which sshd
// holds (no EADDRINUSE to report for the expected holder).
std::vector<int> ListenPorts(const std::vector<int>& listed, std::optional<int> ssh_port);

// Parses an agent's "listening" data into `info` (node, addr and ssh_port
// are left as they are). kProtocol when a field has the wrong shape.
Status ParseListening(const nlohmann::json& data, ReceiverInfo* info);

struct PlannedProbe {
  std::string src;
  std::string dst;
  std::string addr;  // dst's address
  int port = 0;
  PortKind kind = PortKind::kListed;
  bool plain = false;      // no token expected (ssh, or a port held by others)
  std::string bind_error;  // why dst could not listen ("" when it did)
};

class ProbePlan;  // probe_plan.h: the same plan, held per node

// Every (sender, receiver, port) with sender != receiver: for each
// receiver its ssh port, every listed port (the ssh port counts as ssh
// only) and its own ephemeral sample. Grouped by sender, receivers and
// ports in the given order.
std::vector<PlannedProbe> PlanProbes(const std::vector<std::string>& senders,
                                     const std::vector<ReceiverInfo>& receivers,
                                     const std::vector<int>& listed);

// One batch of the probe phase: rounds [first, first + count) of `rounds`
// (RoundRobinRounds: every node in at most one pair per round), both
// directions of every pair, as plan indices grouped by sender; pairs with
// a node in `skip` (lost) are left out. Every receiver is probed by at
// most `count` senders in a batch, one per round: the bound on inbound
// load.
std::map<std::string, std::vector<size_t>> BatchProbes(
    const ProbePlan& plan,
    const std::vector<std::vector<std::pair<std::string, std::string>>>& rounds, size_t first,
    size_t count, const std::set<std::string>& skip);

// How one probe is stored.
struct ProbeJudgement {
  std::string state;  // open | refused | filtered | unreachable | in-use |
                      // wrong-host | error
  Outcome outcome = Outcome::kError;
  std::string message;
};

// agent_state is the agent's wire state (open, open-other, refused,
// filtered, unreachable, error); reply what it read when that was not the
// token; note its remark. `tokens` are every node's tokens (to recognise
// a reply from another node: an address that leads to the wrong host).
ProbeJudgement JudgeProbe(const PlannedProbe& p, const std::string& agent_state,
                          const std::string& reply, const std::string& note,
                          const std::map<std::string, std::string>& tokens);

// The --dry-run estimate of the probe phase, from the stage's own settings
// so that it cannot drift from what the stage does: `rounds` rounds of
// disjoint pairs (RoundRobinRounds), senders_per_receiver rounds per batch,
// each sender probing its peers' PortsPerPair ports, `parallel` at a time.
// healthy_s: every port answers at once (a batch costs its agent round trip
// and the connects); worst_s: every wave of connects waits timeout_ms.
struct PortsEstimate {
  size_t ports_per_pair = 0;
  size_t batches = 0;
  double healthy_s = 0;
  double worst_s = 0;
};
// Ports per ordered pair, as the stage plans them per receiver: the listed
// ones, the ssh port (once, when there is one: none for local transport)
// and the ephemeral samples.
size_t PortsPerPair(const PortsSettings& s, std::optional<int> ssh_port);
PortsEstimate EstimatePorts(const PortsSettings& s, std::optional<int> ssh_port, size_t rounds);

// The deadline (ms) a sender needs for `targets` probes, `parallel` at a
// time, each up to timeout_ms, plus name resolution and slack.
long long ProbePhaseMs(size_t targets, int parallel, int timeout_ms);

}  // namespace cc
