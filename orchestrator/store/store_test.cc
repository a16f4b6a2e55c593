#include "orchestrator/store/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

namespace cc {
namespace {

// A fresh directory per test, removed afterwards.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/sub/dir/clustercheck.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Store> OpenOrDie() {
    auto s = Store::Open(path_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // Sets user_version behind the store's back.
  void SetUserVersion(int v) {
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    std::string sql = "PRAGMA user_version=" + std::to_string(v);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  int64_t NewRun(Store& s, const std::string& name = "pod-a") {
    RunRecord r;
    r.inventory_name = name;
    auto id = s.BeginRun(r);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : -1;
  }

  std::string dir_;
  std::string path_;
};

std::vector<std::string> Tables(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                     "AND name NOT LIKE 'sqlite_%' ORDER BY name",
                     -1, &st, nullptr);
  std::vector<std::string> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST_F(StoreTest, EmptyDatabaseAtVersionZeroMigratesToTheNewest) {
  SetUserVersion(0);
  EXPECT_TRUE(Tables(path_).empty());
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->schema_version(), Store::kSchemaVersion);
  // pair_results is the view of pair_packs (schema v4).
  EXPECT_EQ(Tables(path_), (std::vector<std::string>{"node_results", "nodes", "pair_packs",
                                                     "pair_results", "runs", "verdicts"}));
}

TEST_F(StoreTest, ReopeningMigratedDatabaseKeepsDataAndVersion) {
  int64_t id;
  {
    auto store = OpenOrDie();
    ASSERT_TRUE(store);
    id = NewRun(*store);
  }
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->schema_version(), Store::kSchemaVersion);
  auto run = store->GetRun(id);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->inventory_name, "pod-a");
}

TEST_F(StoreTest, NewerSchemaIsRefusedWithClearError) {
  SetUserVersion(7);
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().Is(ErrorKind::kIo));
  EXPECT_NE(store.status().message().find("database schema 7 is newer than this clustercheck (" +
                                          std::to_string(Store::kSchemaVersion) + ")"),
            std::string::npos)
      << store.status().message();
  EXPECT_NE(store.status().message().find(path_), std::string::npos);
}

TEST_F(StoreTest, OpenCreatesParentDirectoriesAndUsesWal) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  EXPECT_TRUE(std::filesystem::exists(path_));
  NewRun(*store);
  // WAL mode keeps a -wal file next to the database while it is open.
  EXPECT_TRUE(std::filesystem::exists(path_ + "-wal"));
}

TEST_F(StoreTest, OpenOnUnwritablePathNamesThePath) {
  std::string file = dir_ + "/plain";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  auto store = Store::Open(file + "/x.db");  // parent is a file
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().Is(ErrorKind::kIo));
  EXPECT_NE(store.status().message().find(file), std::string::npos) << store.status().message();
}

TEST_F(StoreTest, RunRoundTripsEveryField) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  RunRecord r;
  r.started_at = "2026-12-02T10:26:45Z";
  r.status = "running";
  r.exit_code = -1;
  r.inventory_path = "/etc/pod-a.toml";
  r.inventory_sha256 = "abc123";
  r.inventory_name = "pod-a";
  r.argv = "clustercheck run 'pod a.toml'";
  r.version = "0.1.0";
  r.meta = {{"stages", {"facts", "nccl"}}, {"fanout", 64}};
  auto id = store->BeginRun(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto got = store->GetRun(*id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->id, *id);
  EXPECT_EQ(got->started_at, r.started_at);
  EXPECT_EQ(got->finished_at, "");
  EXPECT_EQ(got->status, "running");
  EXPECT_EQ(got->exit_code, -1);
  EXPECT_EQ(got->inventory_path, r.inventory_path);
  EXPECT_EQ(got->inventory_sha256, r.inventory_sha256);
  EXPECT_EQ(got->inventory_name, r.inventory_name);
  EXPECT_EQ(got->argv, r.argv);
  EXPECT_EQ(got->version, r.version);
  EXPECT_EQ(got->meta, r.meta);
}

