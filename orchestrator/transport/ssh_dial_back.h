// [ssh] dial_back: ssh starts the agent, and the agent dials this machine
// back over TCP (agent/dial_back.h) and speaks its protocol there. Once it
// dialled, the agent leaves its ssh command (its own session, stdio on
// /dev/null) and the ssh channel is closed, so that its connection can close
// the ssh session too: the controller then holds no libssh session per node
// for the run (about 180 KB each, the largest per-node cost at 256 nodes)
// and none of the agents' answers in ssh buffers. The agent lives as long
// as its TCP connection: it exits when the controller closes it or dies.
//
// The secret reaches the agent through the ssh channel's stdin, read by a
// POSIX shell into its environment: never on a command line, which every
// user of the node can read in /proc. Each start gets a slot of its own, so
// an agent can only be taken by the start that asked for it.
//
// Threading: Start may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "orchestrator/transport/dial_back_listener.h"
#include "orchestrator/transport/transport.h"

namespace cc {

class SshDialBack {
 public:
  // Listens on `listen` ("ADDR" or "ADDR:PORT"; "" = the address this
  // machine reaches `towards` from, any port) for the agents of `nodes`.
  static Result<std::unique_ptr<SshDialBack>> Open(const std::string& listen,
                                                   const std::string& towards,
                                                   std::set<std::string> nodes);

  // How a command is started on the node (the node's Connection::Start).
  using StartCommand =
      std::function<Result<std::unique_ptr<RemoteProcess>>(const CommandLine&, Deadline)>;

  // Starts `agent` (clustercheck-agent's command line) through `start` so
  // that it dials back as `node`, and waits for it by `deadline`. The
  // process returned speaks over the agent's connection, its exit is 0
  // once the agent closed it, and it has no stderr (the agent has nothing
  // to say there once dialled). Errors: kTimeout when it did not dial back
  // in time (naming where it should have), kEof when it exited first
  // (with its stderr), and `start`'s own.
  Result<std::unique_ptr<RemoteProcess>> Start(const std::string& node, const CommandLine& agent,
                                               const StartCommand& start, Deadline deadline);

  // The shell command line that reads the secret from stdin and execs
  // `agent` dialling `connect` in `slot` as `node`.
  static CommandLine Wrapped(const std::string& node, const std::string& slot,
                             const std::string& connect, const CommandLine& agent);

  const std::string& connect() const { return connect_; }
  // An agent that did not dial back was started over ssh instead
  // (dial_back_auto); counted in Meta as "over_ssh".
  void NoteFellBack() { ++fell_back_; }
  // For the run's meta "launcher".
  nlohmann::json Meta() const;

 private:
  SshDialBack(std::unique_ptr<DialBackListener> listener, std::string secret, std::string connect);
  std::unique_ptr<DialBackListener> listener_;
  const std::string secret_;
  const std::string connect_;  // HOST:PORT the agents dial
  std::atomic<int> next_slot_{1};
  std::atomic<int> fell_back_{0};
};

}  // namespace cc
