#include "reports/junit.h"

#include <gtest/gtest.h>

#include "reports/escape.h"

namespace cc {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

RunData Sample() {
  RunData d;
  d.run.id = 5;
  d.run.inventory_name = "pod<&>";
  NodeResult n;
  n.node = "gpu01";
  n.stage = "parity";
  n.check = "driver";
  n.outcome = Outcome::kFail;
  n.message = "has \"535\" & <not> 550\x01";
  d.node_results.push_back(n);
  n.node = "gpu02";
  n.outcome = Outcome::kPass;
  d.node_results.push_back(n);
  n.node = "gpu03";
  n.outcome = Outcome::kSkip;
  d.node_results.push_back(n);
  PairResult p;
  p.stage = "nccl";
  p.check = "allreduce";
  p.src = "gpu01";
  p.dst = "gpu02";
  p.outcome = Outcome::kHang;
  p.message = "no progress";
  d.pair_results.push_back(p);
  p.dst = "gpu03";
  p.outcome = Outcome::kPass;
  d.pair_results.push_back(p);
  p.dst = "gpu04";
  p.outcome = Outcome::kError;
  d.pair_results.push_back(p);
  return d;
}

TEST(Junit, OneSuitePerStageAndATestcasePerNodeCheckAndPerPairThatDidNotPass) {
  std::string x = RenderJunit(Sample());
  EXPECT_EQ(Count(x, "<testsuite "), 2);
  EXPECT_EQ(Count(x, "<testcase "), 5);  // 3 node checks + 2 pairs not passing
  EXPECT_EQ(Count(x, "<failure "), 2);
  EXPECT_EQ(Count(x, "type=\"hang\""), 1);
  EXPECT_EQ(Count(x, "<error "), 1);
  EXPECT_EQ(Count(x, "<skipped "), 1);
  EXPECT_NE(x.find("<testsuites name=\"clustercheck run 5 of pod&lt;&amp;&gt;\" tests=\"5\" "
                   "failures=\"2\" errors=\"1\" skipped=\"1\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"passing_pairs\" value=\"1\""), std::string::npos);
}

TEST(Junit, MessagesAreEscapedForAttributesAndText) {
  std::string x = RenderJunit(Sample());
  EXPECT_NE(x.find("message=\"has &quot;535&quot; &amp; &lt;not&gt; 550\xEF\xBF\xBD\""),
            std::string::npos)
      << x;
  EXPECT_EQ(x.find('\x01'), std::string::npos);
}

TEST(Escape, ReplacesControlCharactersAndBrokenUtf8ButKeepsGoodUtf8) {
  EXPECT_EQ(EscapeXml("a<b>&'\""), "a&lt;b&gt;&amp;&#39;&quot;");
  EXPECT_EQ(EscapeXml("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(EscapeXml("\x1b[31m"), "\xEF\xBF\xBD[31m");
  EXPECT_EQ(EscapeXml("caf\xC3\xA9 \xE2\x86\x92"), "caf\xC3\xA9 \xE2\x86\x92");
  EXPECT_EQ(EscapeXml("bad\xC3("), "bad\xEF\xBF\xBD(");
  EXPECT_EQ(EscapeXml("\xFF"), "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace cc
