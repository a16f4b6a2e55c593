#include "orchestrator/store/store.h"

#include <pwd.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "common/clock.h"
#include "orchestrator/store/pair_pack.h"
#include "orchestrator/store/schema_migrations.h"

namespace cc {
namespace {

static_assert(std::size(kSchemaMigrations) == Store::kSchemaVersion,
              "kSchemaVersion must equal the number of migration steps");

// Evidence may hold raw bytes from logs; invalid UTF-8 must not throw.
std::string DumpJson(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One prepared statement; finalized on scope exit. Parameters are bound,
// never spliced into the SQL text.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool prepared() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, std::optional<double> v) {
    if (v) {
      sqlite3_bind_double(stmt_, i, *v);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(stmt_, col))
             : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::optional<double> OptDouble(int col) const {
    if (IsNull(col)) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

Result<nlohmann::json> ParseJsonColumn(const std::string& text, const std::string& where) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Io("corrupt JSON in " + where);
  return j;
}

Result<Outcome> ParseOutcomeColumn(const std::string& text, const std::string& where) {
  auto o = ParseOutcome(text);
  if (!o) return Status::Io("unknown outcome '" + text + "' in " + where);
  return *o;
}

const char kRunColumns[] =
    "id, started_at, finished_at, status, exit_code, inventory_path, "
    "inventory_sha256, inventory_name, argv, version, meta";

Result<RunRecord> ReadRun(const Stmt& s) {
  RunRecord r;
  r.id = s.Int(0);
  r.started_at = s.Text(1);
  r.finished_at = s.Text(2);
  r.status = s.Text(3);
  r.exit_code = static_cast<int>(s.Int(4));
  r.inventory_path = s.Text(5);
  r.inventory_sha256 = s.Text(6);
  r.inventory_name = s.Text(7);
  r.argv = s.Text(8);
  r.version = s.Text(9);
  auto meta = ParseJsonColumn(s.Text(10), "runs.meta of run " + std::to_string(r.id));
  if (!meta.ok()) return meta.status();
  r.meta = std::move(*meta);
  return r;
}

Result<NodeRecord> ReadNode(const Stmt& s) {
  NodeRecord n;
  n.run_id = s.Int(0);
  n.node = s.Text(1);
  n.address = s.Text(2);
  n.reachable = s.Int(3) != 0;
  n.error = s.Text(4);
  auto facts = ParseJsonColumn(s.Text(5), "nodes.facts of " + n.node);
  if (!facts.ok()) return facts.status();
  n.facts = std::move(*facts);
  return n;
}

// Columns 0-5 of both result tables: id, run_id, stage, check_name,
// outcome, evidence.
template <typename R>
Status ReadResultCommon(const Stmt& s, const char* table, R* r) {
  std::string where = std::string(table) + " row " + std::to_string(s.Int(0));
  r->run_id = s.Int(1);
  r->stage = s.Text(2);
  r->check = s.Text(3);
  auto outcome = ParseOutcomeColumn(s.Text(4), where);
  if (!outcome.ok()) return outcome.status();
  r->outcome = *outcome;
  auto evidence = ParseJsonColumn(s.Text(5), where);
  if (!evidence.ok()) return evidence.status();
  r->evidence = std::move(*evidence);
  return Status::Ok();
}

Result<NodeResult> ReadNodeResult(const Stmt& s) {
  NodeResult r;
  Status st = ReadResultCommon(s, "node_results", &r);
  if (!st.ok()) return st;
  r.node = s.Text(6);
  r.value = s.Text(7);
  r.expected = s.Text(8);
  r.message = s.Text(9);
  r.at = s.Text(10);
  return r;
}

Result<PairResult> ReadPairResult(const Stmt& s) {
  PairResult r;
  Status st = ReadResultCommon(s, "pair_results", &r);
  if (!st.ok()) return st;
  r.src = s.Text(6);
  r.dst = s.Text(7);
  r.state = s.Text(8);
  r.value = s.OptDouble(9);
  r.unit = s.Text(10);
  r.message = s.Text(11);
  r.at = s.Text(12);
  return r;
}

// Node names from a JSON array; anything but a string is left out.
std::vector<std::string> NodesOf(const nlohmann::json& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    if (n.is_string()) out.push_back(n.get<std::string>());
  }
  return out;
}

// [src, dst] pairs from a JSON array; malformed entries are left out.
std::vector<std::pair<std::string, std::string>> PairsOf(const nlohmann::json& pairs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : pairs) {
    if (p.is_array() && p.size() == 2 && p[0].is_string() && p[1].is_string()) {
      out.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
  }
  return out;
}

nlohmann::json PairsJson(const std::vector<std::pair<std::string, std::string>>& pairs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [src, dst] : pairs) out.push_back({src, dst});
  return out;
}

// Columns: id, stage, kind, severity, check_name, nodes, pairs, summary,
// next_step, evidence, cause.
Result<Verdict> ReadVerdict(const Stmt& s) {
  std::string where = "verdicts row " + std::to_string(s.Int(0));
  Verdict v;
  v.stage = s.Text(1);
  v.kind = s.Text(2);
  auto severity = ParseOutcomeColumn(s.Text(3), where);
  if (!severity.ok()) return severity.status();
  v.severity = *severity;
  v.check = s.Text(4);
  auto nodes = ParseJsonColumn(s.Text(5), where);
  if (!nodes.ok()) return nodes.status();
  v.nodes = NodesOf(*nodes);
  auto pairs = ParseJsonColumn(s.Text(6), where);
  if (!pairs.ok()) return pairs.status();
  v.pairs = PairsOf(*pairs);
  v.summary = s.Text(7);
  v.next_step = s.Text(8);
  auto evidence = ParseJsonColumn(s.Text(9), where);
  if (!evidence.ok()) return evidence.status();
  v.evidence = std::move(*evidence);
  v.cause = CauseScopeFromName(s.Text(10));
  return v;
}

Status SqlErrorOf(sqlite3* db, const std::string& path, const std::string& what) {
  return Status::Io(path + ": " + what + ": " + sqlite3_errmsg(db));
}

// Runs a SELECT with one integer parameter and reads every row.
template <typename T, typename Read>
Result<std::vector<T>> SelectAll(sqlite3* db, const std::string& sql, int64_t param, Read read,
                                 const std::string& path, const char* what) {
  Stmt s(db, sql.c_str());
  if (!s.prepared()) return SqlErrorOf(db, path, what);
  s.Bind(1, param);
  std::vector<T> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    Result<T> row = read(s);
    if (!row.ok()) return row.status();
    out.push_back(std::move(*row));
  }
  if (rc != SQLITE_DONE) return SqlErrorOf(db, path, what);
  return out;
}