TEST_F(StoreTest, NodeRecordRoundTripsAndUpdateKeepsOrder) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  NodeRecord a{run, "gpu002", "10.0.0.2", true, "", {{"driver", "550.54"}}};
  NodeRecord b{run, "gpu001", "10.0.0.1", false, "unreachable: no route", nlohmann::json::object()};
  ASSERT_TRUE(store->PutNode(a).ok());
  ASSERT_TRUE(store->PutNode(b).ok());
  a.facts["gpus"] = 8;
  a.reachable = false;
  ASSERT_TRUE(store->PutNode(a).ok());  // replaces, keeps place
  auto nodes = store->GetNodes(run);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].node, "gpu002");
  EXPECT_EQ((*nodes)[0].address, "10.0.0.2");
  EXPECT_FALSE((*nodes)[0].reachable);
  EXPECT_EQ((*nodes)[0].facts, a.facts);
  EXPECT_EQ((*nodes)[1].node, "gpu001");
  EXPECT_EQ((*nodes)[1].error, "unreachable: no route");
  EXPECT_EQ((*nodes)[1].run_id, run);
}

TEST_F(StoreTest, NodeResultRoundTripsEveryField) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  NodeResult r;
  r.run_id = run;
  r.node = "gpu003";
  r.stage = "parity";
  r.check = "driver";
  r.outcome = Outcome::kWarn;
  r.value = "535.104";
  r.expected = "550.54.15";
  r.message = "odd one out";
  r.evidence = {{"majority", "550.54.15"}, {"nodes", {1, 2, 3}}};
  r.at = "2026-12-02T10:26:46Z";
  ASSERT_TRUE(store->AddNodeResult(r).ok());
  NodeResult stamped = r;
  stamped.at = "";
  stamped.outcome = Outcome::kHang;
  ASSERT_TRUE(store->AddNodeResult(stamped).ok());

  auto got = store->GetNodeResults(run);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  const NodeResult& g = (*got)[0];
  EXPECT_EQ(g.run_id, run);
  EXPECT_EQ(g.node, r.node);
  EXPECT_EQ(g.stage, r.stage);
  EXPECT_EQ(g.check, r.check);
  EXPECT_EQ(g.outcome, Outcome::kWarn);
  EXPECT_EQ(g.value, r.value);
  EXPECT_EQ(g.expected, r.expected);
  EXPECT_EQ(g.message, r.message);
  EXPECT_EQ(g.evidence, r.evidence);
  EXPECT_EQ(g.at, r.at);
  EXPECT_EQ((*got)[1].outcome, Outcome::kHang);
  EXPECT_TRUE(std::regex_match((*got)[1].at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << (*got)[1].at;
}

TEST_F(StoreTest, VerdictsRoundTripEveryFieldInTheOrderRecorded) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  Verdict v;
  v.kind = "port-blocked";
  v.severity = Outcome::kFail;
  v.nodes = {"gpu03"};
  v.pairs = {{"gpu01", "gpu03"}, {"gpu02", "gpu03"}};
  v.stage = "ports";
  v.check = "tcp/29500";
  v.summary = "gpu03 drops tcp/29500 from every peer";
  v.evidence = {{"stage_kind", "receiver"}, {"ports", {29500}}};
  v.next_step = "allow tcp 29500 in INPUT on gpu03";
  ASSERT_TRUE(store->AddVerdict(run, v, "2026-12-02T10:26:46Z").ok());
  Verdict lost;
  lost.kind = "node-lost";
  lost.severity = Outcome::kHang;
  lost.stage = "ports";
  ASSERT_TRUE(store->AddVerdict(run, lost).ok());
  ASSERT_TRUE(store->AddVerdict(NewRun(*store), v).ok()) << "another run's";

  auto got = store->GetVerdicts(run);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ(VerdictToJson((*got)[0]), VerdictToJson(v));
  EXPECT_EQ(VerdictToJson((*got)[1]), VerdictToJson(lost));
}

TEST_F(StoreTest, AVerdictForAMissingRunIsRefused) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  Status s = store->AddVerdict(42, Verdict{});
  EXPECT_TRUE(s.Is(ErrorKind::kIo));
  EXPECT_NE(s.message().find("FOREIGN KEY"), std::string::npos) << s.message();
}

