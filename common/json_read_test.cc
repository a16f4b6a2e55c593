#include "common/json_read.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cc {
namespace {

using nlohmann::json;

TEST(JsonRead, AMemberOfTheAskedTypeIsReturned) {
  json j = {{"s", "x"}, {"n", 2.5}, {"i", 7}, {"b", true}, {"a", {1}}, {"o", {{"k", 1}}}};
  JsonProblems p;
  EXPECT_EQ(JsonString(j, "s", "", &p), "x");
  EXPECT_EQ(JsonNumber(j, "n", 0, &p), 2.5);
  EXPECT_EQ(JsonInt(j, "i", 0, &p), 7);
  EXPECT_EQ(JsonCount(j, "i", 0, &p), 7);
  EXPECT_TRUE(JsonBool(j, "b", false, &p));
  EXPECT_EQ(JsonArray(j, "a", &p), json({1}));
  EXPECT_EQ(JsonObject(j, "o", &p), json({{"k", 1}}));
  EXPECT_TRUE(p.empty()) << p.notes().front();
}

TEST(JsonRead, AMissingOrNullMemberIsTheFallbackWithoutAProblem) {
  JsonProblems p;
  for (const json& j : {json::object(), json{{"k", nullptr}}}) {
    EXPECT_EQ(JsonString(j, "k", "dflt", &p), "dflt");
    EXPECT_EQ(JsonInt(j, "k", -4, &p), -4);
    EXPECT_TRUE(JsonArray(j, "k", &p).empty());
  }
  EXPECT_TRUE(p.empty());
}

TEST(JsonRead, AMemberOfAnotherTypeIsTheFallbackAndANoteNamingTheField) {
  json j = {{"symptoms", 3}, {"stage", {1, 2}}};
  JsonProblems p;
  const json& symptoms = JsonArray(j, "symptoms", &p);
  EXPECT_TRUE(symptoms.is_array());
  EXPECT_TRUE(symptoms.empty());
  EXPECT_EQ(JsonString(j, "stage", "?", &p), "?");
  ASSERT_EQ(p.notes().size(), 2u);
  EXPECT_EQ(p.notes()[0], "symptoms: an array expected, a number found (3)");
  EXPECT_EQ(p.notes()[1], "stage: a string expected, an array found ([1,2])");
}

TEST(JsonRead, EveryAccessorTakesAnyValueWithoutThrowing) {
  for (const json& j : {json(nullptr), json(1), json("s"), json::array({1, "k"}), json(true)}) {
    EXPECT_TRUE(JsonMember(j, "k").is_null());
    EXPECT_EQ(JsonString(j, "k", "f"), "f");
    EXPECT_EQ(JsonNumber(j, "k", 1.5), 1.5);
    EXPECT_TRUE(JsonObject(j, "k").empty());
    EXPECT_TRUE(JsonStrings(j, "k").empty());
  }
}

TEST(JsonRead, IntegersOutOfRangeOrFractionalAreProblems) {
  json j = {{"neg", -1},    {"huge", 18446744073709551615ull},
            {"frac", 2.5},  {"whole", 3.0},
            {"big", 1e300}, {"nan", NAN}};
  JsonProblems p;
  EXPECT_EQ(JsonCount(j, "neg", 9, &p), 9);
  EXPECT_EQ(JsonCount(j, "huge", 9, &p), 9);
  EXPECT_EQ(JsonInt(j, "huge", 9, &p), 9);
  EXPECT_EQ(JsonInt(j, "frac", 9, &p), 9);
  EXPECT_EQ(JsonInt(j, "whole", 9, &p), 3);
  EXPECT_EQ(JsonInt(j, "big", 9, &p), 9);
  EXPECT_EQ(JsonNumber(j, "nan", 9, &p), 9);
  EXPECT_EQ(JsonInt(j, "neg", 9, &p, -1, 5), -1);
  EXPECT_EQ(p.notes().size(), 6u);
}

TEST(JsonRead, StringsOfAnArrayLeaveTheOthersOutAndNoteThem) {
  JsonProblems p;
  EXPECT_EQ(JsonStrings(json{{"n", {"a", 1, "b"}}}, "n", &p), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(p.notes().size(), 1u);
  EXPECT_EQ(p.notes()[0], "n[1]: a string expected, a number found (1)");
}

TEST(JsonRead, ANoteWithinAMemberNamesThePathToTheField) {
  json meta = {{"actions", {{"drain", {"n1", 3}}}}, {"nodes", "four"}};
  JsonProblems p;
  {
    JsonProblems::Within actions(&p, "actions");
    EXPECT_EQ(JsonStrings(JsonObject(meta, "actions"), "drain", &p),
              std::vector<std::string>{"n1"});
  }
  JsonCount(meta, "nodes", 0, &p);
  ASSERT_EQ(p.notes().size(), 2u);
  EXPECT_EQ(p.notes()[0], "actions.drain[1]: a string expected, a number found (3)");
  EXPECT_EQ(p.notes()[1].substr(0, 7), "nodes: ");
  JsonProblems::Within nowhere(nullptr, "x");  // reads without a sink stay silent
}

TEST(JsonRead, EachObjectOfAnArrayIsReadWithinItsPlace) {
  json j = {{"gpus", {{{"index", 0}}, 7, {{"index", "one"}}}}};
  JsonProblems p;
  std::vector<int64_t> seen;
  JsonForEachObject(j, "gpus", &p,
                    [&](const json& g) { seen.push_back(JsonInt(g, "index", -1, &p)); });
  EXPECT_EQ(seen, (std::vector<int64_t>{0, -1}));
  ASSERT_EQ(p.notes().size(), 2u);
  EXPECT_EQ(p.notes()[0], "gpus[1]: an object expected, a number found (7)");
  EXPECT_EQ(p.notes()[1].substr(0, 15), "gpus[2].index: ");
}

TEST(JsonRead, ALongValueIsCutInItsNote) {
  JsonProblems p;
  JsonString(json{{"k", std::vector<int>(100, 7)}}, "k", "", &p);
  ASSERT_EQ(p.notes().size(), 1u);
  EXPECT_LT(p.notes()[0].size(), 120u);
  EXPECT_NE(p.notes()[0].find("..."), std::string::npos);
}

TEST(JsonRead, DumpReplacesInvalidUtf8InsteadOfThrowing) {
  json j = std::string("ok \xff\xfe end");
  EXPECT_THROW(j.dump(), json::type_error);
  EXPECT_EQ(JsonDump(j), "\"ok \xEF\xBF\xBD\xEF\xBF\xBD end\"");
}

}  // namespace
}  // namespace cc