// SelectAll without the vector: `each` gets every row as it is read.
template <typename T, typename Read>
Status ForEachRow(sqlite3* db, const std::string& sql, int64_t param, Read read,
                  const std::function<void(T&&)>& each, const std::string& path, const char* what) {
  Stmt s(db, sql.c_str());
  if (!s.prepared()) return SqlErrorOf(db, path, what);
  s.Bind(1, param);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    Result<T> row = read(s);
    if (!row.ok()) return row.status();
    each(std::move(*row));
  }
  if (rc != SQLITE_DONE) return SqlErrorOf(db, path, what);
  return Status::Ok();
}

}  // namespace

NodeResult NodeCheck(const std::string& stage, const std::string& node, const std::string& check,
                     Outcome outcome, const std::string& message, nlohmann::json evidence,
                     const std::string& value) {
  NodeResult r;
  r.node = node;
  r.stage = stage;
  r.check = check;
  r.outcome = outcome;
  r.message = message;
  r.value = value;
  r.evidence = std::move(evidence);
  return r;
}

std::string NowIso8601() { return Iso8601Utc(RealClock().WallNow()); }

std::string DefaultStorePath() {
  // XDG: a relative $XDG_STATE_HOME is invalid and must be ignored.
  const char* xdg = std::getenv("XDG_STATE_HOME");
  std::string base;
  if (xdg && xdg[0] == '/') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    if (home && *home) {
      base = home;
    } else if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) {
      base = pw->pw_dir;
    } else {
      base = ".";
    }
    base += "/.local/state";
  }
  return base + "/clustercheck/clustercheck.db";
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  if (path != ":memory:") {
    auto parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::Io("cannot create directory " + parent.string() + ": " + ec.message());
    }
  }
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::Io("cannot open store " + path + ": " + msg);
  }
  std::unique_ptr<Store> store(new Store(db, path));
  // busy_timeout first: switching to WAL itself may wait on another process.
  for (const char* pragma : {"PRAGMA busy_timeout=5000", "PRAGMA journal_mode=WAL",
                             "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
    Status s = store->Exec(pragma);
    if (!s.ok()) return s;
  }
  Status s = store->Migrate();
  if (!s.ok()) return s;
  return store;
}

