#include "agent/kernel_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;
// dev/kmsg there is kernel-log/kmsg-xids; proc/stat says btime 1764700000.
const std::string kHealthRoot = kFixtures + "/sysroot-health/after";
constexpr long long kBootTime = 1764700000;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(kFixtures + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(KernelLog, KmsgRecordsGiveTheMessageAndItsTime) {
  auto r = ParseKmsgRecord("4,1320,1303456789,-;NVRM: Xid (PCI:0000:ba:00): 79, pid=1");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(*r->boot_s, 1303.456789);
  EXPECT_EQ(r->message, "NVRM: Xid (PCI:0000:ba:00): 79, pid=1");
  EXPECT_TRUE(ParseKmsgRecord("6,1,0,-,caller=T1;Command line: ro").has_value())
      << "fields after the flags (newer kernels) are ignored";
  EXPECT_FALSE(ParseKmsgRecord(" SUBSYSTEM=pci").has_value()) << "a continuation line";
  EXPECT_FALSE(ParseKmsgRecord("no record here").has_value());
  EXPECT_FALSE(ParseKmsgRecord("4,x,12;text").has_value());
  EXPECT_FALSE(ParseKmsgRecord("").has_value());
}

TEST(KernelLog, DmesgLinesGiveTheMessageAndItsTime) {
  auto r = ParseDmesgLine("[ 1303.456789] NVRM: Xid (PCI:0000:ba:00): 79, pid=1");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(*r->boot_s, 1303.456789);
  EXPECT_EQ(r->message, "NVRM: Xid (PCI:0000:ba:00): 79, pid=1");
  r = ParseDmesgLine("[    3.776998] [  T812] NVRM: Persistence mode is deprecated");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message, "NVRM: Persistence mode is deprecated") << "the caller id is dropped";
  r = ParseDmesgLine("NVRM: a line without a time");
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->boot_s.has_value());
  EXPECT_EQ(r->message, "NVRM: a line without a time");
  EXPECT_FALSE(ParseDmesgLine("  ").has_value());
}

TEST(KernelLog, XidAndSxidLinesAreRecognisedAndOthersAreNot) {
  auto x = ParseXidMessage({12.5,
                            "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3, "
                            "GPU has fallen off the bus."});
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->kind, "Xid");
  EXPECT_EQ(x->code, 79);
  EXPECT_EQ(x->device, "PCI:0000:18:00");
  EXPECT_DOUBLE_EQ(*x->boot_s, 12.5);
  EXPECT_EQ(x->text,
            "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3, GPU has fallen off the bus.");
  auto s = ParseXidMessage({std::nullopt,
                            "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, "
                            "Non-fatal, Link 32 egress non-posted PRIV error"});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kind, "SXid");
  EXPECT_EQ(s->code, 12028);
  EXPECT_EQ(s->device, "PCI:0000:05:00.0");
  EXPECT_FALSE(s->boot_s.has_value());
  auto old = ParseXidMessage({1.0, "NVRM: Xid (0000:18:00): 13, Graphics Exception"});
  ASSERT_TRUE(old.has_value()) << "drivers before 418 wrote no PCI: prefix";
  EXPECT_EQ(old->device, "0000:18:00");
  EXPECT_FALSE(ParseXidMessage({1.0, "systemd[1]: Started Xid (watch) monitor."}).has_value());
  EXPECT_FALSE(ParseXidMessage({1.0, "NVRM: GPU at PCI:0000:ba:00: GPU-7c1d"}).has_value());
  EXPECT_FALSE(ParseXidMessage({1.0, "NVRM: Xid (PCI:0000:18:00): pending"}).has_value());
}

TEST(KernelLog, TheKmsgFixtureYieldsEveryXidAndTheSxids) {
  json k = CollectKernelLog(Sysroot(kHealthRoot), std::nullopt);
  EXPECT_EQ(k["status"], "ok");
  EXPECT_EQ(k["source"], "/dev/kmsg");
  EXPECT_EQ(k["lines"], 33) << "records; the dictionary lines are not records";
  EXPECT_TRUE(k["since_s"].is_null());
  EXPECT_FALSE(k.contains("dropped"));
  std::set<int> xids;
  int sxids = 0;
  for (const json& e : k["events"]) {
    if (e["kind"] == "Xid") xids.insert(e["code"].get<int>());
    if (e["kind"] == "SXid") ++sxids;
  }
  std::set<int> want = {13, 31, 43, 45, 48, 61, 62,  63,  64,  68,
                        69, 74, 79, 92, 94, 95, 119, 120, 140, 154};
  EXPECT_EQ(xids, want);
  EXPECT_EQ(sxids, 2);
  EXPECT_EQ(k["events"].size(), 23u) << "21 Xid lines (13 twice) and 2 SXid lines";
  const json* fell_off = nullptr;
  for (const json& e : k["events"]) {
    if (e["code"] == 79) fell_off = &e;
  }
  ASSERT_NE(fell_off, nullptr);
  EXPECT_EQ((*fell_off)["device"], "PCI:0000:ba:00");
  EXPECT_DOUBLE_EQ((*fell_off)["boot_s"].get<double>(), 1303.456789);
  EXPECT_EQ((*fell_off)["text"],
            "NVRM: Xid (PCI:0000:ba:00): 79, pid=1234, name=python3, GPU has fallen off the bus.");
}

