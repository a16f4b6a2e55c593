#include "common/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Expand(const std::string& s) {
  Result<std::vector<std::string>> r = ExpandHostlist(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : std::vector<std::string>{};
}

std::string ExpandError(const std::string& s) {
  Result<std::vector<std::string>> r = ExpandHostlist(s);
  EXPECT_FALSE(r.ok()) << s << " expanded unexpectedly";
  if (r.ok()) return "";
  EXPECT_EQ(r.status().kind(), ErrorKind::kBadArgument);
  return r.status().message();
}

TEST(ExpandHostlist, PlainNameIsItself) {
  EXPECT_THAT(Expand("localhost"), ElementsAre("localhost"));
}

TEST(ExpandHostlist, RangeKeepsZeroPadding) {
  std::vector<std::string> v = Expand("gpu[001-016]");
  ASSERT_EQ(v.size(), 16u);
  EXPECT_EQ(v.front(), "gpu001");
  EXPECT_EQ(v[9], "gpu010");
  EXPECT_EQ(v.back(), "gpu016");
}

TEST(ExpandHostlist, NaturalNumbersAreNotPadded) {
  EXPECT_THAT(Expand("n[8-11]"), ElementsAre("n8", "n9", "n10", "n11"));
  EXPECT_THAT(Expand("n[0-1]"), ElementsAre("n0", "n1"));
}

TEST(ExpandHostlist, CommaListInsideBrackets) {
  EXPECT_THAT(Expand("n[1-3,7]"), ElementsAre("n1", "n2", "n3", "n7"));
}

TEST(ExpandHostlist, PaddingIsPerRange) {
  EXPECT_THAT(Expand("n[09-10,7]"), ElementsAre("n09", "n10", "n7"));
}

TEST(ExpandHostlist, SeveralBracketsMakeACartesianProduct) {
  EXPECT_THAT(Expand("r[1-2]n[01-02]"), ElementsAre("r1n01", "r1n02", "r2n01", "r2n02"));
}

TEST(ExpandHostlist, SuffixAfterBracketIsKept) {
  EXPECT_THAT(Expand("n[1-2].ib"), ElementsAre("n1.ib", "n2.ib"));
}

TEST(ExpandHostlist, TopLevelCommasSeparateItems) {
  EXPECT_THAT(Expand("a1,b[1-2],c"), ElementsAre("a1", "b1", "b2", "c"));
}

TEST(ExpandHostlist, SpacesAroundItemsAreForgiven) {
  EXPECT_THAT(Expand(" n1 , n2"), ElementsAre("n1", "n2"));
}

TEST(ExpandHostlist, SingleNumberBracket) { EXPECT_THAT(Expand("n[5]"), ElementsAre("n5")); }

TEST(ExpandHostlist, ExactlyTheMaximumIsAllowed) {
  std::vector<std::string> v = Expand("n[1-100000]");
  EXPECT_EQ(v.size(), kMaxHostlistSize);
}

TEST(ExpandHostlist, ReversedRangeNamesRangeAndPosition) {
  EXPECT_EQ(ExpandError("gpu[5-3]"), "range 5-3 is reversed at position 5");
}

TEST(ExpandHostlist, UnclosedBracketPointsAtTheBracket) {
  EXPECT_EQ(ExpandError("gpu[1-3"), "unclosed '[' at position 4");
  EXPECT_EQ(ExpandError("a,gpu[1-3"), "unclosed '[' at position 6");
}

TEST(ExpandHostlist, StrayClosingBracketIsUnbalanced) {
  EXPECT_EQ(ExpandError("gpu1]"), "unbalanced ']' at position 5");
}

TEST(ExpandHostlist, EmptyBracketIsAnEmptyRange) {
  EXPECT_EQ(ExpandError("n[]"), "empty range '[]' at position 3");
  EXPECT_EQ(ExpandError("n[1,]"), "empty range at position 5");
}

TEST(ExpandHostlist, NonDigitsInBracketAreRefused) {
  EXPECT_EQ(ExpandError("n[a-b]"), "expected a digit, got 'a' at position 3");
  EXPECT_EQ(ExpandError("n[1-x]"), "expected a digit, got 'x' at position 5");
  EXPECT_EQ(ExpandError("n[1-2-3]"), "expected ',' or ']' in range, got '-' at position 6");
  EXPECT_EQ(ExpandError("n[-3]"), "expected a digit, got '-' at position 3");
}

