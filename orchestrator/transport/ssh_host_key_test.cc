#include "orchestrator/transport/ssh_host_key.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using Action = HostKeyVerdict::Action;

HostKeyFacts Facts() {
  HostKeyFacts f;
  f.node = "gpu003";
  f.host = "[10.42.0.3]:2222";
  f.key_type = "ssh-ed25519";
  f.fingerprint = "SHA256:abc";
  f.known_hosts = "/home/op/.ssh/known_hosts";
  return f;
}

TEST(SshHostKey, PolicyNamesParseAndOthersAreBadInventory) {
  EXPECT_EQ(*ParseHostKeyPolicy("strict"), HostKeyPolicy::kStrict);
  EXPECT_EQ(*ParseHostKeyPolicy("accept-new"), HostKeyPolicy::kAcceptNew);
  EXPECT_EQ(*ParseHostKeyPolicy("off"), HostKeyPolicy::kOff);
  auto bad = ParseHostKeyPolicy("no");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().Is(ErrorKind::kBadInventory));
  EXPECT_NE(bad.status().message().find("\"no\""), std::string::npos);
}

TEST(SshHostKey, StrictAcceptsOnlyAKnownKey) {
  EXPECT_EQ(JudgeHostKey(HostKeyPolicy::kStrict, KnownHostState::kOk, Facts()).action,
            Action::kAccept);
  for (KnownHostState s : {KnownHostState::kUnknown, KnownHostState::kFileMissing,
                           KnownHostState::kChanged, KnownHostState::kOtherType}) {
    HostKeyVerdict v = JudgeHostKey(HostKeyPolicy::kStrict, s, Facts());
    EXPECT_EQ(v.action, Action::kReject);
    EXPECT_TRUE(v.error.Is(ErrorKind::kHostKeyMismatch));
    EXPECT_NE(v.error.message().find("SHA256:abc"), std::string::npos) << v.error.message();
    EXPECT_NE(v.error.message().find("[10.42.0.3]:2222"), std::string::npos);
  }
}

TEST(SshHostKey, UnknownKeyMessageNamesTheFileAndTheWayOut) {
  HostKeyVerdict v = JudgeHostKey(HostKeyPolicy::kStrict, KnownHostState::kUnknown, Facts());
  EXPECT_NE(v.error.message().find("is not in /home/op/.ssh/known_hosts"), std::string::npos);
  EXPECT_NE(v.error.message().find("accept-new"), std::string::npos);
  EXPECT_NE(
      v.error.message().find("run: ssh-keyscan -H -p 2222 10.42.0.3 >> /home/op/.ssh/known_hosts "),
      std::string::npos)
      << v.error.message();
  HostKeyFacts port22 = Facts();
  port22.host = "gpu001";
  v = JudgeHostKey(HostKeyPolicy::kStrict, KnownHostState::kFileMissing, port22);
  EXPECT_NE(v.error.message().find("run: ssh-keyscan -H gpu001 >> /home/op/.ssh/known_hosts "),
            std::string::npos)
      << v.error.message();
}

TEST(SshHostKey, ChangedKeyMessageWarnsOfMitmAndHowToRemoveTheOldKey) {
  HostKeyVerdict v = JudgeHostKey(HostKeyPolicy::kAcceptNew, KnownHostState::kChanged, Facts());
  ASSERT_EQ(v.action, Action::kReject);
  const std::string& m = v.error.message();
  EXPECT_NE(m.find("changed"), std::string::npos) << m;
  EXPECT_NE(m.find("MITM"), std::string::npos) << m;
  EXPECT_NE(m.find("ssh-keygen -R '[10.42.0.3]:2222'"), std::string::npos) << m;
}

TEST(SshHostKey, AcceptNewLearnsUnknownKeysButRejectsChangedOnes) {
  EXPECT_EQ(JudgeHostKey(HostKeyPolicy::kAcceptNew, KnownHostState::kUnknown, Facts()).action,
            Action::kLearn);
  EXPECT_EQ(JudgeHostKey(HostKeyPolicy::kAcceptNew, KnownHostState::kFileMissing, Facts()).action,
            Action::kLearn);
  EXPECT_EQ(JudgeHostKey(HostKeyPolicy::kAcceptNew, KnownHostState::kOk, Facts()).action,
            Action::kAccept);
  EXPECT_EQ(JudgeHostKey(HostKeyPolicy::kAcceptNew, KnownHostState::kOtherType, Facts()).action,
            Action::kReject);
}

TEST(SshHostKey, OffAcceptsEverythingWithAWarningNamingTheNode) {
  for (KnownHostState s : {KnownHostState::kOk, KnownHostState::kUnknown, KnownHostState::kChanged,
                           KnownHostState::kError}) {
    HostKeyVerdict v = JudgeHostKey(HostKeyPolicy::kOff, s, Facts());
    EXPECT_EQ(v.action, Action::kAccept);
    EXPECT_EQ(v.warning.rfind("host key checking is off for gpu003", 0), 0u) << v.warning;
  }
}

TEST(SshHostKey, UnreadableKnownHostsIsAnIoErrorUnlessCheckingIsOff) {
  HostKeyFacts f = Facts();
  f.detail = "permission denied";
  HostKeyVerdict v = JudgeHostKey(HostKeyPolicy::kStrict, KnownHostState::kError, f);
  EXPECT_EQ(v.action, Action::kReject);
  EXPECT_TRUE(v.error.Is(ErrorKind::kIo));
  EXPECT_NE(v.error.message().find("permission denied"), std::string::npos);
}

TEST(SshHostKey, KnownHostsNameBracketsNonDefaultPorts) {
  EXPECT_EQ(KnownHostsName("10.0.0.1", 22), "10.0.0.1");
  EXPECT_EQ(KnownHostsName("10.0.0.1", 2222), "[10.0.0.1]:2222");
}

}  // namespace
}  // namespace cc
