#include "agent/facts_nccl.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>

#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;

bool AnyContains(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v) {
    if (s.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(FactsNccl, VersionCodesDecodeOnBothSidesOf2_9) {
  EXPECT_EQ(NcclVersionString(22803), "2.28.3");
  EXPECT_EQ(NcclVersionString(21805), "2.18.5");
  EXPECT_EQ(NcclVersionString(20900), "2.9.0");
  EXPECT_EQ(NcclVersionString(2804), "2.8.4");
}

TEST(FactsNccl, CandidatesFollowInventoryThenLdLibraryPathThenStandardThenLoader) {
  auto c = NcclCandidates({"/opt/site/nccl/lib", "/x/libnccl.so.2.19.3"}, "/a:/b/:");
  ASSERT_GE(c.size(), 6u);
  EXPECT_EQ(c[0], "/opt/site/nccl/lib/libnccl.so.2");
  EXPECT_EQ(c[1], "/x/libnccl.so.2.19.3");
  EXPECT_EQ(c[2], "/a/libnccl.so.2");
  EXPECT_EQ(c[3], "/b/libnccl.so.2");
  EXPECT_EQ(c[4], "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  EXPECT_EQ(c.back(), "libnccl.so.2");
  // No duplicates when LD_LIBRARY_PATH repeats a standard folder.
  auto d = NcclCandidates({}, "/usr/local/cuda/lib64");
  EXPECT_EQ(std::count(d.begin(), d.end(), "/usr/local/cuda/lib64/libnccl.so.2"), 1);
}

TEST(FactsNccl, MissingLibraryIsAbsentListingEveryPathSearched) {
  json n = CollectNcclFacts({}, {"/nonexistent/a/libnccl.so.2", "/nonexistent/b/libnccl.so.2",
                                 "libclustercheck-no-such-nccl.so.2"});
  EXPECT_EQ(n["status"], "absent");
  ASSERT_EQ(n["searched"].size(), 3u);
  EXPECT_NE(n["searched"][0].get<std::string>().find("/nonexistent/a/libnccl.so.2"),
            std::string::npos);
  EXPECT_NE(n["searched"][2].get<std::string>().find("libclustercheck-no-such-nccl.so.2"),
            std::string::npos);
  EXPECT_FALSE(n.contains("version"));
}

TEST(FactsNccl, ALibraryWithoutNcclGetVersionIsAnErrorNamingIt) {
  json n = CollectNcclFacts({}, {"libm.so.6"});
  EXPECT_EQ(n["status"], "error");
  EXPECT_NE(n["reason"].get<std::string>().find("ncclGetVersion"), std::string::npos);
  EXPECT_NE(n["path"].get<std::string>().find("libm"), std::string::npos);
}

TEST(FactsNccl, BuildStringIsFoundOnlyForTheExactVersion) {
  std::string bytes = std::string("\0\0NCCL version 2.28.30+cuda13.0\0", 33) +
                      std::string("xxNCCL version 2.28.3+cuda12.9\0tail", 35);
  EXPECT_EQ(FindNcclBuildString(bytes, "2.28.3").value_or(""), "2.28.3+cuda12.9");
  EXPECT_FALSE(FindNcclBuildString("NCCL version %s", "2.28.3").has_value());
  EXPECT_FALSE(FindNcclBuildString("NCCL version 2.28.3\n", "2.28.3").has_value());
}

TEST(FactsNccl, ConfParsingSkipsCommentsAndTrims) {
  EnvMap m = ParseNcclConf("# c\nNCCL_IB_DISABLE=1\n  NCCL_DEBUG = INFO \nbroken line\n=x\n");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["NCCL_IB_DISABLE"], "1");
  EXPECT_EQ(m["NCCL_DEBUG"], "INFO");
}

TEST(FactsNccl, EnvTextKeepsOnlyNcclVariables) {
  std::string text = std::string("PATH=/bin\0NCCL_DEBUG=WARN\0NCCL_X=a=b\0", 38);
  EnvMap m = NcclVarsFromEnvText(text, '\0');
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["NCCL_X"], "a=b");
}

TEST(FactsNccl, IfListReadsExcludeExactPrefixAndPorts) {
  IfList l = ParseIfList("^=docker0,lo");
  EXPECT_TRUE(l.exclude);
  EXPECT_TRUE(l.exact);
  EXPECT_FALSE(IfListSelects(l, "docker0"));
  EXPECT_TRUE(IfListSelects(l, "docker01"));
  EXPECT_TRUE(IfListSelects(l, "eth0"));

  IfList p = ParseIfList("eth,ib");
  EXPECT_TRUE(IfListSelects(p, "eth0"));
  EXPECT_TRUE(IfListSelects(p, "ib1"));
  EXPECT_FALSE(IfListSelects(p, "enp1s0"));

  IfList h = ParseIfList("=mlx5_0:1,mlx5_1:1");
  EXPECT_TRUE(IfListSelects(h, "mlx5_0"));
  EXPECT_FALSE(IfListSelects(h, "mlx5_10"));
}

TEST(FactsNccl, WarnsForSettingsThatDisableFastPaths) {
  EnvMap eff = {{"NCCL_IB_DISABLE", "1"},
                {"NCCL_P2P_DISABLE", "1"},
                {"NCCL_SHM_DISABLE", "1"},
                {"NCCL_NET_GDR_LEVEL", "LOC"},
                {"NCCL_DEBUG", "INFO"}};
  EnvMap src = {{"NCCL_IB_DISABLE", "/etc/nccl.conf"}};
  auto w = NcclEnvWarnings(eff, src, {"eth0"}, {});
  EXPECT_EQ(w.size(), 4u);
  EXPECT_TRUE(AnyContains(w, "NCCL_IB_DISABLE=1 (from /etc/nccl.conf) disables InfiniBand"));
  EXPECT_TRUE(AnyContains(w, "NCCL_P2P_DISABLE=1"));
  EXPECT_TRUE(AnyContains(w, "NCCL_SHM_DISABLE=1"));
  EXPECT_TRUE(AnyContains(w, "NCCL_NET_GDR_LEVEL=LOC"));
}

TEST(FactsNccl, ZeroedSwitchesDoNotWarn) {
  EnvMap eff = {{"NCCL_IB_DISABLE", "0"}, {"NCCL_P2P_DISABLE", "0"}, {"NCCL_NET_GDR_LEVEL", "PHB"}};
  EXPECT_TRUE(NcclEnvWarnings(eff, {}, {"eth0"}, {}).empty());
}

TEST(FactsNccl, SocketIfnameNamingNoInterfaceWarnsAndListsTheNodes) {
  std::vector<std::string> have = {"eth0", "ib0", "lo"};
  auto w = NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "eth9"}}, {}, have, {});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("matches no interface"), std::string::npos);
  EXPECT_NE(w[0].find("eth0, ib0, lo"), std::string::npos);
  // A prefix that matches, an exact name that exists, a partly valid list.
  EXPECT_TRUE(NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "eth"}}, {}, have, {}).empty());
  EXPECT_TRUE(NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "=ib0"}}, {}, have, {}).empty());
  EXPECT_TRUE(NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "eth9,ib"}}, {}, have, {}).empty());
  // "=eth" wants an interface named exactly eth.
  EXPECT_EQ(NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "=eth"}}, {}, have, {}).size(), 1u);
  // Excluding a name the node lacks is harmless; excluding all but lo is not.
  EXPECT_TRUE(NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "^docker"}}, {}, have, {}).empty());
  EXPECT_EQ(NcclEnvWarnings({{"NCCL_SOCKET_IFNAME", "^eth,ib"}}, {}, have, {}).size(), 1u);
}

