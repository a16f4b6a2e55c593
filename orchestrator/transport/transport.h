// The outside world of a node: run a command, stream its stdio, upload a
// file. Implemented by SshTransport (libssh), LocalTransport (fork/exec on
// this host; also the simulated nodes) and FakeTransport (unit tests).
//
// Threading: a Connection and the processes it started are used by one
// thread at a time. Different Connections may be used from different
// threads at once.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/deadline.h"
#include "common/status.h"
#include "orchestrator/inventory/inventory.h"

namespace cc {

struct CommandLine {
  std::vector<std::string> argv;           // argv[0] is the program
  std::map<std::string, std::string> env;  // added to the environment
  // argv is clustercheck-agent: a transport whose agents dial back (ssh
  // dial_back, slurm) may start it that way, so that its protocol runs
  // over its own TCP connection instead of stdin and stdout.
  bool agent = false;
};

// Quotes argv and env for a POSIX shell: "env A='1' 'prog' 'arg'".
std::string ShellQuoteCommand(const CommandLine& cmd);
std::string ShellQuote(std::string_view s);

class RemoteProcess {
 public:
  virtual ~RemoteProcess() = default;
  // Writes all of `data` to stdin. kEof when the process closed stdin,
  // kTimeout at the deadline.
  virtual Status WriteStdin(std::string_view data, Deadline deadline) = 0;
  virtual void CloseStdin() = 0;
  // The next stdout line without '\n'. kEof when stdout is closed and no
  // line is left, kTimeout at the deadline.
  virtual Result<std::string> ReadLine(Deadline deadline) = 0;
  // Stderr collected so far (the last 64 KiB).
  virtual std::string StderrSoFar() = 0;
  // Waits for the exit: the exit code, or 128+signal. kTimeout at deadline.
  virtual Result<int> Wait(Deadline deadline) = 0;
  // Stops the process (and, locally, its process group) now. Idempotent.
  virtual void Kill() = 0;
};

// A live connection to one node.
class Connection {
 public:
  virtual ~Connection() = default;
  // Starts a command. For ssh it runs under the remote user's shell, so
  // "~" works in argv[0].
  virtual Result<std::unique_ptr<RemoteProcess>> Start(const CommandLine& cmd,
                                                       Deadline deadline) = 0;
  // Writes `content` to `remote_path` atomically: a temporary name in the
  // same directory, then rename. Creates missing parent directories with
  // mode 0700. "~/" means the remote home.
  virtual Status Upload(const std::string& content, const std::string& remote_path, int mode,
                        Deadline deadline) = 0;
  // Whether a regular file exists at `remote_path`, and its size.
  virtual Result<long long> FileSize(const std::string& remote_path, Deadline deadline) = 0;
  // For messages: "ssh root@10.0.0.1:22" or "local".
  virtual std::string Describe() const = 0;
  // Warnings to show in the report (e.g. host key checking is off).
  virtual std::vector<std::string> Warnings() const { return {}; }
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string name() const = 0;
  // Before any Connect, what the transport does for the whole run at once
  // (Slurm: the allocation, the agent's copy, one srun of every agent).
  // Not ok only when the run cannot start at all. Default: nothing.
  virtual Status Begin(const Inventory& inventory, const std::string& agent_binary) {
    (void)inventory;
    (void)agent_binary;
    return Status::Ok();
  }
  // What the run records about how its agents were launched (the run's
  // meta "launcher"); null when there is nothing to say.
  virtual nlohmann::json LauncherMeta() const { return nullptr; }
  // The Slurm job the agents run in, for stages that start steps of it
  // ([slurm] steps, slurm_steps.h); "" for transports without one.
  virtual std::string AllocationId() const { return ""; }
  // Connects (and authenticates) to the node. Errors: kUnreachable,
  // kAuthFailed, kHostKeyMismatch (naming the fingerprint), kTimeout.
  virtual Result<std::unique_ptr<Connection>> Connect(const Node& node, Deadline deadline) = 0;
  // Whether Connect may be called again for a node already connected, to
  // ask it afresh whether it is there (Fleet::Reconnect). Slurm's agents
  // are started once for the whole run by one srun: there is no second.
  virtual bool Reconnects() const { return true; }
};

// Runs a command to completion and returns its stdout; kTimeout kills it.
// Non-zero exits are returned as kIo with stderr's tail.
Result<std::string> RunToCompletion(Connection& c, const CommandLine& cmd, Deadline deadline);

}  // namespace cc
