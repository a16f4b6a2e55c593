#include "common/join.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(Join, PutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({"a"}, ", "), "a");
  EXPECT_EQ(Join({}, ", "), "");
}

TEST(Join, KeepsEmptyItemsInTheirPlace) { EXPECT_EQ(Join({"", "b", ""}, ","), ",b,"); }

}  // namespace
}  // namespace cc
