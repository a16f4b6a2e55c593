#include "orchestrator/transport/ssh_process.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(SshProcessSignals, SignalNamesBecomeShellStyleExitCodes) {
  EXPECT_EQ(ExitCodeForSignal("KILL"), 137);
  EXPECT_EQ(ExitCodeForSignal("TERM"), 143);
  EXPECT_EQ(ExitCodeForSignal("SEGV"), 139);
  EXPECT_EQ(ExitCodeForSignal("NOPE"), 128);
}

}  // namespace
}  // namespace cc