TEST_F(StoreTest, PairResultRoundTripsWithValueSetAndNull) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  PairResult p;
  p.run_id = run;
  p.stage = "nccl";
  p.src = "gpu001";
  p.dst = "gpu002";
  p.check = "allreduce";
  p.outcome = Outcome::kPass;
  p.state = "ok";
  p.value = 0.0;  // zero is a value, not "none"
  p.unit = "GB/s";
  p.message = "busbw";
  p.evidence = {{"transport", "NET/IB/GDRDMA"}, {"log", "\xff raw byte"}};
  p.at = "2026-12-02T10:26:47Z";
  ASSERT_TRUE(store->AddPairResult(p).ok());
  PairResult q = p;
  q.value.reset();
  q.outcome = Outcome::kFail;
  q.state = "filtered";
  ASSERT_TRUE(store->AddPairResult(q).ok());

  auto got = store->GetPairResults(run);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  const PairResult& g = (*got)[0];
  EXPECT_EQ(g.run_id, run);
  EXPECT_EQ(g.stage, p.stage);
  EXPECT_EQ(g.src, p.src);
  EXPECT_EQ(g.dst, p.dst);
  EXPECT_EQ(g.check, p.check);
  EXPECT_EQ(g.outcome, Outcome::kPass);
  EXPECT_EQ(g.state, "ok");
  ASSERT_TRUE(g.value.has_value());
  EXPECT_EQ(*g.value, 0.0);
  EXPECT_EQ(g.unit, p.unit);
  EXPECT_EQ(g.message, p.message);
  EXPECT_EQ(g.evidence["transport"], "NET/IB/GDRDMA");
  EXPECT_TRUE(g.evidence.contains("log"));  // invalid UTF-8 replaced, kept
  EXPECT_EQ(g.at, p.at);
  EXPECT_FALSE((*got)[1].value.has_value());
  EXPECT_EQ((*got)[1].outcome, Outcome::kFail);
  EXPECT_EQ((*got)[1].state, "filtered");
}

TEST_F(StoreTest, ManyPairResultsAreWrittenTogether) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  std::vector<PairResult> many(5000);
  for (size_t i = 0; i < many.size(); ++i) {
    many[i].run_id = run;
    many[i].stage = "ports";
    many[i].src = "n" + std::to_string(i % 70);
    many[i].dst = "n" + std::to_string(i / 70);
    many[i].check = "tcp/29500";
    many[i].outcome = i % 7 ? Outcome::kPass : Outcome::kFail;
    many[i].value = static_cast<double>(i);
  }
  ASSERT_TRUE(store->AddPairResults(many).ok());
  auto got = store->GetPairResults(run);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), many.size());
  EXPECT_EQ((*got)[4999].src, many[4999].src);
  EXPECT_EQ(*(*got)[4999].value, 4999.0);
  EXPECT_EQ((*got)[7].outcome, Outcome::kFail);
}

// What ForEachPairResult gives, counted: a burn-in round's results and
// another run's are not.
TEST_F(StoreTest, CountPairResultsCountsWhatForEachGivesAndThoseWithAValue) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store), other = NewRun(*store);
  std::vector<PairResult> rs(10);
  for (size_t i = 0; i < rs.size(); ++i) {
    rs[i].run_id = i == 9 ? other : run;
    rs[i].stage = "mpi";
    rs[i].src = "a";
    rs[i].dst = "b";
    rs[i].check = "latency";
    rs[i].outcome = Outcome::kPass;
    if (i % 3 == 0) rs[i].value = 1.5;  // 0, 3, 6 in `run`; 9 in `other`
    rs[i].round = i == 8 ? 1 : 0;
  }
  ASSERT_TRUE(store->AddPairResults(rs).ok());
  auto count = store->CountPairResults(run);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  int64_t given = 0;
  ASSERT_TRUE(store->ForEachPairResult(run, [&](PairResult&&) { ++given; }).ok());
  EXPECT_EQ(count->results, given);
  EXPECT_EQ(count->results, 8);
  EXPECT_EQ(count->with_value, 3);
}

TEST_F(StoreTest, FailedBatchWritesNothing) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  std::vector<PairResult> batch(3);
  for (auto& p : batch) p.run_id = run;
  batch[2].run_id = run + 100;  // no such run: the foreign key fails
  EXPECT_FALSE(store->AddPairResults(batch).ok());
  auto got = store->GetPairResults(run);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

TEST_F(StoreTest, ListRunsIsNewestFirst) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t a = NewRun(*store, "a");
  int64_t b = NewRun(*store, "b");
  int64_t c = NewRun(*store, "c");
  auto runs = store->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].id, c);
  EXPECT_EQ((*runs)[1].id, b);
  EXPECT_EQ((*runs)[2].id, a);
  auto two = store->ListRuns(2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
  auto latest = store->LatestRunId();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, c);
}

TEST_F(StoreTest, LatestRunIdOnEmptyStoreIsNotFound) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  auto latest = store->LatestRunId();
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(latest.status().Is(ErrorKind::kNotFound));
  EXPECT_TRUE(store->GetRun(1).status().Is(ErrorKind::kNotFound));
}

