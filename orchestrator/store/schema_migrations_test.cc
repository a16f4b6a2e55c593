#include "orchestrator/store/schema_migrations.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "orchestrator/store/store.h"

namespace cc {
namespace {

using nlohmann::json;

// A database as clustercheck wrote it before schema 2: stage verdicts are
// node results with check "verdict:<the stage's kind>", their nodes, pairs
// and next step inside the evidence (the ports stage's node is a hostlist,
// "*" or a pair's first node; the nccl stage's a node).
class SchemaV1 : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-schema-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/v1.db";
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    Exec(kSchemaMigrations[0]);
    Exec("PRAGMA user_version=1");
    Exec("INSERT INTO runs (id, started_at, status) VALUES (1, '2026-03-02T08:00:00Z', 'done')");
  }
  void TearDown() override {
    if (db_) sqlite3_close(db_);
    std::filesystem::remove_all(dir_);
  }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "") << "\n"
        << sql;
  }
  void OldRow(const std::string& node, const std::string& stage, const std::string& check,
              const std::string& outcome, const std::string& value, const std::string& message,
              const std::string& evidence) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_,
                                 "INSERT INTO node_results (run_id, node, stage, check_name, "
                                 "outcome, value, message, evidence, at) "
                                 "VALUES (1, ?, ?, ?, ?, ?, ?, ?, '2026-03-02T08:00:01Z')",
                                 -1, &st, nullptr),
              SQLITE_OK);
    int i = 0;
    for (const std::string* s : {&node, &stage, &check, &outcome, &value, &message, &evidence}) {
      sqlite3_bind_text(st, ++i, s->c_str(), -1, SQLITE_TRANSIENT);
    }
    ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
  }
  std::unique_ptr<Store> Migrate() {
    sqlite3_close(db_);
    db_ = nullptr;
    auto store = Store::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::string dir_, path_;
  sqlite3* db_ = nullptr;
};

TEST_F(SchemaV1, StageVerdictRowsMoveIntoTheVerdictsTableInTheSharedKinds) {
  OldRow("gpu01", "ports", "listen", "pass", "", "listened on tcp/29500", "{}");
  OldRow("gpu03", "ports", "verdict:receiver", "fail", "tcp/29500",
         "gpu03 drops tcp/29500 from every peer",
         R"({"kind":"receiver","nodes":["gpu03"],"node_pairs":[["gpu01","gpu03"],["gpu02","gpu03"]],
             "next_step":"allow tcp 29500 in INPUT on gpu03","ports":[29500],
             "pairs":[{"src":"gpu01","dst":"gpu03","state":"filtered"}]})");
  OldRow("*", "ports", "verdict:nothing", "fail", "tcp/22,29500", "no node reaches any other",
         R"({"kind":"nothing","nodes":["gpu02","gpu01"],"node_pairs":[],"next_step":"",
             "share":0.25})");
  OldRow("n3", "nccl", "verdict:bad-link", "fail", "allreduce",
         "n3 and n14 fail together but each works with others (isolation: 4 NCCL runs)",
         R"({"nodes":["n3","n14"],"node_pairs":[["n3","n14"]],
             "next_step":"check the cable, switch ports and routes between n3 and n14",
             "isolation_runs":4})");
  OldRow("gpu02", "ports", "listen", "warn", "", "tcp/29500 in use", "{}");
  auto store = Migrate();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->schema_version(), Store::kSchemaVersion);

  auto checks = store->GetNodeResults(1);
  ASSERT_TRUE(checks.ok()) << checks.status().ToString();
  ASSERT_EQ(checks->size(), 2u) << "only the node checks stay node results";
  EXPECT_EQ((*checks)[0].node, "gpu01");
  EXPECT_EQ((*checks)[1].node, "gpu02");

  auto got = store->GetVerdicts(1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  const Verdict& receiver = (*got)[0];
  EXPECT_EQ(receiver.kind, "port-blocked");
  EXPECT_EQ(receiver.severity, Outcome::kFail);
  EXPECT_EQ(receiver.stage, "ports");
  EXPECT_EQ(receiver.check, "tcp/29500");
  EXPECT_EQ(receiver.nodes, std::vector<std::string>{"gpu03"});
  EXPECT_EQ(receiver.pairs, (std::vector<std::pair<std::string, std::string>>{{"gpu01", "gpu03"},
                                                                              {"gpu02", "gpu03"}}));
  EXPECT_EQ(receiver.summary, "gpu03 drops tcp/29500 from every peer");
  EXPECT_EQ(receiver.next_step, "allow tcp 29500 in INPUT on gpu03");
  EXPECT_EQ(receiver.evidence, json::parse(R"({"stage_kind":"receiver","ports":[29500],
                            "pairs":[{"src":"gpu01","dst":"gpu03","state":"filtered"}]})"));

  const Verdict& nothing = (*got)[1];
  EXPECT_EQ(nothing.kind, "widespread");
  EXPECT_EQ(nothing.check, "tcp/22,29500");
  EXPECT_EQ(nothing.nodes, (std::vector<std::string>{"gpu02", "gpu01"}));
  EXPECT_TRUE(nothing.pairs.empty());
  EXPECT_EQ(nothing.evidence, (json{{"stage_kind", "nothing"}, {"share", 0.25}}));

  const Verdict& link = (*got)[2];
  EXPECT_EQ(link.kind, "bad-link") << "a kind already shared is kept";
  EXPECT_EQ(link.stage, "nccl");
  EXPECT_EQ(link.check, "allreduce");
  EXPECT_EQ(link.nodes, (std::vector<std::string>{"n3", "n14"}));
  EXPECT_EQ(link.pairs, (std::vector<std::pair<std::string, std::string>>{{"n3", "n14"}}));
  EXPECT_EQ(link.next_step, "check the cable, switch ports and routes between n3 and n14");
  EXPECT_EQ(link.evidence, (json{{"stage_kind", "bad-link"}, {"isolation_runs", 4}}));
}