Store::~Store() { sqlite3_close_v2(db_); }

Status Store::SqlError(const std::string& what) { return SqlErrorOf(db_, path_, what); }

Status Store::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::Io(path_ + ": " + msg);
  }
  return Status::Ok();
}

int Store::schema_version() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "PRAGMA user_version");
  return s.prepared() && s.Step() == SQLITE_ROW ? static_cast<int>(s.Int(0)) : -1;
}

Status Store::Migrate() {
  std::lock_guard lock(mu_);
  int have = schema_version();
  if (have < 0) return SqlError("reading schema version");
  if (have > kSchemaVersion) {
    return Status::Io(path_ + ": database schema " + std::to_string(have) +
                      " is newer than this clustercheck (" + std::to_string(kSchemaVersion) + ")");
  }
  for (int v = have; v < kSchemaVersion; ++v) {
    // IMMEDIATE: two controllers opening a fresh file must not both migrate.
    Status s = Exec("BEGIN IMMEDIATE");
    if (!s.ok()) return s;
    // Re-read under the write lock: another process may have migrated.
    if (schema_version() > v) {
      Exec("ROLLBACK");
      continue;
    }
    s = Exec(kSchemaMigrations[v]);
    // PRAGMA takes no bound parameters; the value is our own integer.
    if (s.ok()) s = Exec("PRAGMA user_version=" + std::to_string(v + 1));
    if (s.ok()) s = Exec("COMMIT");
    if (!s.ok()) {
      Exec("ROLLBACK");
      return s.WithContext("migrating schema " + std::to_string(v) + " to " +
                           std::to_string(v + 1));
    }
  }
  return Status::Ok();
}

Result<int64_t> Store::BeginRun(const RunRecord& run) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "INSERT INTO runs (started_at, finished_at, status, exit_code, "
         "inventory_path, inventory_sha256, inventory_name, argv, version, "
         "meta) VALUES (?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return SqlError("begin run");
  s.Bind(1, run.started_at.empty() ? NowIso8601() : run.started_at)
      .Bind(2, run.finished_at)
      .Bind(3, run.status.empty() ? std::string("running") : run.status)
      .Bind(4, int64_t{run.exit_code})
      .Bind(5, run.inventory_path)
      .Bind(6, run.inventory_sha256)
      .Bind(7, run.inventory_name)
      .Bind(8, run.argv)
      .Bind(9, run.version)
      .Bind(10, DumpJson(run.meta));
  if (s.Step() != SQLITE_DONE) return SqlError("begin run");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status Store::FinishRun(int64_t run_id, const std::string& status, int exit_code) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "UPDATE runs SET finished_at = ?, status = ?, exit_code = ? "
         "WHERE id = ?");
  if (!s.prepared()) return SqlError("finish run");
  s.Bind(1, NowIso8601()).Bind(2, status).Bind(3, int64_t{exit_code});
  s.Bind(4, run_id);
  if (s.Step() != SQLITE_DONE) return SqlError("finish run");
  if (sqlite3_changes(db_) == 0) {
    return Status::NotFound("no run " + std::to_string(run_id) + " in " + path_);
  }
  return Status::Ok();
}

