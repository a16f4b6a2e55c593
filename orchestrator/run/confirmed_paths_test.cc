#include "orchestrator/run/confirmed_paths.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(ConfirmedPaths, AFailureConfirmedEarlierConfirmsTheSamePathInTheSameState) {
  ConfirmedPaths p;
  p.Add("node2", "10.42.0.5", "filtered", "nics");
  EXPECT_EQ(p.Why("node2", "10.42.0.5", "filtered"),
            "the nics stage's quiet retest of node2 -> 10.42.0.5 was filtered too");
  EXPECT_EQ(p.Why("node5", "10.42.0.2", "filtered"), "") << "the other direction is another path";
  EXPECT_EQ(p.Why("node2", "10.42.0.5", "refused"), "") << "another state is another fault";
}

}  // namespace
}  // namespace cc
