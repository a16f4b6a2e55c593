#include "orchestrator/stages/health/health_settings.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(HealthSettings, SinceAcceptsBootATimeOrADuration) {
  EXPECT_FALSE(ParseSince("", 1000000).value().has_value());
  EXPECT_FALSE(ParseSince("boot", 1000000).value().has_value());
  EXPECT_DOUBLE_EQ(ParseSince("24h", 1000000).value().value(), 1000000 - 86400);
  EXPECT_DOUBLE_EQ(ParseSince("90m", 1000000).value().value(), 1000000 - 5400);
  EXPECT_DOUBLE_EQ(ParseSince("2026-12-01T00:00:00Z", 0).value().value(), 1796083200);
}

TEST(HealthSettings, BadSinceNamesTheKey) {
  auto r = ParseSince("yesterday", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stages.health.since"), std::string::npos);
}

TEST(HealthSettings, LimitsAndIbRateComeFromTheInventory) {
  Inventory inv;
  inv.stage_settings["health"] = {{"link_downed", 2}, {"timeout_s", 5}};
  inv.expect["ib_rate"] = "400";
  auto s = ReadHealthSettings(inv, 0);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->limits["link_downed"].limit, 2);
  EXPECT_DOUBLE_EQ(s->timeout_s, 5);
  EXPECT_DOUBLE_EQ(s->expected_ib_rate_gbps.value(), 400);
  inv.expect["ib_rate"] = "fast";
  EXPECT_FALSE(ReadHealthSettings(inv, 0).ok());
}

}  // namespace
}  // namespace cc
