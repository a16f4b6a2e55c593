#include "orchestrator/stages/nccl/nccl_mpirun.h"

#include <map>

namespace cc {

using Json = nlohmann::json;

namespace {

constexpr size_t kTailLines = 8;

// The last few lines that are not the probe's, for a reason text.
std::string Tail(const std::vector<std::string>& other) {
  std::string out;
  size_t from = other.size() > kTailLines ? other.size() - kTailLines : 0;
  for (size_t i = from; i < other.size(); ++i) {
    if (other[i].find_first_not_of(" -\t") == std::string::npos) continue;
    out += (out.empty() ? "" : " | ") + other[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> NcclRankNodes(const std::vector<NcclMember*>& group) {
  std::vector<std::string> out;
  for (const NcclMember* m : group) {
    for (int g = 0; g < m->gpus; ++g) out.push_back(m->name);
  }
  return out;
}

Json NcclMpiRequest(const std::vector<NcclMember*>& group, const NcclSettings& s) {
  Json ranks = Json::array();
  for (const NcclMember* m : group) {
    Json env = Json::object();
    for (const auto& [k, v] : m->env) env[k] = v;
    for (int g = 0; g < m->gpus; ++g) {
      ranks.push_back({{"env", env}, {"library_paths", m->library_paths}, {"gpu", g}});
    }
  }
  Json request = {{"sizes", s.sizes},         {"iters", s.iters},
                  {"warmup", s.warmup},       {"check_iters", s.check_iters},
                  {"timeout_s", s.timeout_s}, {"ranks", ranks}};
  if (s.dtypes != std::vector<std::string>{"float"}) request["dtypes"] = s.dtypes;
  return request;
}

std::string NcclMpiHostfile(const std::vector<NcclMember*>& group,
                            const std::vector<std::string>& addresses, bool local) {
  std::string out =
      "# written by clustercheck's nccl stage: ranks fill each line's slots, "
      "one per GPU\n";
  if (local) {
    int total = 0;
    for (const NcclMember* m : group) total += m->gpus;
    return out + "localhost slots=" + std::to_string(total) + "\n";
  }
  for (size_t i = 0; i < group.size(); ++i) {
    out += "# " + group[i]->name + "\n" + addresses.at(i) +
           " slots=" + std::to_string(group[i]->gpus) + "\n";
  }
  return out;
}

std::vector<RankReport> ParseNcclMpirun(const std::vector<std::string>& rank_nodes,
                                        const NcclMpirunOutput& out) {
  std::vector<RankReport> reps(rank_nodes.size());
  std::vector<bool> hello(rank_nodes.size()), done(rank_nodes.size());
  std::vector<std::string> logs(rank_nodes.size());
  for (size_t r = 0; r < reps.size(); ++r) reps[r].node = rank_nodes[r];
  std::vector<std::string> other;
  for (const std::string& line : out.lines) {
    size_t at = line.find(kNcclMpiLinePrefix);
    Json m = at == std::string::npos
                 ? Json()
                 : Json::parse(line.substr(at + sizeof kNcclMpiLinePrefix - 1), nullptr, false);
    int rank = m.is_object() ? m.value("rank", -1) : -1;
    if (rank < 0 || rank >= static_cast<int>(reps.size())) {
      other.push_back(line);
      continue;
    }
    RankReport& rep = reps[static_cast<size_t>(rank)];
    std::string type = m.value("type", "");
    if (type == "hello") hello[static_cast<size_t>(rank)] = true;
    if (type != "result") continue;
    std::string name = m.value("name", "");
    Json data = m.value("data", Json::object());
    // NCCL's log arrives in parts (mpi/nccl_mpi_probe.cc says why), then
    // as an nccl_log result without its text.
    if (name == "nccl_log_part") {
      logs[static_cast<size_t>(rank)] += data.value("text", "");
      continue;
    }
    if (name == "nccl_log" && !data.contains("text") && data.contains("parts")) {
      data["text"] = logs[static_cast<size_t>(rank)];
    }
    if (AddNcclResult(name, data, &rep)) done[static_cast<size_t>(rank)] = true;
  }
  std::string said = Tail(other);
  std::string exit =
      "mpirun exited " + std::to_string(out.exit_code) + (said.empty() ? "" : ": " + said);
  for (size_t r = 0; r < reps.size(); ++r) {
    if (done[r]) continue;
    RankReport& rep = reps[r];
    std::string who = "rank " + std::to_string(r);
    if (out.hung) {
      rep.outcome = Outcome::kHang;
      rep.step = rep.sizes.empty() ? "init" : "run";
      rep.reason = who + " gave no outcome within mpirun's deadline (" +
                   std::to_string(static_cast<int>(out.timeout_s)) + " s); mpirun was killed";
    } else if (!hello[r]) {
      rep.outcome = Outcome::kError;
      rep.step = "launch";
      rep.reason = who + " never started; " + exit;
    } else {
      rep.outcome = Outcome::kFail;
      rep.step = "run";
      rep.reason = who + " ended without an outcome; " + exit;
    }
  }
  return reps;
}

}  // namespace cc
