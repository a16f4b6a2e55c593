// Mutated and hostile inventories: each must parse, or fail as
// kBadInventory with a "path:line:column: " message. No crash, no hang.
// Deterministic: a fixed seed, so a failure reproduces.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "build_paths.h"
#include "orchestrator/inventory/inventory.h"

namespace cc {
namespace {

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(CLUSTERCHECK_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// True when `line` matches ^[^:]+:[0-9]+:[0-9]+: (written out: std::regex
// is slow and trips GCC 12 warnings under sanitizers).
bool IsLocated(const std::string& line) {
  size_t colon = line.find(':');
  if (colon == 0 || colon == std::string::npos) return false;
  size_t pos = colon + 1;
  for (int field = 0; field < 2; ++field) {
    size_t start = pos;
    while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9') ++pos;
    if (pos == start || pos >= line.size() || line[pos] != ':') return false;
    ++pos;
  }
  return pos < line.size() && line[pos] == ' ';
}

// Checks the outcome of one input; returns false (and says why) when the
// parser broke its contract.
::testing::AssertionResult ParsesOrFailsLocated(const std::string& text) {
  Result<Inventory> r = ParseInventory(text, "fuzz.toml");
  if (r.ok()) return ::testing::AssertionSuccess();
  const std::string& msg = r.status().message();
  if (r.status().kind() != ErrorKind::kBadInventory) {
    return ::testing::AssertionFailure() << "wrong kind: " << r.status().ToString();
  }
  // Every reported error is one located line; the last line may count
  // the errors that were left out.
  std::istringstream lines(msg);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > 0 && line[0] == '(' && line.find("more errors") != std::string::npos) {
      continue;
    }
    if (!IsLocated(line)) {
      return ::testing::AssertionFailure() << "unlocated message line: " << line.substr(0, 200);
    }
  }
  return ::testing::AssertionSuccess();
}

const char* const kSmallSeeds[] = {
    "[[nodes]]\nname = \"n1\"\n",
    "name = \"p\"\ntransport = \"local\"\n[[nodes]]\nname = \"localhost\"\n"
    "root = \"/tmp/x\"\n[stages]\nrun = [\"facts\", \"parity\"]\n",
    "[ssh]\nport = 22\nfanout = 4\n[defaults]\ngpus = 8\nenv = { A = \"1\" }\n"
    "[[groups]]\nname = \"g\"\nnodes = [\"gpu[001-016]\", \"r[1-2]n[1-2]\"]\n"
    "[[nodes]]\nname = \"gpu003\"\naddress = \"10.0.0.3\"\n",
    "[[nodes]]\nname = \"a,b[1-3]\"\n[expect]\ndriver = 550\nnccl = "
    "\">=2.18\"\n"
    "[stages.ports]\nports = [22, \"29500-29510\"]\n[stages.nccl]\nsizes = "
    "\"8-256M\"\nenv = { NCCL_DEBUG = \"INFO\" }\n",
};

// Tokens that steer mutations into interesting places of the grammar.
const char* const kTokens[] = {
    "[[groups]]\n",
    "[[nodes]]\n",
    "[stages.nccl]\n",
    "[ssh]\n",
    "[expect]\n",
    "name = ",
    "nodes = [",
    "\"n[0-99999999]\"",
    "\"n[5-3]\"",
    "99999999999999999999",
    "-9223372036854775808",
    "inf",
    "nan",
    "1e999",
    "= [",
    "]",
    "{",
    "}",
    "\"",
    "'''",
    "\"\"\"",
    "\\u0000",
    "\\",
    ".",
    "=",
    "\n",
    "#",
    "port = ",
    "address = ",
    "true",
    "1979-05-27T07:32:00Z",
    "[stages]\nrun = [",
    "\"facts\"",
    "gpu[001-016]",
    ",",
    "[",
    "a.b.c = 1\n",
};

std::string Mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](size_t n) {
    return n == 0 ? size_t{0}
                  : static_cast<size_t>(std::uniform_int_distribution<size_t>(0, n - 1)(rng));
  };
  int rounds = 1 + static_cast<int>(pick(4));
  for (int r = 0; r < rounds; ++r) {
    size_t at = pick(s.size() + 1);
    switch (pick(7)) {
      case 0:  // truncate
        s.resize(at);
        break;
      case 1:  // flip bytes, binary and NUL included
        for (size_t i = 0, n = 1 + pick(8); i < n && !s.empty(); ++i) {
          s[pick(s.size())] = static_cast<char>(pick(256));
        }
        break;
      case 2:  // insert random bytes
        for (size_t i = 0, n = 1 + pick(8); i < n; ++i) {
          s.insert(s.begin() + static_cast<long>(std::min(at, s.size())),
                   static_cast<char>(pick(256)));
        }
        break;
      case 3:  // delete a span
        s.erase(std::min(at, s.size()), pick(64));
        break;
      case 4:  // insert a grammar token
        s.insert(std::min(at, s.size()), kTokens[pick(sizeof kTokens / sizeof kTokens[0])]);
        break;
      case 5: {  // duplicate a span elsewhere
        size_t from = pick(s.size() + 1), len = pick(200);
        std::string span = s.substr(std::min(from, s.size()), len);
        s.insert(std::min(at, s.size()), span);
        break;
      }
      default: {  // replace a digit run with a huge number
        size_t d = s.find_first_of("0123456789", at);
        if (d != std::string::npos) s.insert(d, "99999999999999999999");
        break;
      }
    }
  }
  return s;
}

