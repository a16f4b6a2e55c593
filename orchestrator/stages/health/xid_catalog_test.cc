#include "orchestrator/stages/health/xid_catalog.h"

#include <gtest/gtest.h>

#include <map>

namespace cc {
namespace {

// Every code the issue lists, with the action an operator takes for it.
TEST(XidCatalog, EachListedCodeMapsToItsAction) {
  const std::map<int, HealthAction> want = {
      {13, HealthAction::kInvestigate}, {31, HealthAction::kInvestigate},
      {43, HealthAction::kInvestigate}, {45, HealthAction::kOk},
      {48, HealthAction::kResetGpu},    {61, HealthAction::kResetGpu},
      {62, HealthAction::kResetGpu},    {63, HealthAction::kResetGpu},
      {64, HealthAction::kDrain},       {68, HealthAction::kInvestigate},
      {69, HealthAction::kInvestigate}, {74, HealthAction::kResetGpu},
      {79, HealthAction::kReboot},      {92, HealthAction::kInvestigate},
      {94, HealthAction::kResetGpu},    {95, HealthAction::kResetGpu},
      {119, HealthAction::kResetGpu},   {120, HealthAction::kResetGpu},
      {140, HealthAction::kResetGpu},   {154, HealthAction::kInvestigate},
  };
  for (const auto& [code, action] : want) {
    XidInfo info = LookupXid(code, "NVRM: Xid (PCI:0000:18:00): " + std::to_string(code) + ", ...");
    EXPECT_TRUE(info.known) << code;
    EXPECT_EQ(HealthActionName(info.action), std::string(HealthActionName(action))) << code;
    EXPECT_FALSE(info.meaning.empty()) << code;
  }
  EXPECT_EQ(KnownXidCodes().size(), want.size());
}

TEST(XidCatalog, UnknownCodeIsInvestigate) {
  XidInfo info = LookupXid(999, "NVRM: Xid (PCI:0000:18:00): 999, something new");
  EXPECT_FALSE(info.known);
  EXPECT_EQ(info.action, HealthAction::kInvestigate);
  EXPECT_NE(info.meaning.find("999"), std::string::npos);
}

TEST(XidCatalog, Xid154TakesTheDriversRecoveryAction) {
  auto action = [](const std::string& to) {
    return LookupXid(154,
                     "NVRM: Xid (PCI:0000:18:00): 154, GPU recovery action changed from 0x0 "
                     "(None) to " +
                         to)
        .action;
  };
  EXPECT_EQ(action("0x1 (GPU Reset Required)"), HealthAction::kResetGpu);
  EXPECT_EQ(action("0x2 (Node Reboot Required)"), HealthAction::kReboot);
  EXPECT_EQ(action("0x3 (Drain P2P)"), HealthAction::kDrain);
  EXPECT_EQ(action("0x4 (Drain and Reset)"), HealthAction::kDrain);
  EXPECT_EQ(action("0x0 (None)"), HealthAction::kOk);
}

TEST(XidCatalog, SxidFatalNeedsARebootNonFatalIsInvestigated) {
  EXPECT_EQ(LookupSxid(12028,
                       "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link "
                       "32 egress non-posted PRIV error")
                .action,
            HealthAction::kInvestigate);
  EXPECT_EQ(LookupSxid(24007,
                       "nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 24007, Fatal, Link 44 "
                       "sourcetrack TCEN0 crumbstore ECC DBE Error")
                .action,
            HealthAction::kReboot);
}

}  // namespace
}  // namespace cc