TEST_F(StoreTest, FinishRunSetsStatusCodeAndTime) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  ASSERT_EQ(store->GetRun(run)->status, "running");
  ASSERT_TRUE(store->FinishRun(run, "done", 1).ok());
  auto got = store->GetRun(run);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "done");
  EXPECT_EQ(got->exit_code, 1);
  EXPECT_FALSE(got->finished_at.empty());
  EXPECT_TRUE(store->FinishRun(run + 1, "done", 0).Is(ErrorKind::kNotFound));
}

TEST_F(StoreTest, SetRunMetaMergesKeys) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  RunRecord r;
  r.meta = {{"fanout", 64}};
  auto run = store->BeginRun(r);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(store->SetRunMeta(*run, "stages", {"facts", "ports"}).ok());
  ASSERT_TRUE(store->SetRunMeta(*run, "fanout", 8).ok());
  auto got = store->GetRun(*run);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->meta, (nlohmann::json{{"fanout", 8}, {"stages", {"facts", "ports"}}}));
  EXPECT_TRUE(store->SetRunMeta(*run + 1, "x", 1).Is(ErrorKind::kNotFound));
}

TEST_F(StoreTest, ResultsForMissingRunAreRefused) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  NodeResult r;
  r.run_id = 42;
  Status s = store->AddNodeResult(r);
  EXPECT_TRUE(s.Is(ErrorKind::kIo));
  EXPECT_NE(s.message().find("FOREIGN KEY"), std::string::npos) << s.message();
}

TEST(StorePaths, DefaultPathFollowsXdgStateHome) {
  std::string old_xdg = getenv("XDG_STATE_HOME") ? getenv("XDG_STATE_HOME") : "";
  std::string old_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("XDG_STATE_HOME", "/x/state", 1);
  EXPECT_EQ(DefaultStorePath(), "/x/state/clustercheck/clustercheck.db");
  setenv("XDG_STATE_HOME", "relative", 1);  // invalid per XDG: ignored
  setenv("HOME", "/home/op", 1);
  EXPECT_EQ(DefaultStorePath(), "/home/op/.local/state/clustercheck/clustercheck.db");
  unsetenv("XDG_STATE_HOME");
  EXPECT_EQ(DefaultStorePath(), "/home/op/.local/state/clustercheck/clustercheck.db");
  if (!old_xdg.empty()) setenv("XDG_STATE_HOME", old_xdg.c_str(), 1);
  setenv("HOME", old_home.c_str(), 1);
}

