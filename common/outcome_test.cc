#include "common/outcome.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

constexpr Outcome kAll[] = {Outcome::kPass, Outcome::kWarn, Outcome::kFail,
                            Outcome::kHang, Outcome::kSkip, Outcome::kError};

TEST(Outcome, OnlyFailAndHangCountAsFailOrHang) {
  for (Outcome o : kAll) {
    EXPECT_EQ(IsFailOrHang(o), o == Outcome::kFail || o == Outcome::kHang) << OutcomeName(o);
  }
}

TEST(Outcome, FailOrHangIsWorseThanEveryOtherOutcome) {
  for (Outcome bad : kAll) {
    if (!IsFailOrHang(bad)) continue;
    for (Outcome other : kAll) {
      if (!IsFailOrHang(other)) {
        EXPECT_EQ(Worse(bad, other), bad) << OutcomeName(other);
      }
    }
  }
}

TEST(Outcome, EveryNameParsesBack) {
  for (Outcome o : kAll) EXPECT_EQ(ParseOutcome(OutcomeName(o)), o);
  EXPECT_FALSE(ParseOutcome("failed").has_value());
}

}  // namespace
}  // namespace cc
