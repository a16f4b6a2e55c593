#include "common/human_number.h"

#include <gtest/gtest.h>

#include <limits>

namespace cc {
namespace {

TEST(HumanNumber, WholeNumbersPrintWithoutDecimals) {
  EXPECT_EQ(FormatNumber(120), "120");
  EXPECT_EQ(FormatSeconds(120), "120 s");
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(-0.0001), "0");
}

TEST(HumanNumber, FractionsKeepOnlyTheDecimalsThatSaySomething) {
  EXPECT_EQ(FormatNumber(1.5), "1.5");
  EXPECT_EQ(FormatNumber(0.333), "0.33");
  EXPECT_EQ(FormatNumber(2.999, 2), "3");
  EXPECT_EQ(FormatNumber(1426.14, 1), "1426.1");
  EXPECT_EQ(FormatSeconds(0.25), "0.25 s");
}

TEST(HumanNumber, NonFiniteValuesAreNamed) {
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatNumber(-std::numeric_limits<double>::infinity()), "-inf");
}

}  // namespace
}  // namespace cc
