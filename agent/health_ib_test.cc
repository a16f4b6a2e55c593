#include "agent/health_ib.h"

#include <gtest/gtest.h>

#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;

const json& Port(const json& section, const std::string& device) {
  for (const json& p : section["ports"]) {
    if (p["device"] == device) return p;
  }
  static const json kNone;
  ADD_FAILURE() << "no port of " << device;
  return kNone;
}

TEST(HealthIb, PortsGiveTheirLinkCountersAndUverbs) {
  json s = CollectIbHealth(Sysroot(kFixtures + "/sysroot-health/before"));
  EXPECT_EQ(s["status"], "ok");
  ASSERT_EQ(s["ports"].size(), 2u);
  const json& ib = Port(s, "mlx5_0");
  EXPECT_EQ(ib["port"], 1);
  EXPECT_EQ(ib["state"], "ACTIVE");
  EXPECT_EQ(ib["phys_state"], "LinkUp");
  EXPECT_EQ(ib["rate"], "400 Gb/sec (4X NDR)");
  EXPECT_EQ(ib["rate_gbps"], 400);
  EXPECT_EQ(ib["link_layer"], "InfiniBand");
  json zero = {{"symbol_error", 0},
               {"link_downed", 0},
               {"link_error_recovery", 0},
               {"port_rcv_errors", 0},
               {"local_link_integrity_errors", 0},
               {"excessive_buffer_overrun_errors", 0},
               {"port_xmit_discards", 0}};
  EXPECT_EQ(ib["counters"], zero) << "port_xmit_data is traffic, not an error: left out";
  EXPECT_EQ(ib["uverbs"], "uverbs0");
  EXPECT_EQ(ib["uverbs_present"], true);
}

TEST(HealthIb, ADownRocePortLacksItsDeviceFileAndAMissingCounter) {
  json roce = Port(CollectIbHealth(Sysroot(kFixtures + "/sysroot-health/before")), "mlx5_1");
  EXPECT_EQ(roce["state"], "DOWN");
  EXPECT_EQ(roce["phys_state"], "Disabled");
  EXPECT_EQ(roce["link_layer"], "Ethernet");
  EXPECT_EQ(roce["uverbs"], "uverbs1");
  EXPECT_EQ(roce["uverbs_present"], false) << "no /dev/infiniband/uverbs1 under the sysroot";
  EXPECT_FALSE(roce["counters"].contains("port_xmit_discards"));
  EXPECT_EQ(roce["counters"].size(), 6u);
}

TEST(HealthIb, TheSecondSnapshotShowsTheCountersThatGrew) {
  json before = Port(CollectIbHealth(Sysroot(kFixtures + "/sysroot-health/before")), "mlx5_0");
  json after = Port(CollectIbHealth(Sysroot(kFixtures + "/sysroot-health/after")), "mlx5_0");
  EXPECT_EQ(before["counters"]["link_downed"], 0);
  EXPECT_EQ(after["counters"]["link_downed"], 3);
  EXPECT_EQ(before["counters"]["symbol_error"], 0);
  EXPECT_EQ(after["counters"]["symbol_error"], 12);
  EXPECT_EQ(after["counters"]["port_rcv_errors"], 0);
}

TEST(HealthIb, PortsWithoutUverbsInSysfsHaveNullUverbs) {
  // sysroot-rdma's devices have no device/infiniband_verbs folder.
  json s = CollectIbHealth(Sysroot(kFixtures + "/sysroot-rdma"));
  EXPECT_EQ(s["status"], "ok");
  ASSERT_FALSE(s["ports"].empty());
  EXPECT_TRUE(s["ports"][0]["uverbs"].is_null());
  EXPECT_TRUE(s["ports"][0]["uverbs_present"].is_null());
  EXPECT_EQ(s["ports"][0]["counters"], json::object());
}

TEST(HealthIb, NoInfinibandClassIsAbsent) {
  json s = CollectIbHealth(Sysroot(kFixtures + "/sysroot-minimal"));
  EXPECT_EQ(s["status"], "absent");
  EXPECT_NE(s["reason"].get<std::string>().find("/sys/class/infiniband"), std::string::npos);
  EXPECT_EQ(s["ports"], json::array());
}

}  // namespace
}  // namespace cc::agent
