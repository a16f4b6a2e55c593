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

RoundProgress ProgressOf(const MpiRunFacts& f, const std::vector<Round>& rounds, bool launched) {
  RoundProgress p;
  p.total = rounds.size();
  p.cap_stop = f.cap_stop;
  p.known = f.hung && launched && f.output.allreduce.size() == f.nodes.size();
  if (!p.known) return p;
  p.first_open = rounds.size();
  for (size_t r = 0; r < rounds.size() && p.first_open == rounds.size(); ++r) {
    for (const auto& [sa, sb] : rounds[r]) {
      if (!FindMpiPair(f.output, std::stoi(sa), std::stoi(sb))) {
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

}  // namespace

MpiRunJudgement JudgeMpiRun(const MpiRunFacts& f) {
  MpiRunJudgement j;
  const MpiProbeOutput& o = f.output;
  const int n = static_cast<int>(f.nodes.size());
  std::string blamed_all;  // every blame, for results no blame names
  for (const MpiBlame& b : f.blames) blamed_all += (blamed_all.empty() ? "" : "; ") + b.message;
  bool all_hello = static_cast<int>(o.hellos.size()) == n;
  std::string ended = f.hung
                          ? "mpirun was stopped at its deadline (" + Fixed(f.timeout_s, 0) + " s)"
                          : "mpirun exited " + std::to_string(f.exit_code);
  // Nodes named for a launch failure (a broken link is not one).
  std::vector<std::string> launch_blamed;
  for (const MpiBlame& b : f.blames) {
    if (b.kind == "tcp-connect") continue;
    for (const std::string& nd : b.nodes) {
      if (!o.hellos.count(RankOf(f.nodes, nd)) &&
          std::find(launch_blamed.begin(), launch_blamed.end(), nd) == launch_blamed.end()) {
        launch_blamed.push_back(nd);
      }
    }
  }
  // A result that never came: error when the launch failed on named nodes
  // (not tested; their "launch" says why), hang when mpirun was stopped at
  // its deadline, fail when Open MPI said why, else error.
  Outcome missing_outcome = !launch_blamed.empty() ? Outcome::kError
                            : f.hung               ? Outcome::kHang
                            : blamed_all.empty()   ? Outcome::kError
                                                   : Outcome::kFail;
  auto why_missing = [&](const std::string& what) {
    if (!launch_blamed.empty()) {
      return what + ": not run, the launch failed because of " + FoldHostlist(launch_blamed);
    }
    return what + ": " + ended + (blamed_all.empty() ? "" : "; " + blamed_all);
  };
  auto node_result = [&](const std::string& node, const std::string& check, Outcome oc,
                         std::string msg, nlohmann::json ev) {
    NodeResult r;
    r.node = node;
    r.stage = "mpi";
    r.check = check;
    r.outcome = oc;
    r.message = std::move(msg);
    r.evidence = std::move(ev);
    j.nodes.push_back(std::move(r));
  };
  for (int rank = 0; rank < n; ++rank) {
    const std::string& node = f.nodes[rank];
    auto h = o.hellos.find(rank);
    if (h != o.hellos.end()) {
      node_result(node, "launch", Outcome::kPass,
                  "rank " + std::to_string(rank) + " started on " + h->second.host,
                  {{"rank", rank}, {"host", h->second.host}, {"library", h->second.library}});
    } else {
      std::string mine;
      for (const MpiBlame& b : f.blames) {
        if (std::find(b.nodes.begin(), b.nodes.end(), node) != b.nodes.end() &&
            b.kind != "tcp-connect") {
          mine += (mine.empty() ? "" : "; ") + b.message;
        }
      }
      if (!mine.empty()) {
        node_result(node, "launch", Outcome::kFail, mine, {{"rank", rank}});
      } else if (!launch_blamed.empty()) {
        node_result(node, "launch", Outcome::kError,
                    "rank " + std::to_string(rank) +
                        " did not start: the launch failed because of " +
                        FoldHostlist(launch_blamed),
                    {{"rank", rank}});
      } else if (f.hung) {
        node_result(node, "launch", Outcome::kHang,
                    why_missing("rank " + std::to_string(rank) + " never started"),
                    {{"rank", rank}});
      } else {
        node_result(
            node, "launch", Outcome::kError,
            why_missing("rank " + std::to_string(rank) + " did not start (not named by Open MPI)"),
            {{"rank", rank}});
      }
    }
    auto a = o.allreduce.find(rank);
    if (a != o.allreduce.end()) {
      const MpiAllreduceLine& l = a->second;
      std::string msg = l.ok ? "MPI_Allreduce of " + std::to_string(l.bytes) + " bytes exact in " +
                                   Fixed(l.us, 0) + " us"
                        : !l.error.empty()
                            ? "MPI_Allreduce: " + l.error
                            : "MPI_Allreduce: " + std::to_string(l.mismatches) + " of " +
                                  std::to_string(l.bytes / 8) + " int64 sums wrong";
      node_result(node, "allreduce", l.ok ? Outcome::kPass : Outcome::kFail, msg,
                  {{"bytes", l.bytes}, {"us", l.us}, {"mismatches", l.mismatches}});
    } else {
      node_result(node, "allreduce", missing_outcome, why_missing("no MPI_Allreduce result"),
                  nlohmann::json::object());
    }
  }
  std::vector<std::string> ranks;
  for (int i = 0; i < n; ++i) ranks.push_back(std::to_string(i));
  const std::vector<Round> rounds = RoundRobinRounds(ranks);
  const RoundProgress progress = ProgressOf(f, rounds, all_hello && launch_blamed.empty());
  for (size_t r = 0; r < rounds.size(); ++r) {
    for (const auto& [sa, sb] : rounds[r]) {
      int a = std::stoi(sa), b = std::stoi(sb);
      PairResult base;
      base.stage = "mpi";
      base.src = f.nodes[a];
      base.dst = f.nodes[b];
      PairResult lat = base, bw = base;
      lat.check = "latency";
      lat.unit = "us";
      bw.check = "bandwidth";
      bw.unit = "GB/s";
      std::string link_blame;
      for (const MpiBlame& bl : f.blames) {
        if (bl.kind != "tcp-connect") continue;
        bool hit = (bl.peer == base.dst &&
                    std::find(bl.nodes.begin(), bl.nodes.end(), base.src) != bl.nodes.end()) ||
                   (bl.peer == base.src &&
                    std::find(bl.nodes.begin(), bl.nodes.end(), base.dst) != bl.nodes.end());
        if (hit) link_blame += (link_blame.empty() ? "" : "; ") + bl.message;
      }
      const MpiPairLine* p = FindMpiPair(o, a, b);
      if (p && p->ok) {
        lat.outcome = bw.outcome = Outcome::kPass;
        lat.state = bw.state = "ok";
        lat.value = p->latency_us;
        bw.value = p->bandwidth_gbps;
        lat.message = Fixed(p->latency_us, 1) + " us one way (" + std::to_string(p->lat_bytes) +
                      " B ping-pong, round " + std::to_string(p->round) + ")";
        bw.message = Fixed(p->bandwidth_gbps, 3) + " GB/s (" + FormatSize(p->bw_bytes) +
                     " ping-pong, data checked)";
      } else if (p) {
        lat.outcome = bw.outcome = Outcome::kFail;
        lat.state = bw.state = "failed";
        lat.message = bw.message = f.nodes[p->rank] + "'s side: " + p->error +
                                   (link_blame.empty() ? "" : "; " + link_blame);
      } else if (!link_blame.empty()) {
        lat.outcome = bw.outcome = Outcome::kFail;
        lat.state = bw.state = "failed";
        lat.message = bw.message = link_blame;
      } else if (progress.known) {
        MarkUnreported(progress, r, f, &lat);
        MarkUnreported(progress, r, f, &bw);
      } else {
        lat.outcome = bw.outcome = missing_outcome;
        lat.state = bw.state = f.hung ? "hang" : "not-run";
        lat.message = bw.message =
            why_missing(all_hello || !launch_blamed.empty() ? "not measured"
                                                            : "not measured (the launch failed)");
      }
      if (p) {
        nlohmann::json ev = {{"round", p->round},
                             {"iters", p->iters},
                             {"lat_bytes", p->lat_bytes},
                             {"bw_bytes", p->bw_bytes}};
        lat.evidence = bw.evidence = ev;
      }
      j.pairs.push_back(std::move(lat));
      j.pairs.push_back(std::move(bw));
    }
  }
  return j;
}

}  // namespace cc
