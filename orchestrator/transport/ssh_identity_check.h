// Before any node is contacted: can ssh authenticate at all? With no
// identity in the inventory, no ssh-agent and no key in ~/.ssh, every node
// would fail with the same "publickey refused"; a newcomer should get one
// line with the cause and the fix instead. Pure; run_command gathers the
// sources.
#pragma once

#include <string>
#include <vector>

namespace cc {

struct IdentitySources {
  bool inventory_identity = false;        // some node has ssh.identity set
  bool agent_socket = false;              // SSH_AUTH_SOCK names an existing socket
  std::vector<std::string> default_keys;  // ~/.ssh/id_* private keys present
  bool config_identity_file = false;      // the ssh config has an IdentityFile line
  std::string ssh_dir;                    // "~/.ssh" as this user sees it, for the message
};

// "" when ssh has something to offer; otherwise the one-line cause and fix.
std::string NoIdentityProblem(const IdentitySources& sources);

// The private keys OpenSSH (and libssh) try by default, in ~/.ssh.
const std::vector<std::string>& DefaultIdentityNames();

}  // namespace cc