TEST_F(SchemaV1, AVerdictRowWithCorruptEvidenceStillMigrates) {
  // A database that cannot migrate cannot be opened at all.
  OldRow("gpu03", "ports", "verdict:in-use", "warn", "tcp/29500", "in use", "{not json");
  OldRow("gpu04", "ports", "verdict:pair", "fail", "tcp/22", "gpu04 and gpu05",
         R"({"nodes":"gpu04","node_pairs":[["gpu04"]],"next_step":7})");
  auto store = Migrate();
  ASSERT_TRUE(store);
  auto got = store->GetVerdicts(1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].kind, "in-use");
  EXPECT_EQ((*got)[0].severity, Outcome::kWarn);
  EXPECT_EQ((*got)[0].evidence, (json{{"stage_kind", "in-use"}}));
  EXPECT_EQ((*got)[1].kind, "bad-link");
  EXPECT_TRUE((*got)[1].nodes.empty());
  EXPECT_TRUE((*got)[1].pairs.empty());
  EXPECT_EQ((*got)[1].next_step, "");
}

TEST_F(SchemaV1, ADatabaseWithoutVerdictsKeepsEveryResult) {
  OldRow("gpu01", "facts", "driver", "pass", "550.54.15", "", R"({"source":"nvml"})");
  auto store = Migrate();
  ASSERT_TRUE(store);
  auto checks = store->GetNodeResults(1);
  ASSERT_TRUE(checks.ok());
  ASSERT_EQ(checks->size(), 1u);
  EXPECT_EQ((*checks)[0].evidence, (json{{"source", "nvml"}}));
  auto verdicts = store->GetVerdicts(1);
  ASSERT_TRUE(verdicts.ok());
  EXPECT_TRUE(verdicts->empty());
}

// v3 -> v4: every pair result row becomes a pack of one, read back whole,
// in its order, and the pair_results view shows it with its old columns.
TEST_F(SchemaV1, PairResultRowsBecomePacksAndReadTheSame) {
  Exec(
      "INSERT INTO pair_results (run_id, stage, src, dst, check_name, outcome, state, value, "
      "unit, message, evidence, at) VALUES "
      "(1, 'ports', 'gpu01', 'gpu02', 'tcp/22', 'pass', 'open', NULL, '', '', "
      "'{\"ms\":1.5}', '2026-03-02T08:00:01Z'), "
      "(1, 'mpi', 'gpu01', 'gpu02', 'bandwidth', 'fail', 'slow', 3.25, 'GB/s', 'slow', "
      "'{\"speed\":{\"slow\":true}}', '2026-03-02T08:00:02Z')");
  auto store = Migrate();
  ASSERT_TRUE(store);
  auto got = store->GetPairResults(1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].check, "tcp/22");
  EXPECT_EQ((*got)[0].evidence, (json{{"ms", 1.5}}));
  EXPECT_FALSE((*got)[0].value);
  EXPECT_EQ((*got)[1].outcome, Outcome::kFail);
  EXPECT_EQ((*got)[1].state, "slow");
  EXPECT_EQ((*got)[1].value, 3.25);
  EXPECT_EQ((*got)[1].unit, "GB/s");
  EXPECT_EQ((*got)[1].at, "2026-03-02T08:00:02Z");
  EXPECT_EQ((*got)[1].evidence, (json{{"speed", {{"slow", true}}}}));
  auto count = store->CountPairResults(1);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->results, 2);
  EXPECT_EQ(count->with_value, 1);
}

}  // namespace
}  // namespace cc