TEST(StorePaths, NowIsUtcIso8601) {
  EXPECT_TRUE(std::regex_match(NowIso8601(), std::regex(R"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << NowIso8601();
}

// The child writes results one by one and acknowledges each through a pipe;
// the parent kills it with SIGKILL mid-stream. Everything acknowledged must
// survive, and the run must still read as unfinished.
TEST_F(StoreTest, SigkilledWriterKeepsEveryAcknowledgedResult) {
  constexpr int kAcksBeforeKill = 50;
  {
    auto store = OpenOrDie();  // migrate before forking
    ASSERT_TRUE(store);
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    alarm(30);  // never outlive a broken parent
    auto store = Store::Open(path_);
    if (!store.ok()) _exit(2);
    auto run = (*store)->BeginRun(RunRecord{});
    if (!run.ok()) _exit(3);
    for (int i = 0; i < 1000000; ++i) {
      NodeResult r;
      r.run_id = *run;
      r.node = "n" + std::to_string(i);
      r.stage = "facts";
      r.check = "seq";
      r.outcome = Outcome::kPass;
      r.value = std::to_string(i);
      if (!(*store)->AddNodeResult(r).ok()) _exit(4);
      char b = 'x';
      if (write(fds[1], &b, 1) != 1) _exit(5);
    }
    _exit(0);
  }
  close(fds[1]);
  int acks = 0;
  char b;
  while (acks < kAcksBeforeKill && read(fds[0], &b, 1) == 1) ++acks;
  kill(pid, SIGKILL);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  close(fds[0]);
  ASSERT_EQ(acks, kAcksBeforeKill) << "child ended early, status " << wstatus;
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  auto run = store->LatestRunId();
  ASSERT_TRUE(run.ok());
  auto got = store->GetRun(*run);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "running");
  EXPECT_EQ(got->finished_at, "");
  auto results = store->GetNodeResults(*run);
  ASSERT_TRUE(results.ok());
  ASSERT_GE(results->size(), static_cast<size_t>(kAcksBeforeKill));
  for (size_t i = 0; i < results->size(); ++i) {
    EXPECT_EQ((*results)[i].value, std::to_string(i));
  }
}

// A burn-in stores its rounds in the same run; the plain readers (what the
// analysis judges) see round 0 only, the round readers the rest, and a
// resume drops the rounds that did not end together with the burn-in's
// own verdicts, keeping everything before.
TEST_F(StoreTest, BurnInRoundsAreKeptApartAndDroppedFromARound) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  auto pair_at = [&](int round) {
    PairResult p;
    p.run_id = run;
    p.stage = "nccl";
    p.src = "a";
    p.dst = "b";
    p.check = "allreduce";
    p.outcome = Outcome::kPass;
    p.round = round;
    return p;
  };
  auto node_at = [&](int round) {
    NodeResult r;
    r.run_id = run;
    r.node = "a";
    r.stage = "health";
    r.check = "sample";
    r.outcome = Outcome::kPass;
    r.round = round;
    return r;
  };
  for (int round = 0; round <= 3; ++round) {
    ASSERT_TRUE(store->AddPairResult(pair_at(round)).ok());
    ASSERT_TRUE(store->AddNodeResult(node_at(round)).ok());
  }
  Verdict stage_verdict;
  stage_verdict.kind = "bad-link";
  stage_verdict.severity = Outcome::kFail;
  stage_verdict.stage = "nccl";
  ASSERT_TRUE(store->AddVerdict(run, stage_verdict, "", 3).ok());
  Verdict burnin_verdict = stage_verdict;
  burnin_verdict.kind = "flaky";
  burnin_verdict.evidence = {{"burnin", true}, {"rate", 0.25}};
  ASSERT_TRUE(store->AddVerdict(run, burnin_verdict).ok());
  Verdict health_verdict = stage_verdict;
  health_verdict.kind = "gpu-health";
  health_verdict.stage = "health";
  ASSERT_TRUE(store->AddVerdict(run, health_verdict).ok());

  ASSERT_EQ(store->GetPairResults(run)->size(), 1u);
  ASSERT_EQ(store->GetNodeResults(run)->size(), 1u);
  EXPECT_EQ(store->GetVerdicts(run)->size(), 2u) << "round 3's stage verdict is not the run's";
  auto rounds = store->GetRoundPairResults(run);
  ASSERT_TRUE(rounds.ok()) << rounds.status().ToString();
  ASSERT_EQ(rounds->size(), 3u);
  EXPECT_EQ((*rounds)[0].round, 1);
  EXPECT_EQ((*rounds)[2].round, 3);
  ASSERT_EQ(store->GetRoundNodeResults(run)->size(), 3u);

  ASSERT_TRUE(store->DeleteRoundsFrom(run, 3).ok());
  rounds = store->GetRoundPairResults(run);
  ASSERT_EQ(rounds->size(), 2u);
  EXPECT_EQ(rounds->back().round, 2);
  EXPECT_EQ(store->GetRoundNodeResults(run)->size(), 2u);
  auto verdicts = store->GetVerdicts(run);
  ASSERT_EQ(verdicts->size(), 1u) << "the burn-in verdict is judged anew on resume";
  EXPECT_EQ((*verdicts)[0].kind, "gpu-health");
  EXPECT_EQ(store->GetPairResults(run)->size(), 1u) << "round 0 is kept";
}

TEST_F(StoreTest, AReopenedRunIsRunningAgainWithoutItsRoundZero) {
  auto store = OpenOrDie();
  ASSERT_TRUE(store);
  int64_t run = NewRun(*store);
  for (int round : {0, 1, 2}) {
    NodeResult r;
    r.run_id = run;
    r.node = "a";
    r.stage = round ? "health" : "facts";
    r.check = round ? "sample" : "driver";
    r.outcome = Outcome::kPass;
    r.round = round;
    ASSERT_TRUE(store->AddNodeResult(r).ok());
  }
  Verdict v;
  v.kind = "odd-version";
  ASSERT_TRUE(store->AddVerdict(run, v).ok());
  ASSERT_TRUE(store->FinishRun(run, "interrupted", 130).ok());

  ASSERT_TRUE(store->ReopenRun(run).ok());
  EXPECT_TRUE(store->GetNodeResults(run)->empty());
  EXPECT_TRUE(store->GetVerdicts(run)->empty());
  EXPECT_EQ(store->GetRoundNodeResults(run)->size(), 2u) << "the rounds stay";
  auto again = store->GetRun(run);
  EXPECT_EQ(again->status, "running");
  EXPECT_EQ(again->finished_at, "");
  EXPECT_TRUE(store->ReopenRun(run + 100).Is(ErrorKind::kNotFound));
}

}  // namespace
}  // namespace cc
