#include "orchestrator/stages/mpi/mpi_verdict.h"

#include <algorithm>
#include <cstdio>
#include <regex>

#include "common/hostlist.h"
#include "orchestrator/run/schedule.h"

namespace cc {
namespace {

bool IsDashLine(const std::string& l) {
  return l.size() >= 20 && l.find_first_not_of('-') == std::string::npos;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// "  Local host: node3" -> "node3" for key "Local host".
std::string FieldOf(const std::vector<std::string>& block, const std::string& key) {
  for (const std::string& l : block) {
    std::string t = Trim(l);
    if (t.rfind(key + ":", 0) == 0) return Trim(t.substr(key.size() + 1));
  }
  return "";
}

std::string Joined(const std::vector<std::string>& block) {
  std::string out;
  for (const std::string& l : block) {
    std::string t = Trim(l);
    if (t.empty()) continue;
    if (!out.empty()) out += ' ';
    out += t;
  }
  return out;
}

// The first sentence of a help block, for quoting.
std::string Headline(const std::vector<std::string>& block) {
  std::string all = Joined(block);
  size_t dot = all.find(". ");
  if (dot != std::string::npos && dot < 240) return all.substr(0, dot + 1);
  return all.size() > 240 ? all.substr(0, 240) + "..." : all;
}

class Attributor {
 public:
  explicit Attributor(const std::map<std::string, std::string>& aliases) : aliases_(aliases) {}

  std::string NodeOf(const std::string& who) const {
    auto it = aliases_.find(who);
    if (it != aliases_.end()) return it->second;
    // A fully qualified host name whose first label is known.
    size_t dot = who.find('.');
    if (dot != std::string::npos && dot > 0 && !std::isdigit(static_cast<unsigned char>(who[0]))) {
      it = aliases_.find(who.substr(0, dot));
      if (it != aliases_.end()) return it->second;
    }
    return "";
  }

  void Block(const std::vector<std::string>& block) {
    std::string all = Joined(block);
    std::string quote = "Open MPI: \"" + Headline(block) + "\"";
    static const std::regex kInvalidIf("invalid value was given for (\\w+_if_(?:in|ex)clude)");
    std::smatch m;
    if (std::regex_search(all, m, kInvalidIf)) {
      std::string param = m[1];
      std::string host = FieldOf(block, "Local host");
      std::string why = FieldOf(block, "Message");
      Add("bad-if", param + "=" + FieldOf(block, "Value"), host, "",
          param + "=\"" + FieldOf(block, "Value") + "\" is not usable on %NODES%" +
              (why.empty() ? "" : ": " + why) + ", so Open MPI ignores it (" + quote + ")");
    } else if (all.find("None of the TCP networks specified to be included for out-of-band") !=
               std::string::npos) {
      std::string v = FieldOf(block, "Value given");
      Add("bad-if", "oob=" + v, "", "",
          "oob_tcp_if_include=\"" + v +
              "\" matches no interface of this machine, where mpirun runs, so no node can "
              "report back to it (" +
              quote + ")");
    } else if (all.find("unable to reach each other") != std::string::npos) {
      static const std::regex kHost("is on host: (\\S+)");
      std::string hosts;
      for (const std::string& l : block) {
        if (std::regex_search(l, m, kHost)) Add("unreachable", "", m[1], "", "");
      }
      std::string btls = FieldOf(block, "BTLs attempted");
      Add("unreachable", "", "", "",
          "no Open MPI transport connects %NODES% (BTLs attempted: " + btls +
              "; check btl_tcp_if_include and the interfaces' subnets) (" + quote + ")");
    } else if (all.find("could not access or execute an executable") != std::string::npos) {
      std::string exe = FieldOf(block, "Executable");
      Add("no-executable", exe, FieldOf(block, "Node"), "",
          "%NODES% cannot run " + exe + " (the probe must be at the same path on every node) (" +
              quote + ")");
    } else if (all.find("failed to TCP connect to a peer") != std::string::npos) {
      std::string msg = FieldOf(block, "Message");
      std::string err = FieldOf(block, "Error");
      static const std::regex kTo("connect\\(\\) to ([^ :]+):(\\d+)");
      std::string peer;
      if (std::regex_search(msg, m, kTo)) peer = NodeOf(m[1]);
      Add("tcp-connect", peer, FieldOf(block, "Local host"), peer,
          "%NODES% could not open Open MPI's TCP connection to " +
              (peer.empty() ? std::string("a peer") : peer) + ": " + msg + ": " + err +
              " (a firewall on " + (peer.empty() ? std::string("the peer") : peer) +
              " or between them?) (" + quote + ")");
    } else if (all.find("ORTE") != std::string::npos && (all.find("daemon") != std::string::npos)) {
      Add("daemon", "", "", "",
          "Open MPI could not start its daemons on every node (" + quote + ")");
    }
  }

  void Line(const std::string& l) {
    static const std::regex kSsh("ssh: connect to host (\\S+) port (\\d+): (.*)");
    static const std::regex kDenied("^(?:\\S+@)?(\\S+): Permission denied");
    static const std::regex kResolve("ssh: Could not resolve hostname ([^:]+): (.*)");
    std::smatch m;
    if (std::regex_search(l, m, kSsh) || std::regex_search(l, m, kResolve) ||
        std::regex_search(l, m, kDenied)) {
      std::string who = m[1];
      std::string node = NodeOf(who);
      Add("ssh", l, node.empty() ? who : node, "", "mpirun's ssh to %NODES% failed: \"" + l + "\"");
    } else if (l.find("Host key verification failed") != std::string::npos) {
      Add("ssh", l, "", "", "mpirun's ssh: \"" + Trim(l) + "\" (known_hosts of the inventory)");
    }
  }

  std::vector<MpiBlame> Done() {
    std::vector<MpiBlame> out;
    for (auto& [key, b] : blames_) {
      std::string names = FoldHostlist(b.nodes);
      size_t at = b.message.find("%NODES%");
      if (at != std::string::npos) {
        b.message.replace(at, 7, names.empty() ? std::string("a node") : names);
      }
      out.push_back(b);
    }
    std::stable_sort(out.begin(), out.end(), [](const MpiBlame& a, const MpiBlame& b) {
      return a.nodes.size() > b.nodes.size();
    });
    return out;
  }

 private:
  // Merges blames of one kind and detail; `who` is a host name or address
  // (mapped to its node); an empty message keeps the earlier one.
  void Add(const std::string& kind, const std::string& detail, const std::string& who,
           const std::string& peer, const std::string& message) {
    auto [it, fresh] = blames_.try_emplace(kind + "\n" + detail);
    MpiBlame& b = it->second;
    b.kind = kind;
    b.peer = peer;
    if (!message.empty() && b.message.empty()) b.message = message;
    if (!who.empty()) {
      std::string node = NodeOf(who);
      if (node.empty()) node = who;
      if (std::find(b.nodes.begin(), b.nodes.end(), node) == b.nodes.end()) b.nodes.push_back(node);
    }
  }

  const std::map<std::string, std::string>& aliases_;
  std::map<std::string, MpiBlame> blames_;
};

}  // namespace

std::vector<MpiBlame> AttributeMpiMessages(const std::vector<std::string>& lines,
                                           const std::map<std::string, std::string>& aliases) {
  Attributor a(aliases);
  std::vector<std::string> block;
  bool in_block = false;
  for (const std::string& raw : lines) {
    std::string l = StripMpiOutputTag(raw);
    if (IsDashLine(Trim(l))) {
      if (in_block) a.Block(block);
      block.clear();
      in_block = !in_block;
      continue;
    }
    if (in_block) {
      block.push_back(l);
    } else {
      a.Line(l);
    }
  }
  if (in_block && !block.empty()) a.Block(block);
  return a.Done();
}

namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

int RankOf(const std::vector<std::string>& nodes, const std::string& node) {
  auto it = std::find(nodes.begin(), nodes.end(), node);
  return it == nodes.end() ? -1 : static_cast<int>(it - nodes.begin());
}

// How far a stopped job got through its rounds.
struct RoundProgress {
  bool known = false;     // every rank started and reported its allreduce
  size_t first_open = 0;  // the first round with a pair unreported
  size_t total = 0;
  bool cap_stop = false;
};

RoundProgress ProgressOf(const MpiRunFacts& f, const MpiPairIndex& index,
                         const std::vector<Round>& rounds, bool launched) {
  RoundProgress p;
  p.total = rounds.size();
  p.cap_stop = f.cap_stop;
  p.known = f.hung && launched && f.output.allreduce.size() == f.nodes.size();
  if (!p.known) return p;
  p.first_open = rounds.size();
  for (size_t r = 0; r < rounds.size() && p.first_open == rounds.size(); ++r) {
    for (const auto& [sa, sb] : rounds[r]) {
      if (!index.Find(std::stoi(sa), std::stoi(sb))) {
        p.first_open = r;
        break;
      }
    }
  }
  return p;
}

// A pair with no line from a job stopped after its launch: after an idle
// stop, the pairs of the first unfinished round are the hang suspects
// (the job stalled there); every other missing pair was never reached, so
// it is untested (`error`), not accused.
void MarkUnreported(const RoundProgress& p, size_t round, const MpiRunFacts& f, PairResult* r) {
  std::string why = f.stop_why.empty()
                        ? "mpirun was stopped at its deadline (" + Fixed(f.timeout_s, 0) + " s)"
                        : f.stop_why;
  if (!p.cap_stop && round == p.first_open) {
    r->outcome = Outcome::kHang;
    r->state = "hang";
    r->message = "hang suspect: no result in round " + std::to_string(round + 1) + " of " +
                 std::to_string(p.total) + ", where the job stalled; " + why;
  } else {
    r->outcome = Outcome::kError;
    r->state = "not-reached";
    r->message = "not reached: the job was stopped at its deadline after round " +
                 std::to_string(p.first_open) + " of " + std::to_string(p.total) + " (" + why + ")";
  }
  r->evidence = {{"round", round}, {"rounds_done", p.first_open}, {"rounds", p.total}};
}

// What the whole job says about a result that never came: the nodes whose
// launch failed, how mpirun ended, and every blame.
struct MissingResults {
  std::vector<std::string> launch_blamed;  // named for a launch failure
  std::string blamed_all;                  // every blame, for results no blame names
  std::string ended;                       // how mpirun ended
  bool all_hello = false;                  // every rank started
  // error when the launch failed on named nodes (not tested; their
  // "launch" says why), hang when mpirun was stopped at its deadline, fail
  // when Open MPI said why, else error.
  Outcome outcome = Outcome::kError;

