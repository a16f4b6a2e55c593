#include "orchestrator/store/pair_pack.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>

namespace cc {
namespace {

PairResult Port(const std::string& src, const std::string& dst, const std::string& port,
                double ms) {
  PairResult r;
  r.run_id = 1;
  r.stage = "ports";
  r.src = src;
  r.dst = dst;
  r.check = port;
  r.outcome = Outcome::kPass;
  r.state = "open";
  r.evidence = {{"addr", "10.42.0.2"}, {"errno", 0}, {"kind", "listed"}, {"ms", ms}};
  return r;
}

TEST(PairPack, OnePackPerPairInFirstSeenOrderWithSharedEvidenceOnce) {
  std::vector<PairResult> rs = {Port("n1", "n2", "tcp/22", 1.5), Port("n1", "n3", "tcp/22", 2),
                                Port("n1", "n2", "tcp/80", 1.5), Port("n1", "n2", "tcp/443", 3)};
  rs[3].at = "2026-12-07T10:00:01Z";
  auto packs = PackPairResults(rs, "2026-12-07T10:00:00Z");
  ASSERT_EQ(packs.size(), 2u);
  EXPECT_EQ(packs[0].dst, "n2");
  EXPECT_EQ(packs[0].n, 3);
  EXPECT_EQ(packs[0].n_value, 0);
  EXPECT_EQ(packs[0].at, "2026-12-07T10:00:00Z");
  // ms differs at tcp/443: it stays with each result.
  EXPECT_EQ(nlohmann::json::parse(packs[0].common),
            (nlohmann::json{{"addr", "10.42.0.2"}, {"errno", 0}, {"kind", "listed"}}));
  auto items = nlohmann::json::parse(packs[0].items);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0],
            nlohmann::json::parse(R"(["tcp/22","pass","open",null,"","",{"ms":1.5},""])"));
  EXPECT_EQ(items[2][0], "tcp/443");
  EXPECT_EQ(items[2][7], "2026-12-07T10:00:01Z");
  // A pack of one shares nothing: its evidence is whole.
  EXPECT_EQ(packs[1].common, "{}");
  EXPECT_EQ(nlohmann::json::parse(packs[1].items)[0][6]["addr"], "10.42.0.2");
}

TEST(PairPack, NullsAnywhereOrEvidenceNotAnObjectShareNothing) {
  std::vector<PairResult> rs = {Port("n1", "n2", "tcp/22", 1), Port("n1", "n2", "tcp/80", 1)};
  rs[1].evidence["deep"] = {{"x", nullptr}};
  EXPECT_EQ(PackPairResults(rs, "t")[0].common, "{}");
  rs[1].evidence = nlohmann::json::array({1, 2});
  EXPECT_EQ(PackPairResults(rs, "t")[0].common, "{}");
}

TEST(PairPack, ValuesCountedAndRoundsAndStagesApart) {
  std::vector<PairResult> rs = {Port("n1", "n2", "tcp/22", 1), Port("n1", "n2", "tcp/22", 1),
                                Port("n1", "n2", "tcp/22", 1)};
  rs[0].value = 12.5;
  rs[1].round = 2;
  rs[2].stage = "mpi";
  rs[2].value = std::nan("");
  auto packs = PackPairResults(rs, "t");
  ASSERT_EQ(packs.size(), 3u);
  EXPECT_EQ(packs[0].n_value, 1);
  EXPECT_EQ(nlohmann::json::parse(packs[0].items)[0][3], 12.5);
  EXPECT_EQ(packs[1].round, 2);
  EXPECT_EQ(packs[2].n_value, 0);  // NaN is no value
}

TEST(PairPack, APackHoldsAtMostTheStride) {
  std::vector<PairResult> rs(kPackIdStride + 1, Port("n1", "n2", "tcp/22", 1));
  auto packs = PackPairResults(rs, "t");
  ASSERT_EQ(packs.size(), 2u);
  EXPECT_EQ(packs[0].n, static_cast<int64_t>(kPackIdStride));
  EXPECT_EQ(packs[1].n, 1);
}

// What the store gives back is what it was given, through the packs and
// through the pair_results view that SQL over the store reads.
TEST(PairPack, StoreRoundTripsEveryFieldAndTheViewShowsTheOldColumns) {
  std::string path = ::testing::TempDir() + "/pair_pack_test.db";
  std::filesystem::remove(path);
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  RunRecord run;
  run.inventory_name = "pod-a";
  auto id = (*store)->BeginRun(run);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::vector<PairResult> rs = {Port("n1", "n2", "tcp/22", 1.25), Port("n1", "n3", "tcp/22", 2),
                                Port("n1", "n2", "tcp/80", 1.25)};
  for (auto& r : rs) r.run_id = *id;
  rs[1].outcome = Outcome::kFail;
  rs[1].state = "filtered";
  rs[1].message = "no answer";
  rs[1].value = 0.5;
  rs[1].unit = "ms";
  rs[2].evidence["confirmation"] = {{"retested", true}};
  rs[2].at = "2026-12-07T10:00:02Z";
  ASSERT_TRUE((*store)->AddPairResults(rs).ok());
  auto back = (*store)->GetPairResults(*id);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 3u);
  // Grouped by pair: n1->n2's two results first.
  const std::vector<const PairResult*> want = {&rs[0], &rs[2], &rs[1]};
  for (size_t i = 0; i < 3; ++i) {
    const PairResult& a = (*back)[i];
    const PairResult& b = *want[i];
    EXPECT_EQ(a.src + a.dst + a.check, b.src + b.dst + b.check);
    EXPECT_EQ(a.outcome, b.outcome);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.value, b.value);
    EXPECT_EQ(a.unit, b.unit);
    EXPECT_EQ(a.message, b.message);
    EXPECT_EQ(a.evidence, b.evidence) << a.evidence.dump();
    if (!b.at.empty()) {
      EXPECT_EQ(a.at, b.at);
    }
    EXPECT_FALSE(a.at.empty());
  }
  auto count = (*store)->CountPairResults(*id);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->results, 3);
  EXPECT_EQ(count->with_value, 1);
  store->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT src, dst, check_name, outcome, state, value, unit, "
                               "message, json_extract(evidence, '$.addr'), "
                               "json_extract(evidence, '$.confirmation.retested'), at, round "
                               "FROM pair_results ORDER BY id",
                               -1, &st, nullptr),
            SQLITE_OK);
  std::vector<std::string> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < 12; ++c) {
      const unsigned char* t = sqlite3_column_text(st, c);
      row += std::string(c ? "|" : "") + (t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], "n1|n2|tcp/80|pass|open|NULL|||10.42.0.2|1|2026-12-07T10:00:02Z|0");
  EXPECT_EQ(rows[2].substr(0, 43), "n1|n3|tcp/22|fail|filtered|0.5|ms|no answer");
}

}  // namespace
}  // namespace cc
