// The nodes of a run and their live connections: connect, push the agent
// (content-addressed, only when missing), greet it, and hand the nodes to
// stages in a bounded window. A node that cannot be reached, refuses our
// key, has a changed host key or whose agent hangs is a result, never a
// crash: the run goes on with the rest.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/inventory/inventory.h"
#include "orchestrator/transport/agent_channel.h"
#include "orchestrator/transport/transport.h"

namespace cc {

struct FleetOptions {
  // The clustercheck-agent binary on this machine.
  std::string agent_binary;
  // true: upload the agent into node.ssh.agent_dir (ssh). false: run
  // agent_binary where it is (local transport, simulated nodes).
  bool push = true;
  // Nodes in flight at once (--fanout / ssh.fanout). REQUIRES: >= 1.
  int fanout = 64;
  // Deadline for the agent's hello after it was started.
  double hello_timeout_s = 20;
  // What the fleet's deadlines and durations are judged by, and the stages'
  // (StageContext::clock()). Default: the real clock; tests give a
  // FakeClock. REQUIRES: not null, outlives the fleet.
  Clock* clock = &RealClock();
};

struct NodeState {
  const Node* node = nullptr;
  std::unique_ptr<Connection> connection;
  // The agent started while preparing; stages may use it or start more.
  std::unique_ptr<AgentChannel> agent;
  Status status;           // ok = usable
  std::string step;        // where it failed: connect, push, hello
  std::string agent_path;  // on the node
  Json hello;
  long long bytes_pushed = 0;
  double prepare_ms = 0;
  // What the node's login shell printed around our commands or before the
  // agent's hello; "" for a quiet shell (shell_notice.h).
  std::string shell_noise;
  // Seconds from starting a command until it ran (channel setup and the
  // shell's startup files), measured by the push's probe; added to the
  // deadline of every later command on the node, so that a slow login shell
  // is not taken for a hang.
  double shell_startup_s = 0;
  std::vector<std::string> warnings;
  bool usable() const { return status.ok(); }
};

// How a node that could not be prepared counts: a timeout is a hang, an
// interrupt or a launcher's refusal (srun) is an error, a node the site
// took out of service (drained in Slurm) a skip, everything else a
// failure of that node.
Outcome OutcomeForNodeError(const Status& s);

// Parses the machine name (uname -m spelling) out of an ELF header;
// "" when it is not ELF.
std::string ElfMachine(const std::string& binary);

class Fleet {
 public:
  Fleet(Transport& transport, const std::vector<Node>& nodes, FleetOptions options);
  ~Fleet();

  // Connects, pushes and greets every node, at most `fanout` at once.
  // on_done(state) is called (from worker threads, serialized) as each
  // node finishes, so results are stored the moment they are known.
  // kNotFound/kIo only when the local agent binary cannot be read.
  Status Prepare(const std::function<void(const NodeState&)>& on_done);

  // Runs fn for each usable node among `names` (all when empty), at most
  // `fanout` at once; fn has the node's connection to itself.
  void ForEach(const std::vector<std::string>& names, const std::function<void(NodeState&)>& fn);

  // Starts one more agent process on the node and reads its hello, by
  // `deadline` plus the node's shell_startup_s.
  Result<std::unique_ptr<AgentChannel>> StartAgent(NodeState& state, Deadline deadline);

  // Asks a node that a stage lost contact with whether it is still there:
  // a fresh connection and a fresh agent (it was pushed already), each by
  // the node's own deadlines. On success they replace the node's (its old
  // agent is closed) and the node stays usable; on failure the node is
  // left as it was and the error says which step failed. Only where the
  // transport Reconnects(). Call for a node no other thread is using.
  Status Reconnect(NodeState& state);

  std::vector<NodeState*> Usable();
  // Takes a node out of the run after it was prepared (a stage found it
  // lost): Usable() and ForEach leave it out from now on, so later stages
  // skip it instead of waiting on it again; `why` and `step` (e.g. "lost
  // in ports") stay on its NodeState as the reason. Unknown names are
  // ignored. Call from the main thread when no ForEach is running.
  void MarkUnusable(const std::string& name, Status why, const std::string& step);
  NodeState* Find(const std::string& name);
  const std::vector<std::unique_ptr<NodeState>>& states() const { return states_; }
  long long bytes_pushed() const;
  int fanout() const { return options_.fanout; }
  Transport& transport() const { return transport_; }
  Clock& clock() const { return *options_.clock; }

  // Closes every agent (their stdin; they exit) — used at the end and on
  // Ctrl-C. Call from the main thread when no ForEach is running.
  void CloseAll();

 private:
  void PrepareOne(NodeState& s);
  Status Push(NodeState& s);
  Transport& transport_;
  FleetOptions options_;
  std::vector<std::unique_ptr<NodeState>> states_;
  std::string agent_content_;
  std::string agent_name_;
  std::string agent_machine_;
  std::mutex callback_mu_;
};

}  // namespace cc
