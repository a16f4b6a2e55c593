// SshTransport: Transport over SSH with libssh (0.10).
//
// Connect() reads ~/.ssh/config (or node.ssh.config_file) first and then
// applies what the inventory set: user when non-empty, port when not the
// default 22 (so an inventory that says nothing lets the config decide; one
// that says 22 explicitly cannot be told apart), identity, known_hosts.
// Authentication is public-key only (the given identity, or ssh-agent and
// the default/configured keys); password and keyboard-interactive are off,
// and encrypted keys are skipped, so nothing ever prompts.
//
// Host keys follow node.ssh.host_key_policy (ssh_host_key.h). Keepalive:
// libssh 0.10 has no ServerAliveInterval, so the socket gets TCP keepalive
// probes every keepalive_s; every call also has a deadline, which is what
// bounds a silent peer.
//
// Errors: kUnreachable (TCP refused, no route, connect_timeout_s passed,
// handshake failed), kAuthFailed (naming the methods tried and the
// user@host), kHostKeyMismatch (naming the SHA256 fingerprint), kTimeout (the
// caller's deadline passed), kBadInventory (bad policy or config file).
//
// Deadlines: each blocking libssh call gets the time left as its timeout,
// and a watchdog (ssh_session.h) cuts the socket shortly after the deadline
// should libssh still hang. Not covered: name resolution (getaddrinfo) of a
// host name during Connect.
//
// With [ssh] dial_back, Begin() opens the listener the agents dial back to
// (ssh_dial_back.h), and a connection's Start of the agent (a CommandLine
// with `agent` set) has it dial there; every other command runs as always.
// Once its agent dialled, a connection closes its ssh session and connects
// again (host key and authentication as the first time) only for what
// comes after: one libssh session per node is not held for the whole run.
//
// Threading: see transport.h; Connections are independent libssh sessions.
#pragma once

#include <memory>
#include <string>

#include "orchestrator/transport/ssh_dial_back.h"
#include "orchestrator/transport/transport.h"

namespace cc {

class SshTransport : public Transport {
 public:
  std::string name() const override { return "ssh"; }
  Status Begin(const Inventory& inventory, const std::string& agent_binary) override;
  nlohmann::json LauncherMeta() const override;
  Result<std::unique_ptr<Connection>> Connect(const Node& node, Deadline deadline) override;

 private:
  std::unique_ptr<SshDialBack> dial_back_;  // null without [ssh] dial_back
  bool dial_back_auto_ = false;             // on by the node count (Inventory)
};

}  // namespace cc