TEST(FactsNccl, IbHcaNamingNoDeviceWarns) {
  auto w = NcclEnvWarnings({{"NCCL_IB_HCA", "=mlx5_9:1"}}, {}, {}, {"mlx5_0", "mlx5_1"});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("matches no HCA"), std::string::npos);
  EXPECT_TRUE(NcclEnvWarnings({{"NCCL_IB_HCA", "mlx5"}}, {}, {}, {"mlx5_0"}).empty());
}

TEST(FactsNccl, FixtureConfIsReadAndEnvironmentWins) {
  NcclEnvOptions o;
  o.environ = {{"NCCL_SOCKET_IFNAME", "eth9"}, {"NCCL_DEBUG", "WARN"}};
  o.interfaces = {"eth0", "ib0", "lo", "docker0"};
  o.ib_devices = {"mlx5_0"};
  json e = CollectNcclEnv(Sysroot(kFixtures + "/sysroot-gpu-node"), o);
  EXPECT_EQ(e["conf"]["/etc/nccl.conf"]["NCCL_IB_DISABLE"], "1");
  EXPECT_EQ(e["conf"]["/etc/nccl.conf"]["NCCL_SOCKET_IFNAME"], "^docker0,lo");
  EXPECT_EQ(e["env"]["NCCL_DEBUG"], "WARN");
  EXPECT_EQ(e["effective"]["NCCL_IB_DISABLE"], "1");
  EXPECT_EQ(e["effective"]["NCCL_SOCKET_IFNAME"], "eth9");
  std::vector<std::string> w = e["warnings"];
  EXPECT_EQ(w.size(), 2u);
  EXPECT_TRUE(AnyContains(w, "NCCL_IB_DISABLE=1 (from /etc/nccl.conf)"));
  EXPECT_TRUE(AnyContains(w, "NCCL_SOCKET_IFNAME=eth9 (from agent environment)"));
}

