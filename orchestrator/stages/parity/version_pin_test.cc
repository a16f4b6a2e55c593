#include "orchestrator/stages/parity/version_pin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cc {
namespace {

using ::testing::HasSubstr;

VersionPin Pin(const std::string& text) {
  Result<VersionPin> p = ParseVersionPin(text);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status().ToString();
  return p.ok() ? *p : VersionPin{};
}

std::string PinError(const std::string& text) {
  Result<VersionPin> p = ParseVersionPin(text);
  EXPECT_FALSE(p.ok()) << text << " parsed unexpectedly";
  if (p.ok()) return "";
  EXPECT_EQ(p.status().kind(), ErrorKind::kBadInventory);
  return p.status().message();
}

TEST(CompareVersions, ComponentsCompareAsNumbers) {
  EXPECT_LT(CompareVersions("2.9", "2.18"), 0);
  EXPECT_GT(CompareVersions("2.18", "2.9"), 0);
  EXPECT_LT(CompareVersions("535.104.05", "550.54.15"), 0);
  EXPECT_GT(CompareVersions("535.104.05", "535.86.10"), 0);
  EXPECT_EQ(CompareVersions("535.104.05", "535.104.5"), 0);
}

// The forms the issue names: a string compare gets each of these wrong.
TEST(CompareVersions, TheDriverNcclAndCudaFormsOperatorsMeet) {
  EXPECT_LT(CompareVersions("550.54.15", "550.127.05"), 0);  // "54" < "127"
  EXPECT_GT(CompareVersions("550.127.05", "550.54.15"), 0);
  EXPECT_GT(CompareVersions("2.21.5", "2.9.6"), 0);
  EXPECT_LT(CompareVersions("2.21.5", "2.21.10"), 0);
  EXPECT_EQ(CompareVersions("2.21.5", "2.21.5"), 0);
  EXPECT_LT(CompareVersions("12.4", "12.10"), 0);  // CUDA 12.10 is newer
  EXPECT_GT(CompareVersions("13.0", "12.10"), 0);
  EXPECT_TRUE(Matches(Pin(">=550.127"), "550.127.05"));
  EXPECT_FALSE(Matches(Pin(">=550.127"), "550.54.15"));
  EXPECT_TRUE(Matches(Pin(">=2.18,<3"), "2.21.5"));
  EXPECT_FALSE(Matches(Pin("12.1"), "12.10"));  // exact "12.1" is not 12.10
  EXPECT_TRUE(Matches(Pin("<12.10"), "12.4"));
}

TEST(CompareVersions, MissingTrailingPartsCountAsZero) {
  EXPECT_LT(CompareVersions("12.4", "12.4.1"), 0);
  EXPECT_EQ(CompareVersions("12.4", "12.4.0"), 0);
  EXPECT_GT(CompareVersions("12.4.1", "12.4"), 0);
}

TEST(CompareVersions, BuildMetadataAfterPlusDoesNotOrder) {
  EXPECT_EQ(CompareVersions("2.28.9+cuda13.0", "2.28.9"), 0);
  EXPECT_EQ(CompareVersions("2.28.9+cuda13.0", "2.28.9+cuda12.2"), 0);
  EXPECT_GT(CompareVersions("2.28.9+cuda12.2", "2.28.3+cuda13.0"), 0);
}

TEST(CompareVersions, PreReleasesSortBeforeTheRelease) {
  EXPECT_LT(CompareVersions("2.18rc1", "2.18"), 0);
  EXPECT_LT(CompareVersions("2.18rc1", "2.18.0"), 0);
  EXPECT_GT(CompareVersions("2.18.1", "2.18rc1"), 0);
}

TEST(CompareVersions, KernelReleasesOrderByEveryNumber) {
  EXPECT_GT(CompareVersions("5.15.0-105-generic", "5.15.0-91-generic"), 0);
  EXPECT_LT(CompareVersions("5.15.0-91-generic", "6.8.0-31-generic"), 0);
}

TEST(CompareVersions, HugeNumbersDoNotOverflow) {
  EXPECT_LT(CompareVersions("1.99999999999999999999", "1.100000000000000000000"), 0);
}

TEST(CompareVersions, LeadingVIsDropped) { EXPECT_EQ(CompareVersions("v2.18.3", "2.18.3"), 0); }

TEST(IsVersionLike, NeedsALeadingDigit) {
  EXPECT_TRUE(IsVersionLike("550.54.15"));
  EXPECT_TRUE(IsVersionLike("v4.1.5"));
  EXPECT_FALSE(IsVersionLike("Ubuntu 22.04"));
  EXPECT_FALSE(IsVersionLike(""));
  EXPECT_FALSE(IsVersionLike("v"));
}

TEST(VersionPin, ExactVersionMatchesOnlyThatVersion) {
  VersionPin p = Pin("550.54.15");
  EXPECT_TRUE(Matches(p, "550.54.15"));
  EXPECT_FALSE(Matches(p, "550.54.14"));
  EXPECT_FALSE(Matches(p, "535.104.05"));
  EXPECT_FALSE(Matches(p, "550.54.150"));
  EXPECT_FALSE(Matches(p, ""));
}

TEST(VersionPin, ShorterExactVersionMatchesEveryRelease) {
  VersionPin p = Pin("2.18");
  EXPECT_TRUE(Matches(p, "2.18.3"));
  EXPECT_TRUE(Matches(p, "2.18"));
  EXPECT_FALSE(Matches(p, "2.180"));
  EXPECT_FALSE(Matches(p, "2.19.1"));
  EXPECT_TRUE(Matches(Pin("5.15.0"), "5.15.0-105-generic"));
}

TEST(VersionPin, ExactPinWithMetadataNeedsTheSameMetadata) {
  VersionPin p = Pin("2.28.9+cuda13.0");
  EXPECT_TRUE(Matches(p, "2.28.9+cuda13.0"));
  EXPECT_FALSE(Matches(p, "2.28.9+cuda12.2"));
  EXPECT_TRUE(Matches(Pin("2.28.9"), "2.28.9+cuda12.2"));
}

TEST(VersionPin, NonVersionComparesAsString) {
  VersionPin p = Pin("Ubuntu 22.04");
  EXPECT_TRUE(Matches(p, "Ubuntu 22.04"));
  EXPECT_FALSE(Matches(p, "Ubuntu 24.04"));
  EXPECT_FALSE(Matches(p, "ubuntu 22.04"));
  EXPECT_TRUE(Matches(Pin("enabled"), "enabled"));
  EXPECT_FALSE(Matches(Pin("enabled"), "disabled"));
}

TEST(VersionPin, GreaterOrEqualComparesNumerically) {
  VersionPin p = Pin(">=2.18");
  EXPECT_TRUE(Matches(p, "2.18.3"));
  EXPECT_TRUE(Matches(p, "2.18"));
  EXPECT_TRUE(Matches(p, "2.21.5+cuda12.4"));
  EXPECT_FALSE(Matches(p, "2.9.9"));
  EXPECT_FALSE(Matches(p, "2.17.1"));
  EXPECT_FALSE(Matches(p, "not found"));
}

TEST(VersionPin, EveryOperatorWorks) {
  EXPECT_TRUE(Matches(Pin(">2.18"), "2.18.1"));
  EXPECT_FALSE(Matches(Pin(">2.18"), "2.18.0"));
  EXPECT_TRUE(Matches(Pin("<3"), "2.99"));
  EXPECT_FALSE(Matches(Pin("<3"), "3.0"));
  EXPECT_TRUE(Matches(Pin("<=12.4"), "12.4.0"));
  EXPECT_FALSE(Matches(Pin("<=12.4"), "12.4.1"));
  EXPECT_TRUE(Matches(Pin("==550.54.15"), "550.54.15"));
  EXPECT_FALSE(Matches(Pin("==550.54.15"), "550.54.14"));
  EXPECT_TRUE(Matches(Pin("!=550.54.14"), "550.54.15"));
  EXPECT_FALSE(Matches(Pin("!=550.54.14"), "550.54.14"));
  EXPECT_TRUE(Matches(Pin("!=Ubuntu 20.04"), "Ubuntu 22.04"));
}

TEST(VersionPin, CommaJoinedClausesMustAllHold) {
  VersionPin p = Pin(">=2.18, <3");
  ASSERT_EQ(p.clauses.size(), 2u);
  EXPECT_TRUE(Matches(p, "2.18.3"));
  EXPECT_TRUE(Matches(p, "2.28.9+cuda13.0"));
  EXPECT_FALSE(Matches(p, "3.0.1"));
  EXPECT_FALSE(Matches(p, "2.17"));
  EXPECT_TRUE(Matches(Pin(">=550,!=550.54.14"), "550.54.15"));
  EXPECT_FALSE(Matches(Pin(">=550,!=550.54.14"), "550.54.14"));
}

TEST(VersionPin, SpacesAroundThePinAndOperandAreForgiven) {
  VersionPin p = Pin("  >= 2.18  ");
  EXPECT_EQ(p.text, ">= 2.18");
  EXPECT_TRUE(Matches(p, "2.19"));
}

TEST(VersionPin, GarbageIsRefusedWithTheReason) {
  EXPECT_THAT(PinError(""), HasSubstr("empty pin"));
  EXPECT_THAT(PinError("   "), HasSubstr("empty pin"));
  EXPECT_THAT(PinError(">="), HasSubstr("missing version after \">=\""));
  EXPECT_THAT(PinError("=>2.18"), HasSubstr("unknown operator \"=>\""));
  EXPECT_THAT(PinError("=2.18"), HasSubstr("unknown operator \"=\""));
  EXPECT_THAT(PinError(">=abc"), HasSubstr("not a version"));
  EXPECT_THAT(PinError(">=2.18,"), HasSubstr("empty part"));
  EXPECT_THAT(PinError(">=2.18,2.19"), HasSubstr("needs an operator"));
  EXPECT_THAT(PinError("2.18,2.19"), HasSubstr("a comma joins comparisons"));
}

TEST(VersionPin, ErrorNamesThePin) { EXPECT_THAT(PinError(">=x"), HasSubstr("pin \">=x\"")); }

}  // namespace
}  // namespace cc