TEST(KernelLog, SinceLeavesOutOlderEventsUsingTheBootTime) {
  json k = CollectKernelLog(Sysroot(kHealthRoot), kBootTime + 1000.0);
  EXPECT_EQ(k["since_s"], kBootTime + 1000.0);
  EXPECT_EQ(k["lines"], 33) << "every record is still read";
  ASSERT_EQ(k["events"].size(), 13u) << "the Xids from 68 on and the two SXids";
  EXPECT_EQ(k["events"][0]["code"], 68);
  EXPECT_FALSE(k.contains("note"));
}

TEST(KernelLog, SinceWithoutABootTimeLeavesNothingOutAndSaysSo) {
  KernelLog log{"/dev/kmsg", {{5.0, "NVRM: Xid (PCI:0000:18:00): 79, x"}}};
  json k = KernelLogSection(log, 1e12, std::nullopt);
  EXPECT_EQ(k["events"].size(), 1u);
  EXPECT_NE(k["note"].get<std::string>().find("btime"), std::string::npos);
}

TEST(KernelLog, TheBootTimeComesFromProcStat) {
  EXPECT_EQ(ParseBootTime("cpu  1 2 3\nbtime 1764700000\nprocesses 5\n"), 1764700000);
  EXPECT_FALSE(ParseBootTime("cpu  1 2 3\n").has_value());
}

TEST(KernelLog, TheH200DmesgHasNoXidAndCountsItsLines) {
  KernelLog log{"dmesg", {}};
  std::istringstream in(ReadFixture("kernel-log/dmesg-h200.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (auto r = ParseDmesgLine(line)) log.records.push_back(*r);
  }
  json k = KernelLogSection(log, std::nullopt, kBootTime);
  EXPECT_EQ(k["status"], "ok");
  EXPECT_EQ(k["source"], "dmesg");
  EXPECT_EQ(k["lines"], 5);
  EXPECT_EQ(k["events"], json::array());
  ASSERT_EQ(log.records.size(), 5u);
  EXPECT_DOUBLE_EQ(*log.records[0].boot_s, 0.416188);
  EXPECT_EQ(log.records[0].message, "nvidia: loading out-of-tree module taints kernel.");
}

TEST(KernelLog, AtMost200EventsAreKeptAndTheRestCounted) {
  KernelLog log{"/dev/kmsg", {}};
  for (int i = 0; i < 250; ++i) {
    log.records.push_back({i * 1.0, "NVRM: Xid (PCI:0000:18:00): " + std::to_string(i) + ", x"});
  }
  json k = KernelLogSection(log, std::nullopt, std::nullopt);
  ASSERT_EQ(k["events"].size(), kMaxXidEvents);
  EXPECT_EQ(k["events"][0]["code"], 0) << "the first ones are kept: they name the cause";
  EXPECT_EQ(k["dropped"], 50);
}

TEST(KernelLog, ATestSysrootWithoutKmsgIsASkip) {
  json k = CollectKernelLog(Sysroot(kFixtures + "/sysroot-minimal"), std::nullopt);
  EXPECT_EQ(k["status"], "skip");
  EXPECT_EQ(k["reason"].get<std::string>().rfind("no kernel log: ", 0), 0u)
      << k["reason"].get<std::string>();
}

TEST(KernelLog, TheRealKernelLogIsReadToItsEndOrSkippedWithTheReason) {
  // /dev/kmsg never ends: this returns only because it is read non-blocking.
  json k = CollectKernelLog(Sysroot("/"), std::nullopt);
  if (k["status"] == "skip") {
    EXPECT_NE(k["reason"].get<std::string>().find("dmesg"), std::string::npos);
  } else {
    EXPECT_EQ(k["status"], "ok");
    EXPECT_TRUE(k["source"] == "/dev/kmsg" || k["source"] == "dmesg");
  }
}

}  // namespace
}  // namespace cc::agent
