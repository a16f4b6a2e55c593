#include "orchestrator/transport/ssh_identity_check.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(SshIdentityCheck, NothingToOfferIsOneLineWithCauseAndFix) {
  IdentitySources s;
  s.ssh_dir = "/home/op/.ssh";
  std::string m = NoIdentityProblem(s);
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_EQ(m.rfind("no ssh identity: no ssh-agent (SSH_AUTH_SOCK is unset), "
                    "no key in /home/op/.ssh",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("fix: ssh-keygen -t ed25519"), std::string::npos) << m;
  EXPECT_NE(m.find("ssh-add"), std::string::npos) << m;
}

TEST(SshIdentityCheck, AnyOneSourceIsEnough) {
  IdentitySources agent;
  agent.agent_socket = true;
  IdentitySources key;
  key.default_keys = {"/home/op/.ssh/id_rsa"};
  IdentitySources inventory;
  inventory.inventory_identity = true;
  IdentitySources config;
  config.config_identity_file = true;
  for (const auto& s : {agent, key, inventory, config}) EXPECT_EQ(NoIdentityProblem(s), "");
}

}  // namespace
}  // namespace cc