TEST(InventoryFuzz, LocationCheckerAcceptsOnlyLocatedLines) {
  EXPECT_TRUE(IsLocated("pod.toml:12:9: ssh.port: bad"));
  EXPECT_FALSE(IsLocated("pod.toml: cannot read"));
  EXPECT_FALSE(IsLocated(":1:1: x"));
  EXPECT_FALSE(IsLocated("pod.toml:1:x: x"));
  EXPECT_FALSE(IsLocated("pod.toml:1:2:x"));
  EXPECT_FALSE(IsLocated("pod.toml:1:"));
}

TEST(InventoryFuzz, MutatedInventoriesParseOrFailWithALocation) {
  std::vector<std::string> seeds = {ReadSource("inventories/example.toml"),
                                    ReadSource("inventories/local.toml")};
  ASSERT_GT(seeds[0].size(), 1000u) << "example.toml not found";
  for (const char* s : kSmallSeeds) seeds.push_back(s);
  std::mt19937_64 rng(20240601);
  int parsed = 0, refused = 0;
  constexpr int kCases = 3000;
  for (int i = 0; i < kCases; ++i) {
    const std::string& seed = seeds[static_cast<size_t>(i) % seeds.size()];
    std::string text = Mutate(seed, rng);
    ASSERT_TRUE(ParsesOrFailsLocated(text)) << "case " << i;
    ParseInventory(text, "fuzz.toml").ok() ? ++parsed : ++refused;
  }
  // Both sides must be exercised, or the mutations are too weak/strong.
  EXPECT_GT(parsed, kCases / 20);
  EXPECT_GT(refused, kCases / 4);
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(InventoryFuzz, DeepNestingIsRefusedWithoutStackOverflow) {
  constexpr size_t kDepth = 10000;
  const std::string node = "[[nodes]]\nname = \"n1\"\n";
  std::vector<std::string> inputs = {
      "a = " + Repeat("[", kDepth) + Repeat("]", kDepth) + "\n" + node,
      "a = " + Repeat("{b = ", kDepth) + "1" + Repeat("}", kDepth) + "\n" + node,
      "a = " + Repeat("[", kDepth) + "\n",  // and never closed
      Repeat("a.", kDepth) + "a = 1\n" + node,
      "[" + Repeat("a.", kDepth) + "a]\nb = 1\n" + node,
      node + "[stages.nccl.env" + Repeat(".a", kDepth) + "]\nb = \"1\"\n",
      node + "[stages.nccl]\nsizes = " + Repeat("[", 200) + Repeat("]", 200),
      node + "[expect]\n" + Repeat("a.", kDepth) + "b = \"1\"\n",
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(ParsesOrFailsLocated(inputs[i])) << "input " << i;
    EXPECT_FALSE(ParseInventory(inputs[i], "fuzz.toml").ok()) << "input " << i;
  }
}

TEST(InventoryFuzz, HugeValuesAreRefusedQuickly) {
  const std::string node = "[[nodes]]\nname = \"n1\"\n";
  const std::string mb(1 << 20, 'x');
  std::vector<std::string> bad = {
      "[ssh]\nport = 99999999999999999999\n" + node,
      node + "[ssh]\nport = -99999999999999999999\n",
      node + "[ssh]\nfanout = 9223372036854775807\n",
      "[[nodes]]\nname = \"n[0-99999999]\"\n",
      "[[groups]]\nname = \"g\"\nnodes = [\"r[0-9999]n[0-9999]\"]\n",
      "[[nodes]]\nname = \"" + mb + "\"\n",  // 1 MB host name
      "[[nodes]]\nname = \"" + Repeat("[1]", 300000) + "\"\n",
      node + "[ssh]\nuser = 7\n" + mb.substr(0, 10) + " = \"" + mb + "\"\n",
      node + mb + " = 1\n",  // 1 MB key
      node + "[stages.ports]\nports = [\"" + mb + "\"]\n",
      node + "[ssh]\nconnect_timeout_s = 1e999\n",
      node + "[ssh]\n\"a\\u0001\\nb\" = 1\n",  // control bytes in a key
      std::string(17 << 20, '#'),              // over the size cap
  };
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_TRUE(ParsesOrFailsLocated(bad[i])) << "input " << i;
    Result<Inventory> r = ParseInventory(bad[i], "fuzz.toml");
    EXPECT_FALSE(r.ok()) << "input " << i;
    // A huge input must not make a huge message.
    if (!r.ok()) {
      EXPECT_LT(r.status().message().size(), 4096u) << "input " << i;
    }
  }
  // 1 MB values that are fine are kept as they are.
  Result<Inventory> ok = ParseInventory(node + "[expect]\nnote = \"" + mb + "\"\n", "fuzz.toml");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->expect["note"].size(), mb.size());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(InventoryFuzz, ManyErrorsAreCappedAndManyNodesAreFast) {
  std::string many_errors = "[[nodes]]\nname = \"n1\"\n[ssh]\n";
  for (int i = 0; i < 20000; ++i) many_errors += "k" + std::to_string(i) + " = 1\n";
  Result<Inventory> r = ParseInventory(many_errors, "fuzz.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(ParsesOrFailsLocated(many_errors));
  EXPECT_NE(r.status().message().find("(19980 more errors)"), std::string::npos);

  std::string many_nodes;
  for (int i = 0; i < 5000; ++i) {
    many_nodes += "[[nodes]]\nname = \"n" + std::to_string(i) + "\"\n";
  }
  many_nodes += "[[groups]]\nname = \"g\"\nnodes = [\"m[1-50000]\"]\n";
  auto start = std::chrono::steady_clock::now();
  Result<Inventory> big = ParseInventory(many_nodes, "fuzz.toml");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->nodes.size(), 55000u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace cc