Status Store::SetRunMeta(int64_t run_id, const std::string& key, const nlohmann::json& value) {
  std::lock_guard lock(mu_);
  // Read-modify-write under the write lock, so that concurrent writers of
  // other keys (another process) are not lost.
  Status s = Exec("BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  auto run = GetRun(run_id);
  if (!run.ok()) {
    Exec("ROLLBACK");
    return run.status();
  }
  nlohmann::json meta = run->meta.is_object() ? run->meta : nlohmann::json::object();
  meta[key] = value;
  Stmt u(db_, "UPDATE runs SET meta = ? WHERE id = ?");
  if (!u.prepared() || u.Bind(1, DumpJson(meta)).Bind(2, run_id).Step() != SQLITE_DONE) {
    s = SqlError("set run meta '" + key + "'");
    Exec("ROLLBACK");
    return s;
  }
  return Exec("COMMIT");
}

Status Store::PutNode(const NodeRecord& node) {
  std::lock_guard lock(mu_);
  // An upsert keeps the row's rowid, so GetNodes keeps first-put order
  // (the inventory's) when a node is updated later in the run.
  Stmt s(db_,
         "INSERT INTO nodes (run_id, node, address, reachable, error, facts) "
         "VALUES (?,?,?,?,?,?) ON CONFLICT(run_id, node) DO UPDATE SET "
         "address = excluded.address, reachable = excluded.reachable, "
         "error = excluded.error, facts = excluded.facts");
  if (!s.prepared()) return SqlError("put node");
  s.Bind(1, node.run_id)
      .Bind(2, node.node)
      .Bind(3, node.address)
      .Bind(4, int64_t{node.reachable ? 1 : 0})
      .Bind(5, node.error)
      .Bind(6, DumpJson(node.facts));
  if (s.Step() != SQLITE_DONE) return SqlError("put node " + node.node);
  return Status::Ok();
}

Status Store::AddNodeResult(const NodeResult& r) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "INSERT INTO node_results (run_id, node, stage, check_name, outcome, "
         "value, expected, message, evidence, at, round) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return SqlError("add node result");
  s.Bind(1, r.run_id)
      .Bind(2, r.node)
      .Bind(3, r.stage)
      .Bind(4, r.check)
      .Bind(5, std::string(OutcomeName(r.outcome)))
      .Bind(6, r.value)
      .Bind(7, r.expected)
      .Bind(8, r.message)
      .Bind(9, DumpJson(r.evidence))
      .Bind(10, r.at.empty() ? NowIso8601() : r.at)
      .Bind(11, int64_t{r.round});
  if (s.Step() != SQLITE_DONE) {
    return SqlError("add node result " + r.node + " " + r.stage + "/" + r.check);
  }
  return Status::Ok();
}

Status Store::InsertPairResults(const std::vector<PairResult>& rs) {
  Stmt s(db_,
         "INSERT INTO pair_packs (run_id, stage, src, dst, round, at, common, n, n_value, items) "
         "VALUES (?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return SqlError("add pair result");
  for (const PairPack& p : PackPairResults(rs, NowIso8601())) {
    s.Reset();
    s.Bind(1, p.run_id)
        .Bind(2, p.stage)
        .Bind(3, p.src)
        .Bind(4, p.dst)
        .Bind(5, int64_t{p.round})
        .Bind(6, p.at)
        .Bind(7, p.common)
        .Bind(8, p.n)
        .Bind(9, p.n_value)
        .Bind(10, p.items);
    if (s.Step() != SQLITE_DONE) {
      return SqlError("add pair results " + p.src + "->" + p.dst + " " + p.stage);
    }
  }
  return Status::Ok();
}

Status Store::AddPairResult(const PairResult& r) {
  std::lock_guard lock(mu_);
  return InsertPairResults({r});
}

Status Store::AddPairResults(const std::vector<PairResult>& rs) {
  std::lock_guard lock(mu_);
  Status s = Exec("BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  s = InsertPairResults(rs);
  if (s.ok()) s = Exec("COMMIT");
  if (!s.ok()) Exec("ROLLBACK");
  return s;
}

Status Store::AddVerdict(int64_t run_id, const Verdict& v, const std::string& at, int round) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "INSERT INTO verdicts (run_id, stage, kind, severity, check_name, nodes, pairs, "
         "summary, next_step, evidence, at, round, cause) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return SqlError("add verdict");
  s.Bind(1, run_id)
      .Bind(2, v.stage)
      .Bind(3, v.kind)
      .Bind(4, std::string(OutcomeName(v.severity)))
      .Bind(5, v.check)
      .Bind(6, DumpJson(v.nodes))
      .Bind(7, DumpJson(PairsJson(v.pairs)))
      .Bind(8, v.summary)
      .Bind(9, v.next_step)
      .Bind(10, DumpJson(v.evidence))
      .Bind(11, at.empty() ? NowIso8601() : at)
      .Bind(12, int64_t{round})
      .Bind(13, std::string(CauseScopeName(v.cause)));
  if (s.Step() != SQLITE_DONE) return SqlError("add verdict " + v.stage + "/" + v.kind);
  return Status::Ok();
}

Result<RunRecord> Store::GetRun(int64_t run_id) {
  std::lock_guard lock(mu_);
  auto runs =
      SelectAll<RunRecord>(db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?",
                           run_id, ReadRun, path_, "get run");
  if (!runs.ok()) return runs.status();
  if (runs->empty()) {
    return Status::NotFound("no run " + std::to_string(run_id) + " in " + path_);
  }
  return std::move(runs->front());
}

Result<int64_t> Store::LatestRunId() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT MAX(id) FROM runs");
  if (!s.prepared() || s.Step() != SQLITE_ROW) return SqlError("latest run");
  if (s.IsNull(0)) return Status::NotFound("no runs in " + path_);
  return s.Int(0);
}

