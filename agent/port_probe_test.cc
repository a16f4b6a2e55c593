#include "agent/port_probe.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "agent/port_listener.h"
#include "agent/port_testing.h"

namespace cc::agent {
namespace {

TEST(ParseLocalPortRange, ReadsTheKernelsTabSeparatedPair) {
  auto r = ParseLocalPortRange("32768\t60999\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->first, 32768);
  EXPECT_EQ(r->second, 60999);
}

TEST(ParseLocalPortRange, RejectsJunkReversedAndOutOfRangeText) {
  EXPECT_FALSE(ParseLocalPortRange("").ok());
  EXPECT_FALSE(ParseLocalPortRange("32768").ok());
  EXPECT_FALSE(ParseLocalPortRange("60999 32768").ok());
  EXPECT_FALSE(ParseLocalPortRange("0 100").ok());
  EXPECT_FALSE(ParseLocalPortRange("1024 70000").ok());
  EXPECT_FALSE(ParseLocalPortRange("1 2 3").ok());
  EXPECT_NE(ParseLocalPortRange("abc def").status().message().find("abc def"), std::string::npos);
}

TEST(SpreadPorts, TakesTheMiddleOfEqualSlotsAcrossTheWholeRange) {
  std::vector<int> p = SpreadPorts(32768, 60999, 8);
  ASSERT_EQ(p.size(), 8u);
  // 28232 ports in 8 slots of 3529: middles at 32768 + 1764 + k*3529.
  EXPECT_EQ(p.front(), 32768 + 28232 / 16);
  for (size_t i = 1; i < p.size(); ++i) {
    EXPECT_NEAR(p[i] - p[i - 1], 3529, 1) << i;
  }
  EXPECT_GT(p.back(), 60999 - 3529);
  EXPECT_LE(p.back(), 60999);
  EXPECT_EQ(SpreadPorts(32768, 60999, 8), p);  // deterministic
}

TEST(SpreadPorts, NeverGivesMorePortsThanTheRangeHolds) {
  EXPECT_EQ(SpreadPorts(100, 102, 8), (std::vector<int>{100, 101, 102}));
  EXPECT_TRUE(SpreadPorts(100, 200, 0).empty());
  EXPECT_EQ(SpreadPorts(5000, 5000, 3), (std::vector<int>{5000}));
}

TEST(SlotCandidates, StayInsideTheirSlotStartingAtItsMiddle) {
  std::vector<int> mids = SpreadPorts(1000, 1099, 4);  // slots of 25
  for (int i = 0; i < 4; ++i) {
    std::vector<int> c = SlotCandidates(1000, 1099, 4, i, 100);
    ASSERT_EQ(c.size(), 25u) << i;
    EXPECT_EQ(c.front(), mids[i]);
    std::set<int> uniq(c.begin(), c.end());
    EXPECT_EQ(uniq.size(), c.size());
    EXPECT_GE(*uniq.begin(), 1000 + 25 * i);
    EXPECT_LE(*uniq.rbegin(), 1000 + 25 * i + 24);
  }
  EXPECT_EQ(SlotCandidates(1000, 1099, 4, 0, 3).size(), 3u);
  EXPECT_TRUE(SlotCandidates(1000, 1099, 4, 4, 3).empty());
}

TEST(StateForConnectErrno, TellsRefusedFilteredUnreachableAndLocalPolicyApart) {
  EXPECT_EQ(StateForConnectErrno(ECONNREFUSED).state, ProbeState::kRefused);
  EXPECT_EQ(StateForConnectErrno(ETIMEDOUT).state, ProbeState::kFiltered);
  EXPECT_EQ(StateForConnectErrno(EHOSTUNREACH).state, ProbeState::kUnreachable);
  EXPECT_EQ(StateForConnectErrno(ENETUNREACH).state, ProbeState::kUnreachable);
  ErrnoState local = StateForConnectErrno(EPERM);
  EXPECT_EQ(local.state, ProbeState::kFiltered);
  EXPECT_NE(local.note.find("local policy"), std::string::npos);
  EXPECT_EQ(StateForConnectErrno(EADDRNOTAVAIL).state, ProbeState::kError);
}

using testing::FreePort;

// A loopback listener with `backlog` that never accepts: once its queue
// is full, further SYNs are dropped, as a DROP rule would.
int SilentListener(int backlog, int* port) {
  int fd = testing::LoopbackListener(0, backlog, port);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(ProbeAll, OpenWithTheTokenRefusedWithoutAListener) {
  PortListeners l;
  ASSERT_TRUE(l.SetAddress("127.0.0.1", nullptr).ok());
  int open_port = FreePort();
  ASSERT_EQ(l.Bind(open_port), 0);
  ASSERT_TRUE(l.Start("tok-a").ok());
  int closed_port = FreePort();
  std::vector<ProbeTarget> t = {{"a", "127.0.0.1", open_port, "tok-a"},
                                {"a", "127.0.0.1", closed_port, "tok-a"},
                                {"b", "127.0.0.1", open_port, "tok-b"},
                                {"a", "127.0.0.1", open_port, ""}};
  std::vector<ProbeResult> r = ProbeAll(t, {});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].state, ProbeState::kOpen) << r[0].note;
  EXPECT_EQ(r[1].state, ProbeState::kRefused);
  EXPECT_EQ(r[1].err, ECONNREFUSED);
  EXPECT_EQ(r[2].state, ProbeState::kOpenOther);  // another node's token
  EXPECT_EQ(r[2].reply, "tok-a");
  EXPECT_EQ(r[3].state, ProbeState::kOpenOther);  // plain connect
  // The prober may be done with a connection before the listener's thread
  // has counted its accept (seen once under load): give it a moment.
  for (int i = 0; i < 100 && l.accepted() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(l.accepted(), 3);
}

TEST(ProbeAll, AFullQueueThatDropsSynsIsFilteredAtTheDeadline) {
  int port = 0;
  int fd = SilentListener(0, &port);
  // The first connects fill the accept queue (connected, silent); the rest
  // get no SYN-ACK at all.
  std::vector<ProbeTarget> t(6, ProbeTarget{"x", "127.0.0.1", port, "tok"});
  ProbeOptions o;
  o.timeout_ms = 300;
  auto start = std::chrono::steady_clock::now();
  std::vector<ProbeResult> r = ProbeAll(t, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int filtered = 0, silent = 0;
  for (const auto& p : r) {
    filtered += p.state == ProbeState::kFiltered;
    silent += p.state == ProbeState::kOpenOther;
    EXPECT_GE(p.ms, 250) << ProbeStateName(p.state);
  }
  EXPECT_EQ(filtered + silent, 6);
  EXPECT_GE(filtered, 1);
  EXPECT_GE(silent, 1);
  EXPECT_LT(s, 2.0);  // all at once, not one after another
  close(fd);
}

TEST(ProbeAll, AWindowOfOneStillProbesEveryTarget) {
  PortListeners l;
  ASSERT_TRUE(l.SetAddress("127.0.0.1", nullptr).ok());
  int port = FreePort();
  ASSERT_EQ(l.Bind(port), 0);
  ASSERT_TRUE(l.Start("t").ok());
  std::vector<ProbeTarget> t(50, ProbeTarget{"n", "127.0.0.1", port, "t"});
  ProbeOptions o;
  o.parallel = 1;
  for (const auto& p : ProbeAll(t, o)) EXPECT_EQ(p.state, ProbeState::kOpen);
}

TEST(ProbeAll, AnUnresolvableNameIsUnreachableWithTheReason) {
  std::vector<ProbeTarget> t = {{"n", "no-such-host.invalid", 22, ""}};
  std::vector<ProbeResult> r = ProbeAll(t, {});
  EXPECT_EQ(r[0].state, ProbeState::kUnreachable);
  EXPECT_NE(r[0].note.find("cannot resolve"), std::string::npos);
}

TEST(PortListeners, APortHeldByAnotherListenerIsInUse) {
  int port = 0;
  int fd = SilentListener(16, &port);
  PortListeners l;
  ASSERT_TRUE(l.SetAddress("127.0.0.1", nullptr).ok());
  EXPECT_EQ(l.Bind(port), EADDRINUSE);
  close(fd);
}

TEST(PortListeners, AnAddressThisHostLacksFallsBackToAllAddresses) {
  PortListeners l;
  std::string note;
  // 192.0.2.0/24 is TEST-NET-1: never configured here.
  ASSERT_TRUE(l.SetAddress("192.0.2.7", &note).ok());
  EXPECT_EQ(l.address(), "0.0.0.0");
  EXPECT_NE(note.find("192.0.2.7"), std::string::npos);
  note.clear();
  ASSERT_TRUE(l.SetAddress("gpu001", &note).ok());
  EXPECT_EQ(l.address(), "0.0.0.0");
  EXPECT_NE(note.find("gpu001"), std::string::npos);
}

}  // namespace
}  // namespace cc::agent