TEST(ExpandHostlist, NestedBracketIsRefused) {
  EXPECT_THAT(ExpandError("n[1[2]]"), HasSubstr("got '['"));
}

TEST(ExpandHostlist, EmptyItemsAreRefused) {
  EXPECT_EQ(ExpandError(""), "empty hostlist at position 1");
  EXPECT_EQ(ExpandError("a,,b"), "empty name at position 3");
  EXPECT_EQ(ExpandError("a,"), "empty name at position 3");
}

TEST(ExpandHostlist, OddCharactersAreNamed) {
  EXPECT_EQ(ExpandError("gpu 1"), "unexpected ' ' in host name at position 4");
  EXPECT_EQ(ExpandError(std::string("a\0b", 3)), "unexpected byte 0x00 in host name at position 2");
  EXPECT_EQ(ExpandError("a;rm"), "unexpected ';' in host name at position 2");
}

TEST(ExpandHostlist, HugeRangeIsRefusedBeforeExpanding) {
  EXPECT_THAT(ExpandError("n[0-99999999]"), HasSubstr("more than 100000 hosts at position 1"));
  // The product of several brackets counts, too.
  EXPECT_THAT(ExpandError("r[1-1000]n[1-1000]"), HasSubstr("more than"));
  // And so does the sum over items.
  EXPECT_THAT(ExpandError("a[1-60000],b[1-60000]"),
              HasSubstr("more than 100000 hosts at position 12"));
}

TEST(ExpandHostlist, HugeNumbersDoNotOverflow) {
  EXPECT_EQ(ExpandError("n[1-99999999999999999999999]"),
            "number 99999999999999999999999 is too large at position 5");
  EXPECT_THAT(ExpandError("n[0-999999999999999999]"), HasSubstr("more than"));
  EXPECT_THAT(ExpandError("n[18446744073709551615-18446744073709551616]"), HasSubstr("too large"));
}

TEST(ExpandHostlist, OverlongNamesAreRefused) {
  EXPECT_THAT(ExpandError(std::string(300, 'a')), HasSubstr("longer than 255"));
  std::string many;
  for (int i = 0; i < 10000; ++i) many += "[1]";
  EXPECT_THAT(ExpandError(many), HasSubstr("longer than 255"));
}

TEST(FoldHostlist, ConsecutiveNumbersBecomeARange) {
  EXPECT_EQ(FoldHostlist({"gpu001", "gpu002", "gpu004"}), "gpu[001-002,004]");
}

TEST(FoldHostlist, SingleNameStaysBare) {
  EXPECT_EQ(FoldHostlist({"gpu001"}), "gpu001");
  EXPECT_EQ(FoldHostlist({"localhost"}), "localhost");
  EXPECT_EQ(FoldHostlist({}), "");
}

TEST(FoldHostlist, NumbersAreSortedAndDeduplicated) {
  EXPECT_EQ(FoldHostlist({"n3", "n1", "n2", "n2", "n7"}), "n[1-3,7]");
}

TEST(FoldHostlist, MixedPaddingsAreKeptApart) {
  EXPECT_EQ(FoldHostlist({"n1", "n01", "n2", "n02"}), "n[1-2],n[01-02]");
  EXPECT_EQ(FoldHostlist({"n1", "n01"}), "n1,n01");
}

TEST(FoldHostlist, UnpaddedNumberOfTheSameWidthJoinsPaddedGroup) {
  EXPECT_EQ(FoldHostlist({"gpu099", "gpu100", "gpu101"}), "gpu[099-101]");
}

TEST(FoldHostlist, GroupsFollowFirstAppearance) {
  EXPECT_EQ(FoldHostlist({"b2", "a1", "b1", "head", "a2"}), "b[1-2],a[1-2],head");
}

TEST(FoldHostlist, FoldsOnTheLastNumber) {
  EXPECT_EQ(FoldHostlist({"r1n01", "r1n02", "r2n01"}), "r1n[01-02],r2n01");
  EXPECT_EQ(FoldHostlist({"n1.ib", "n2.ib"}), "n[1-2].ib");
}

TEST(FoldHostlist, RoundTripsThroughExpand) {
  std::vector<std::string> names = Expand("gpu[001-016],n[1-3,7,10-12],head");
  std::string folded = FoldHostlist(names);
  EXPECT_EQ(folded, "gpu[001-016],n[1-3,7,10-12],head");
  EXPECT_EQ(Expand(folded), names);
}

}  // namespace
}  // namespace cc