Result<std::vector<RunRecord>> Store::ListRuns(int limit) {
  std::lock_guard lock(mu_);
  // By id, not started_at: two runs may start within the same second.
  return SelectAll<RunRecord>(
      db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id DESC LIMIT ?", limit,
      ReadRun, path_, "list runs");
}

Result<std::vector<NodeRecord>> Store::GetNodes(int64_t run_id) {
  std::lock_guard lock(mu_);
  return SelectAll<NodeRecord>(db_,
                               "SELECT run_id, node, address, reachable, error, facts FROM nodes "
                               "WHERE run_id = ? ORDER BY rowid",
                               run_id, ReadNode, path_, "get nodes");
}

namespace {
// The columns ReadNodeResult / ReadPairResult read, then round.
constexpr const char* kNodeResultColumns =
    "SELECT id, run_id, stage, check_name, outcome, evidence, node, value, "
    "expected, message, at, round FROM node_results ";
// From the packs themselves rather than the pair_results view, so that
// the order is the packs' own (their primary key, then each pack's array)
// and SQLite sorts nothing: the same columns as the view.
constexpr const char* kPairResultColumns =
    "SELECT p.id * 4096 + j.key, p.run_id, p.stage, json_extract(j.value, '$[0]'), "
    "json_extract(j.value, '$[1]'), "
    "CASE WHEN p.common = '{}' THEN json_extract(j.value, '$[6]') "
    "ELSE json_patch(p.common, json_extract(j.value, '$[6]')) END, p.src, p.dst, "
    "json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'), "
    "json_extract(j.value, '$[4]'), json_extract(j.value, '$[5]'), "
    "CASE json_extract(j.value, '$[7]') WHEN '' THEN p.at ELSE json_extract(j.value, '$[7]') END, "
    "p.round FROM pair_packs p, json_each(p.items) j ";
static_assert(kPackIdStride == 4096, "kPairResultColumns and the v4 view number results so");

Result<NodeResult> ReadNodeResultRound(const Stmt& s) {
  auto r = ReadNodeResult(s);
  if (r.ok()) r->round = static_cast<int>(s.Int(11));
  return r;
}

Result<PairResult> ReadPairResultRound(const Stmt& s) {
  auto r = ReadPairResult(s);
  if (r.ok()) r->round = static_cast<int>(s.Int(13));
  return r;
}
}  // namespace

Result<std::vector<NodeResult>> Store::GetNodeResults(int64_t run_id) {
  std::lock_guard lock(mu_);
  return SelectAll<NodeResult>(
      db_, std::string(kNodeResultColumns) + "WHERE run_id = ? AND round = 0 ORDER BY id", run_id,
      ReadNodeResultRound, path_, "get node results");
}

Result<std::vector<PairResult>> Store::GetPairResults(int64_t run_id) {
  std::vector<PairResult> out;
  Status s = ForEachPairResult(run_id, [&](PairResult&& r) { out.push_back(std::move(r)); });
  if (!s.ok()) return s;
  return out;
}

Status Store::ForEachPairResult(int64_t run_id, const std::function<void(PairResult&&)>& each) {
  std::lock_guard lock(mu_);
  return ForEachRow<PairResult>(
      db_, std::string(kPairResultColumns) + "WHERE p.run_id = ? AND p.round = 0 ORDER BY p.id",
      run_id, ReadPairResultRound, each, path_, "get pair results");
}

