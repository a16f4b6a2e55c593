#include "orchestrator/transport/ssh_identity_check.h"

namespace cc {

const std::vector<std::string>& DefaultIdentityNames() {
  static const std::vector<std::string> kNames = {"id_ed25519",    "id_ecdsa",    "id_rsa",
                                                  "id_ed25519_sk", "id_ecdsa_sk", "id_dsa"};
  return kNames;
}

std::string NoIdentityProblem(const IdentitySources& s) {
  if (s.inventory_identity || s.agent_socket || !s.default_keys.empty() || s.config_identity_file) {
    return "";
  }
  return "no ssh identity: no ssh-agent (SSH_AUTH_SOCK is unset), no key in " + s.ssh_dir +
         " (id_ed25519, id_ecdsa, id_rsa) and no identity in the inventory's "
         "[ssh]; fix: "
         "ssh-keygen -t ed25519 and ssh-copy-id to the nodes, or start an "
         "agent "
         "(eval \"$(ssh-agent)\"; ssh-add KEY), or set identity = \"KEY\" in "
         "[ssh]";
}

}  // namespace cc