  std::string Why(const std::string& what) const {
    if (!launch_blamed.empty()) {
      return what + ": not run, the launch failed because of " + FoldHostlist(launch_blamed);
    }
    return what + ": " + ended + (blamed_all.empty() ? "" : "; " + blamed_all);
  }
};

bool Names(const MpiBlame& b, const std::string& node) {
  return std::find(b.nodes.begin(), b.nodes.end(), node) != b.nodes.end();
}

MissingResults MissingResultsOf(const MpiRunFacts& f) {
  MissingResults m;
  const MpiProbeOutput& o = f.output;
  for (const MpiBlame& b : f.blames) m.blamed_all += (m.blamed_all.empty() ? "" : "; ") + b.message;
  m.all_hello = o.hellos.size() == f.nodes.size();
  m.ended = f.hung ? "mpirun was stopped at its deadline (" + Fixed(f.timeout_s, 0) + " s)"
                   : "mpirun exited " + std::to_string(f.exit_code);
  // A broken link is not a launch failure.
  for (const MpiBlame& b : f.blames) {
    if (b.kind == "tcp-connect") continue;
    for (const std::string& nd : b.nodes) {
      if (!o.hellos.count(RankOf(f.nodes, nd)) &&
          std::find(m.launch_blamed.begin(), m.launch_blamed.end(), nd) == m.launch_blamed.end()) {
        m.launch_blamed.push_back(nd);
      }
    }
  }
  m.outcome = !m.launch_blamed.empty() ? Outcome::kError
              : f.hung                 ? Outcome::kHang
              : m.blamed_all.empty()   ? Outcome::kError
                                       : Outcome::kFail;
  return m;
}

NodeResult LaunchResult(const MpiRunFacts& f, int rank, const MissingResults& m) {
  const std::string& node = f.nodes[rank];
  const std::string r = std::to_string(rank);
  auto result = [&](Outcome oc, std::string msg, nlohmann::json ev) {
    return NodeCheck("mpi", node, "launch", oc, msg, std::move(ev));
  };
  auto h = f.output.hellos.find(rank);
  if (h != f.output.hellos.end()) {
    return result(Outcome::kPass, "rank " + r + " started on " + h->second.host,
                  {{"rank", rank}, {"host", h->second.host}, {"library", h->second.library}});
  }
  std::string mine;
  for (const MpiBlame& b : f.blames) {
    if (Names(b, node) && b.kind != "tcp-connect") mine += (mine.empty() ? "" : "; ") + b.message;
  }
  if (!mine.empty()) return result(Outcome::kFail, mine, {{"rank", rank}});
  if (!m.launch_blamed.empty()) {
    return result(Outcome::kError,
                  "rank " + r + " did not start: the launch failed because of " +
                      FoldHostlist(m.launch_blamed),
                  {{"rank", rank}});
  }
  if (f.hung)
    return result(Outcome::kHang, m.Why("rank " + r + " never started"), {{"rank", rank}});
  return result(Outcome::kError, m.Why("rank " + r + " did not start (not named by Open MPI)"),
                {{"rank", rank}});
}

NodeResult AllreduceResult(const MpiRunFacts& f, int rank, const MissingResults& m) {
  const std::string& node = f.nodes[rank];
  auto a = f.output.allreduce.find(rank);
  if (a == f.output.allreduce.end()) {
    return NodeCheck("mpi", node, "allreduce", m.outcome, m.Why("no MPI_Allreduce result"),
                     nlohmann::json::object());
  }
  const MpiAllreduceLine& l = a->second;
  std::string msg = l.ok ? "MPI_Allreduce of " + std::to_string(l.bytes) + " bytes exact in " +
                               Fixed(l.us, 0) + " us"
                    : !l.error.empty() ? "MPI_Allreduce: " + l.error
                                       : "MPI_Allreduce: " + std::to_string(l.mismatches) + " of " +
                                             std::to_string(l.bytes / 8) + " int64 sums wrong";
  return NodeCheck("mpi", node, "allreduce", l.ok ? Outcome::kPass : Outcome::kFail, msg,
                   {{"bytes", l.bytes}, {"us", l.us}, {"mismatches", l.mismatches}});
}

// The messages of the tcp-connect blames between src and dst, either way.
std::string LinkBlame(const std::vector<MpiBlame>& blames, const std::string& src,
                      const std::string& dst) {
  std::string out;
  for (const MpiBlame& bl : blames) {
    if (bl.kind != "tcp-connect") continue;
    bool hit = (bl.peer == dst && Names(bl, src)) || (bl.peer == src && Names(bl, dst));
    if (hit) out += (out.empty() ? "" : "; ") + bl.message;
  }
  return out;
}

// The pair's results from its probe line: the figures, or the failing
// side's reason.
void JudgePairLine(const MpiRunFacts& f, const MpiPairLine& p, const std::string& link_blame,
                   PairResult* lat, PairResult* bw) {
  if (p.ok) {
    lat->outcome = bw->outcome = Outcome::kPass;
    lat->state = bw->state = "ok";
    lat->value = p.latency_us;
    bw->value = p.bandwidth_gbps;
    lat->message = Fixed(p.latency_us, 1) + " us one way (" + std::to_string(p.lat_bytes) +
                   " B ping-pong, round " + std::to_string(p.round) + ")";
    bw->message = Fixed(p.bandwidth_gbps, 3) + " GB/s (" + FormatSize(p.bw_bytes) +
                  " ping-pong, data checked)";
  } else {
    lat->outcome = bw->outcome = Outcome::kFail;
    lat->state = bw->state = "failed";
    lat->message = bw->message =
        f.nodes[p.rank] + "'s side: " + p.error + (link_blame.empty() ? "" : "; " + link_blame);
  }
  nlohmann::json ev = {
      {"round", p.round}, {"iters", p.iters}, {"lat_bytes", p.lat_bytes}, {"bw_bytes", p.bw_bytes}};
  lat->evidence = bw->evidence = ev;
}

// The pair's results when it has no probe line: a blamed link fails, a job
// stopped after its launch has suspects and unreached pairs, else the
// whole job's reason.
void JudgeMissingPair(const MpiRunFacts& f, const MissingResults& m, const RoundProgress& progress,
                      size_t round, const std::string& link_blame, PairResult* lat,
                      PairResult* bw) {
  if (!link_blame.empty()) {
    lat->outcome = bw->outcome = Outcome::kFail;
    lat->state = bw->state = "failed";
    lat->message = bw->message = link_blame;
  } else if (progress.known) {
    MarkUnreported(progress, round, f, lat);
    MarkUnreported(progress, round, f, bw);
  } else if (!f.hung && f.exit_code != 0 && m.all_hello && m.launch_blamed.empty() &&
             m.blamed_all.empty()) {
    // Every rank started and nothing was blamed: the job ended (a rank that
    // saw a failure aborts it, exit 3) before this pair's line came, and
    // Open MPI drops what the killed ranks had not yet forwarded. Unknown,
    // not failed: seen at 256 simulated nodes, where 14 such pairs passed
    // on the relaunch and were wrongly called flaky.
    lat->outcome = bw->outcome = Outcome::kError;
    lat->state = bw->state = "unreported";
    lat->message = bw->message = "not reported: " + m.ended + " before this pair's result came";
  } else {
    lat->outcome = bw->outcome = m.outcome;
    lat->state = bw->state = f.hung ? "hang" : "not-run";
    lat->message = bw->message =
        m.Why(m.all_hello || !m.launch_blamed.empty() ? "not measured"
                                                      : "not measured (the launch failed)");
  }
}

void JudgePair(const MpiRunFacts& f, const MpiPairIndex& index, const MissingResults& m,
               const RoundProgress& progress, size_t round, int a, int b,
               std::vector<PairResult>* out) {
  PairResult lat;
  lat.stage = "mpi";
  lat.src = f.nodes[a];
  lat.dst = f.nodes[b];
  PairResult bw = lat;
  lat.check = "latency";
  lat.unit = "us";
  bw.check = "bandwidth";
  bw.unit = "GB/s";
  const std::string link_blame = LinkBlame(f.blames, lat.src, lat.dst);
  if (const MpiPairLine* p = index.Find(a, b)) {
    JudgePairLine(f, *p, link_blame, &lat, &bw);
  } else {
    JudgeMissingPair(f, m, progress, round, link_blame, &lat, &bw);
  }
  out->push_back(std::move(lat));
  out->push_back(std::move(bw));
}

}  // namespace

struct MpiPairJudge::State {
  State(const MpiRunFacts& facts)
      : f(facts), index(facts.output, static_cast<int>(facts.nodes.size())) {}
  const MpiRunFacts& f;
  MpiPairIndex index;
  MissingResults missing;
  std::vector<Round> rounds;
  RoundProgress progress;
};

MpiPairJudge::MpiPairJudge(const MpiRunFacts& f) : s_(std::make_unique<State>(f)) {
  const int n = static_cast<int>(f.nodes.size());
  s_->missing = MissingResultsOf(f);
  if (f.rounds.empty()) {
    std::vector<std::string> ranks;
    for (int i = 0; i < n; ++i) ranks.push_back(std::to_string(i));
    s_->rounds = RoundRobinRounds(ranks);
  } else {
    s_->rounds = f.rounds;
  }
  s_->progress = ProgressOf(f, s_->index, s_->rounds,
                            s_->missing.all_hello && s_->missing.launch_blamed.empty());
}

MpiPairJudge::~MpiPairJudge() = default;

size_t MpiPairJudge::rounds() const { return s_->rounds.size(); }

size_t MpiPairJudge::results() const {
  size_t n = 0;
  for (const Round& r : s_->rounds) n += 2 * r.size();
  return n;
}

std::vector<NodeResult> MpiPairJudge::Nodes() const {
  std::vector<NodeResult> out;
  for (int rank = 0; rank < static_cast<int>(s_->f.nodes.size()); ++rank) {
    out.push_back(LaunchResult(s_->f, rank, s_->missing));
    out.push_back(AllreduceResult(s_->f, rank, s_->missing));
  }
  return out;
}

std::vector<PairResult> MpiPairJudge::Pairs(size_t begin, size_t end) const {
  std::vector<PairResult> out;
  end = std::min(end, s_->rounds.size());
  for (size_t r = begin; r < end; ++r) {
    for (const auto& [sa, sb] : s_->rounds[r]) {
      JudgePair(s_->f, s_->index, s_->missing, s_->progress, r, std::stoi(sa), std::stoi(sb), &out);
    }
  }
  return out;
}

PairResult MpiPairJudge::At(size_t index) const {
  size_t skipped = 0;
  for (size_t r = 0; r < s_->rounds.size(); ++r) {
    const size_t here = 2 * s_->rounds[r].size();
    if (index < skipped + here) {
      const size_t k = (index - skipped) / 2;
      const auto& [sa, sb] = s_->rounds[r][k];
      std::vector<PairResult> two;
      JudgePair(s_->f, s_->index, s_->missing, s_->progress, r, std::stoi(sa), std::stoi(sb), &two);
      return std::move(two[(index - skipped) % 2]);
    }
    skipped += here;
  }
  PairResult none;
  none.stage = "mpi";
  none.outcome = Outcome::kError;
  none.message =
      "no pair result " + std::to_string(index) + " (there are " + std::to_string(skipped) + ")";
  return none;
}

MpiRunJudgement JudgeMpiRun(const MpiRunFacts& f) {
  MpiPairJudge judge(f);
  return {judge.Nodes(), judge.Pairs(0, judge.rounds())};
}

}  // namespace cc