TEST(FactsNccl, HomeConfIsOptionalAndNcclConfFileReplacesIt) {
  NcclEnvOptions o;
  o.home = "/root";  // no .nccl.conf there in the fixture: only the system one
  json e = CollectNcclEnv(Sysroot(kFixtures + "/sysroot-gpu-node"), o);
  EXPECT_FALSE(e["conf"].contains("~/.nccl.conf"));
  EXPECT_EQ(e["conf_searched"].size(), 2u);
  o.environ = {{"NCCL_CONF_FILE", "/etc/os-release"}};
  e = CollectNcclEnv(Sysroot(kFixtures + "/sysroot-gpu-node"), o);
  EXPECT_TRUE(e["conf"].contains("/etc/os-release"));
  EXPECT_EQ(e["conf_searched"][1], kFixtures + "/sysroot-gpu-node/etc/os-release");
}

TEST(FactsNccl, UserConfBeatsSystemConfAndEnvironmentBeatsBoth) {
  char tmpl[] = "/tmp/cc-nccl-conf-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string root = tmpl;
  ASSERT_EQ(system(("mkdir -p " + root + "/etc " + root + "/home/u").c_str()), 0);
  auto write = [](const std::string& path, const std::string& text) {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs(text.c_str(), f);
    fclose(f);
  };
  write(root + "/etc/nccl.conf", "NCCL_A=sys\nNCCL_B=sys\nNCCL_C=sys\n");
  write(root + "/home/u/.nccl.conf", "NCCL_B=user\nNCCL_C=user\n");
  NcclEnvOptions o;
  o.home = "/home/u";
  o.environ = {{"NCCL_C", "env"}};
  json e = CollectNcclEnv(Sysroot(root), o);
  EXPECT_EQ(e["effective"]["NCCL_A"], "sys");
  EXPECT_EQ(e["effective"]["NCCL_B"], "user");
  EXPECT_EQ(e["effective"]["NCCL_C"], "env");
  EXPECT_EQ(e["conf"]["~/.nccl.conf"]["NCCL_B"], "user");
  ASSERT_EQ(system(("rm -rf " + root).c_str()), 0);
}

TEST(FactsNccl, LoginEnvIsSkippedOnAFixtureRoot) {
  NcclEnvOptions o;
  o.login_env = true;
  json e = CollectNcclEnv(Sysroot(kFixtures + "/sysroot-minimal"), o);
  EXPECT_EQ(e["login_env"]["status"], "skip");
  EXPECT_TRUE(e["warnings"].empty());
  EXPECT_TRUE(e["conf"].empty());
}

TEST(FactsNccl, LoginEnvOnTheRealRootRunsBash) {
  NcclEnvOptions o;
  o.login_env = true;
  json e = CollectNcclEnv(Sysroot("/"), o);
  ASSERT_TRUE(e.contains("login_env"));
  EXPECT_TRUE(e["login_env"]["status"] == "ok" || e["login_env"]["status"] == "error");
  if (e["login_env"]["status"] == "ok") {
    EXPECT_EQ(e["env_source"], "login shell (bash -lc)");
  }
}

}  // namespace
}  // namespace cc::agent
