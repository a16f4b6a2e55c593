#include "orchestrator/inventory/setting_override.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(SettingOverride, SetsAStageSettingOverTheInventorys) {
  Inventory inv;
  inv.stage_settings["health"] = {{"since", "boot"}};
  ASSERT_TRUE(ApplySettingOverride(inv, "health.since=24h").ok());
  EXPECT_EQ(inv.StageSettings("health")["since"], "24h");
  ASSERT_TRUE(ApplySettingOverride(inv, "ports.ports=[22,29500]").ok());
  EXPECT_EQ(inv.StageSettings("ports")["ports"], nlohmann::json({22, 29500}));
  ASSERT_TRUE(ApplySettingOverride(inv, "health.timeout_s=5").ok());
  EXPECT_TRUE(inv.StageSettings("health")["timeout_s"].is_number_float());
}

TEST(SettingOverride, WrongStageKeyOrValueIsAnErrorNamingIt) {
  Inventory inv;
  auto msg = [&](const std::string& t) { return ApplySettingOverride(inv, t).message(); };
  EXPECT_NE(msg("health.sinse=24h").find("has no setting 'sinse'"), std::string::npos);
  EXPECT_NE(msg("helth.since=24h").find("no stage 'helth'"), std::string::npos);
  EXPECT_NE(msg("ports.timeout_ms=0").find("--set ports.timeout_ms=0"), std::string::npos);
  EXPECT_NE(msg("since=24h").find("expected STAGE.KEY=VALUE"), std::string::npos);
}

}  // namespace
}  // namespace cc
