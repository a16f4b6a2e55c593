#include "agent/protocol.h"

#include <gtest/gtest.h>

namespace cc::protocol {
namespace {

TEST(Protocol, HelloWithOurVersionIsAccepted) {
  EXPECT_TRUE(CheckHello(MakeHello("0.1.0", "x86_64", 1, "n1")).ok());
}

TEST(Protocol, HelloWithAnotherVersionIsRejectedNamingBoth) {
  Status s = CheckHello(MakeHello("9.9.9", "x86_64", 1, "n1", kVersion + 1));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.kind(), ErrorKind::kProtocol);
  EXPECT_NE(s.message().find(std::to_string(kVersion + 1)), std::string::npos);
  EXPECT_NE(s.message().find(std::to_string(kVersion)), std::string::npos);
}

TEST(Protocol, GarbageLineIsAProtocolError) {
  auto r = ParseMessage("Welcome to Ubuntu 24.04");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kProtocol);
  EXPECT_FALSE(ParseMessage("{\"no_type\":1}").ok());
  EXPECT_TRUE(ParseMessage("{\"type\":\"end\",\"id\":1,\"ok\":true}").ok());
}

TEST(Protocol, RequestRoundTrips) {
  auto r = ParseRequest(MakeRequest(7, "facts", {{"x", 1}}).dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["id"], 7);
  EXPECT_EQ((*r)["v"], kVersion);
  EXPECT_EQ((*r)["args"]["x"], 1);
}

}  // namespace
}  // namespace cc::protocol
