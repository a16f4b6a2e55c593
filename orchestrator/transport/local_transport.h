// LocalTransport: runs commands on this host with fork/exec and three pipes.
// Used for single-node runs and for simulated nodes sharing one machine
// (each its own agent with its own NCCL_HOSTID); the node's address is
// ignored.
//
// Every child gets its own process group, so Kill() also stops what it
// started; it inherits no descriptor but its three pipes, so one agent never
// holds another agent's pipe open (which would hide that one's EOF).
//
// Threading: as transport.h says; LocalTransport itself is stateless and
// may be shared by all threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "orchestrator/transport/transport.h"

namespace cc {

class LocalConnection : public Connection {
 public:
  // Errors: kNotFound when argv[0] cannot be found, kIo when it cannot be
  // executed or pipes cannot be made, kBadArgument for an empty argv.
  // Arguments that start with "~/" are expanded to $HOME, as a remote shell
  // would do for the same command over ssh.
  Result<std::unique_ptr<RemoteProcess>> Start(const CommandLine& cmd, Deadline deadline) override;
  Status Upload(const std::string& content, const std::string& remote_path, int mode,
                Deadline deadline) override;
  Result<long long> FileSize(const std::string& remote_path, Deadline deadline) override;
  std::string Describe() const override { return "local"; }
};

class LocalTransport : public Transport {
 public:
  std::string name() const override { return "local"; }
  // Never fails: this host is always reachable.
  Result<std::unique_ptr<Connection>> Connect(const Node& node, Deadline deadline) override;
};

// "~/x" -> "$HOME/x"; anything else unchanged.
std::string ExpandHome(const std::string& path);

}  // namespace cc