Result<Store::PairResultCount> Store::CountPairResults(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT coalesce(sum(n), 0), coalesce(sum(n_value), 0) FROM pair_packs "
         "WHERE run_id = ? AND round = 0");
  if (!s.prepared()) return SqlError("count pair results");
  s.Bind(1, run_id);
  if (s.Step() != SQLITE_ROW) return SqlError("count pair results");
  return PairResultCount{s.Int(0), s.Int(1)};
}

Result<std::vector<NodeResult>> Store::GetRoundNodeResults(int64_t run_id) {
  std::lock_guard lock(mu_);
  return SelectAll<NodeResult>(
      db_, std::string(kNodeResultColumns) + "WHERE run_id = ? AND round >= 1 ORDER BY id", run_id,
      ReadNodeResultRound, path_, "get round node results");
}

Result<std::vector<PairResult>> Store::GetRoundPairResults(int64_t run_id) {
  std::lock_guard lock(mu_);
  return SelectAll<PairResult>(
      db_, std::string(kPairResultColumns) + "WHERE p.run_id = ? AND p.round >= 1 ORDER BY p.id",
      run_id, ReadPairResultRound, path_, "get round pair results");
}

Result<std::vector<PairResult>> Store::GetPairResultsOfRound(int64_t run_id, int round) {
  std::lock_guard lock(mu_);
  // The round is an int, written into the statement; run_id is bound.
  return SelectAll<PairResult>(db_,
                               std::string(kPairResultColumns) +
                                   "WHERE p.run_id = ? AND p.round = " +
                                   std::to_string(std::max(round, 1)) + " ORDER BY p.id",
                               run_id, ReadPairResultRound, path_, "get pair results of a round");
}

Result<std::vector<Verdict>> Store::GetVerdicts(int64_t run_id) {
  std::lock_guard lock(mu_);
  return SelectAll<Verdict>(
      db_,
      "SELECT id, stage, kind, severity, check_name, nodes, pairs, summary, "
      "next_step, evidence, cause FROM verdicts WHERE run_id = ? AND round = 0 "
      "ORDER BY id",
      run_id, ReadVerdict, path_, "get verdicts");
}

Status Store::ReopenRun(int64_t run_id) {
  std::lock_guard lock(mu_);
  Status s = Exec("BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  static const char* const kChanges[] = {
      "UPDATE runs SET status = 'running', finished_at = '', exit_code = -1 WHERE id = ?",
      "DELETE FROM node_results WHERE run_id = ? AND round = 0",
      "DELETE FROM pair_packs WHERE run_id = ? AND round = 0",
      "DELETE FROM verdicts WHERE run_id = ? AND round = 0",
  };
  for (const char* sql : kChanges) {
    Stmt c(db_, sql);
    if (!c.prepared()) {
      s = SqlError("reopen run");
      break;
    }
    c.Bind(1, run_id);
    if (c.Step() != SQLITE_DONE) {
      s = SqlError("reopen run " + std::to_string(run_id));
      break;
    }
    if (sql == kChanges[0] && sqlite3_changes(db_) == 0) {
      s = Status::NotFound("no run " + std::to_string(run_id) + " in " + path_);
      break;
    }
  }
  if (s.ok()) s = Exec("COMMIT");
  if (!s.ok()) Exec("ROLLBACK");
  return s;
}

Status Store::DeleteRoundsFrom(int64_t run_id, int first_round) {
  std::lock_guard lock(mu_);
  Status s = Exec("BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  static const char* const kDeletes[] = {
      "DELETE FROM node_results WHERE run_id = ? AND round >= ?",
      "DELETE FROM pair_packs WHERE run_id = ? AND round >= ?",
      "DELETE FROM verdicts WHERE run_id = ? AND (round >= ? OR (round = 0 AND "
      "json_valid(evidence) AND json_extract(evidence, '$.burnin') IS NOT NULL))",
  };
  for (const char* sql : kDeletes) {
    Stmt d(db_, sql);
    if (!d.prepared()) {
      s = SqlError("delete rounds");
      break;
    }
    d.Bind(1, run_id).Bind(2, int64_t{first_round});
    if (d.Step() != SQLITE_DONE) {
      s = SqlError("delete rounds from " + std::to_string(first_round));
      break;
    }
  }
  if (s.ok()) s = Exec("COMMIT");
  if (!s.ok()) Exec("ROLLBACK");
  return s;
}

}  // namespace cc
