#include "common/interned.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

namespace cc {
namespace {

TEST(Interned, EqualStringsShareOneCopy) {
  std::string a = "10.42.0.0/24";
  Interned x(a), y(std::string("10.42.0.0/24"));
  EXPECT_EQ(&x.str(), &y.str());
  EXPECT_TRUE(x == y);
  EXPECT_FALSE(x == Interned("10.42.1.0/24"));
  EXPECT_EQ(sizeof(Interned), sizeof(void*));
}

TEST(Interned, ReadsAsTheStringItHolds) {
  Interned s = "node3";
  EXPECT_TRUE(s == "node3");
  EXPECT_TRUE(s == std::string("node3"));
  EXPECT_FALSE(s == "node30");
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ("to " + s + "!", "to node3!");
  const std::string& ref = s;
  EXPECT_EQ(ref, "node3");
  EXPECT_TRUE(Interned().empty());
  EXPECT_TRUE(Interned() == Interned(""));
}

TEST(Interned, OrdersAsStringsNotPointers) {
  std::map<Interned, int> m;
  m[Interned("node2")] = 2;
  m[Interned("node10")] = 10;
  m[Interned("node1")] = 1;
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"node1", "node10", "node2"}));
}

TEST(Interned, JsonRoundTrip) {
  nlohmann::json j = {{"nic", Interned("eth1")}};
  EXPECT_EQ(j.dump(), R"({"nic":"eth1"})");
  EXPECT_TRUE(j["nic"].get<Interned>() == "eth1");
}

TEST(Interned, ThreadsInterningTheSameValuesAgree) {
  std::vector<const std::string*> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) Interned("v" + std::to_string(i));
      seen[t] = &Interned("v500").str();
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string* p : seen) EXPECT_EQ(p, seen[0]);
}

}  // namespace
}  // namespace cc
