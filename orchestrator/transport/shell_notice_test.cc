#include "orchestrator/transport/shell_notice.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(ShellNotice, QuotesTheTextAndNamesTheFix) {
  NodeResult r = ShellNotice("node3", "Welcome to Example HPC\nYou have mail.\n", 0.25);
  EXPECT_EQ(r.node, "node3");
  EXPECT_EQ(r.stage, "connect");
  EXPECT_EQ(r.check, "shell");
  EXPECT_EQ(r.outcome, Outcome::kWarn);
  EXPECT_NE(r.message.find("\"Welcome to Example HPC | You have mail.\""), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("guard output in ~/.bashrc with [[ $- == *i* ]]"), std::string::npos)
      << r.message;
  EXPECT_EQ(r.evidence["text"], "Welcome to Example HPC\nYou have mail.\n");
  EXPECT_DOUBLE_EQ(r.evidence["shell_startup_s"].get<double>(), 0.25);
  // The verdict's next step is the fix, in words that do not name the node.
  std::string next = r.evidence["next_step"];
  EXPECT_EQ(next.rfind("keep non-interactive shells quiet: guard output in ~/.bashrc", 0), 0u)
      << next;
  EXPECT_EQ(next.find("node3"), std::string::npos);
}

TEST(ShellNotice, ALongBannerIsShortenedInTheMessageNotLost) {
  std::string text(5000, 'x');
  NodeResult r = ShellNotice("n", text, 0);
  EXPECT_LT(r.message.size(), 600u);
  EXPECT_EQ(r.evidence["text"].get<std::string>().size(), 2000u);
}

}  // namespace
}  // namespace cc
