#include "orchestrator/run/network_choice.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NetworkChoice DataNetwork() {
  NetworkChoice c;
  c.nccl_env = {{"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_IB_HCA", ""}, {"NCCL_IB_GID_INDEX", ""}};
  c.btl_tcp_if_include = "10.42.0.0/24";
  c.mpi_note = "oob is the mpi stage's";
  c.address_of = {{"node1", "10.42.0.1"}, {"node2", "10.42.0.2"}};
  return c;
}

TEST(NetworkChoice, ANodeWithoutAnAddressThereKeepsItsInventoryAddress) {
  NetworkChoice c = DataNetwork();
  EXPECT_EQ(c.AddressOr("node2", "node2.mgmt"), "10.42.0.2");
  EXPECT_EQ(c.AddressOr("node3", "node3.mgmt"), "node3.mgmt");
}

TEST(NetworkChoice, TheRunMetaKeepsTheShapeReportsAndClusterTestsRead) {
  // The keys and values Select("nccl_env"|"mpi_mca"|"addresses") stored
  // before the choice had a type.
  std::map<std::string, nlohmann::json> meta = NetworkChoiceMeta(DataNetwork());
  EXPECT_EQ(meta.size(), 3u);
  EXPECT_EQ(meta["selection.nccl_env"], nlohmann::json::parse(R"({"NCCL_IB_GID_INDEX": "",
      "NCCL_IB_HCA": "", "NCCL_SOCKET_IFNAME": "eth0"})"));
  EXPECT_EQ(meta["selection.mpi_mca"], nlohmann::json::parse(R"({
      "btl_tcp_if_include": "10.42.0.0/24", "note": "oob is the mpi stage's"})"));
  EXPECT_EQ(meta["selection.addresses"],
            nlohmann::json::parse(R"({"node1": "10.42.0.1", "node2": "10.42.0.2"})"));
}

}  // namespace
}  // namespace cc
