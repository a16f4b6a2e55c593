#include "common/random_hex.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(RandomHex, GivesTwoLowercaseHexDigitsPerByte) {
  std::string s = RandomHex(16);
  ASSERT_EQ(s.size(), 32u);
  EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
}

TEST(RandomHex, TwoCallsDiffer) {
  // 2^-128 of failing by chance.
  EXPECT_NE(RandomHex(16), RandomHex(16));
}

TEST(RandomHex, ZeroBytesIsEmpty) { EXPECT_EQ(RandomHex(0), ""); }

}  // namespace
}  // namespace cc
