#include "orchestrator/stages/ports/probe_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace cc {
namespace {

// The plan as the ports stage built it before ProbePlan: every probe held.
std::vector<PlannedProbe> Reference(const std::vector<std::string>& senders,
                                    const std::vector<ReceiverInfo>& receivers,
                                    const std::vector<int>& listed) {
  std::vector<PlannedProbe> out;
  for (const std::string& src : senders) {
    for (const ReceiverInfo& r : receivers) {
      if (r.node == src) continue;
      if (r.ssh_port) out.push_back({src, r.node, r.addr, *r.ssh_port, PortKind::kSsh, true, ""});
      for (int port : listed) {
        if (r.ssh_port && port == *r.ssh_port) continue;
        auto err = r.bind_errors.find(port);
        if (err != r.bind_errors.end()) {
          out.push_back({src, r.node, r.addr, port, PortKind::kListed, true, err->second});
        } else if (r.bound.count(port)) {
          out.push_back({src, r.node, r.addr, port, PortKind::kListed, false, ""});
        }
      }
      for (int port : r.ephemeral) {
        out.push_back({src, r.node, r.addr, port, PortKind::kEphemeral, false, ""});
      }
    }
  }
  return out;
}

bool Same(const PlannedProbe& a, const PlannedProbe& b) {
  return a.src == b.src && a.dst == b.dst && a.addr == b.addr && a.port == b.port &&
         a.kind == b.kind && a.plain == b.plain && a.bind_error == b.bind_error;
}

// Receivers of every shape: with and without ssh, bind errors, ephemeral
// samples of different lengths, none at all (a receiver with no slots).
std::vector<ReceiverInfo> RandomReceivers(std::mt19937& rng, size_t n) {
  std::vector<ReceiverInfo> out;
  for (size_t i = 1; i <= n; ++i) {
    ReceiverInfo r;
    r.node = "n" + std::to_string(i);
    r.addr = "10.0.0." + std::to_string(i);
    if (rng() % 3 != 0) r.ssh_port = rng() % 2 ? 22 : 29500;
    if (rng() % 2) r.bound.insert(29500);
    if (rng() % 2) r.bound.insert(8080);
    if (rng() % 4 == 0) r.bind_errors[8080] = "EADDRINUSE: held";
    for (size_t k = rng() % 4; k > 0; --k) r.ephemeral.push_back(40000 + static_cast<int>(k));
    out.push_back(r);
  }
  return out;
}

TEST(ProbePlan, HoldsExactlyThePlanThatEveryProbeHeldWould) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    size_t n = 1 + rng() % 9;
    std::vector<ReceiverInfo> receivers = RandomReceivers(rng, n);
    std::vector<std::string> senders;
    for (const ReceiverInfo& r : receivers) {
      if (rng() % 5 != 0) senders.push_back(r.node);
    }
    if (rng() % 3 == 0) senders.push_back("elsewhere");  // a sender that receives nothing
    std::vector<int> listed = {22, 8080, 29500};
    std::vector<PlannedProbe> want = Reference(senders, receivers, listed);
    ProbePlan plan(senders, receivers, listed);
    ASSERT_EQ(plan.size(), want.size()) << "trial " << trial;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(Same(plan.At(i), want[i])) << "trial " << trial << ", index " << i;
      ASSERT_EQ(plan.SrcOf(i), want[i].src);
      ASSERT_EQ(plan.DstOf(i), want[i].dst);
    }
    // Range gives each ordered pair's block, and nothing for a node with itself.
    for (const std::string& s : senders) {
      for (const ReceiverInfo& r : receivers) {
        auto [lo, hi] = plan.Range(s, r.node);
        size_t count = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          if (want[i].src != s || want[i].dst != r.node) continue;
          EXPECT_TRUE(i >= lo && i < hi) << "trial " << trial << " " << s << "->" << r.node;
          ++count;
        }
        EXPECT_EQ(hi - lo, count) << "trial " << trial << " " << s << "->" << r.node;
      }
    }
  }
}

TEST(ProbePlan, UnknownNodesAndEmptyPlansHaveNoProbes) {
  ProbePlan empty;
  EXPECT_EQ(empty.size(), 0u);
  ReceiverInfo r;
  r.node = "n1";
  r.bound = {29500};
  ProbePlan alone({"n1"}, {r}, {29500});
  EXPECT_EQ(alone.size(), 0u);  // a node never probes itself
  EXPECT_EQ(alone.Range("n1", "n1"), (std::pair<size_t, size_t>{0, 0}));
  EXPECT_EQ(alone.Range("n9", "n1"), (std::pair<size_t, size_t>{0, 0}));
  ProbePlan two({"n2"}, {r}, {29500});
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two.Range("n2", "n1"), (std::pair<size_t, size_t>{0, 1}));
  EXPECT_EQ(two.At(0).port, 29500);
}

}  // namespace
}  // namespace cc
