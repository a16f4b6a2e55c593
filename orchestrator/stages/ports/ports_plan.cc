#include "orchestrator/stages/ports/ports_plan.h"

#include <algorithm>

#include "orchestrator/inventory/stage_settings.h"
#include "orchestrator/stages/ports/probe_plan.h"

namespace cc {

using Json = nlohmann::json;

namespace {

constexpr int kMaxEphemeralSamples = 64;  // the agent's own cap

Result<std::vector<int>> ExpandPorts(const Json& list) {
  std::set<int> ports;
  for (const Json& item : list) {
    int lo = 0, hi = 0;
    if (item.is_number_integer()) {
      lo = hi = item.get<int>();
      if (lo < 1 || lo > 65535) {
        return Status::BadInventory("stages.ports.ports: port " + std::to_string(lo) +
                                    " is outside 1..65535");
      }
    } else if (item.is_string()) {
      auto r = ParsePortRange(item.get<std::string>());
      if (!r.ok()) return Status::BadInventory("stages.ports.ports: " + r.status().message());
      lo = r->first;
      hi = r->second;
    } else {
      return Status::BadInventory("stages.ports.ports: expected ports or \"lo-hi\" ranges, got " +
                                  item.dump());
    }
    if (hi - lo + 1 > kMaxListedPorts) hi = lo + kMaxListedPorts;  // fails below
    for (int p = lo; p <= hi; ++p) ports.insert(p);
    if (static_cast<int>(ports.size()) > kMaxListedPorts) {
      return Status::BadInventory(
          "stages.ports.ports: more than " + std::to_string(kMaxListedPorts) +
          " ports after expanding ranges; every node pair probes each one, so list the ports a "
          "job needs (a range of NCCL/MPI ports, not 1-65535); ephemeral_samples covers the "
          "ephemeral range");
    }
  }
  return std::vector<int>(ports.begin(), ports.end());
}

int IntOr(const Json& s, const char* key, int fallback) {
  return s.contains(key) && s[key].is_number_integer() ? s[key].get<int>() : fallback;
}

}  // namespace

Result<PortsSettings> ReadPortsSettings(const Json& settings) {
  PortsSettings out;
  if (!settings.is_object()) return out;
  if (settings.contains("ports")) {
    if (!settings["ports"].is_array()) {
      return Status::BadInventory("stages.ports.ports: expected an array");
    }
    auto ports = ExpandPorts(settings["ports"]);
    if (!ports.ok()) return ports.status();
    out.ports = *ports;
  }
  out.ephemeral_samples = IntOr(settings, "ephemeral_samples", out.ephemeral_samples);
  out.timeout_ms = IntOr(settings, "timeout_ms", out.timeout_ms);
  out.parallel = IntOr(settings, "parallel", out.parallel);
  out.senders_per_receiver = IntOr(settings, "senders_per_receiver", out.senders_per_receiver);
  if (out.ephemeral_samples < 0 || out.ephemeral_samples > kMaxEphemeralSamples) {
    return Status::BadInventory("stages.ports.ephemeral_samples: expected 0.." +
                                std::to_string(kMaxEphemeralSamples));
  }
  if (out.timeout_ms < 1 || out.parallel < 1 || out.senders_per_receiver < 1) {
    return Status::BadInventory(
        "stages.ports: timeout_ms, parallel and senders_per_receiver must be >= 1");
  }
  return out;
}

const char* PortKindName(PortKind k) {
  switch (k) {
    case PortKind::kSsh:
      return "ssh";
    case PortKind::kListed:
      return "listed";
    case PortKind::kEphemeral:
      return "ephemeral";
  }
  return "listed";
}

Status ParseListening(const Json& d, ReceiverInfo* info) {
  auto bad = [](const std::string& what) {
    return Status::Protocol("ports: agent's \"listening\" has " + what);
  };
  if (!d.is_object()) return bad("no object");
  auto port_of = [](const Json& v, int* p) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 65535) return false;
    *p = v.get<int>();
    return true;
  };
  int p = 0;
  for (const Json& v : d.value("bound", Json::array())) {
    if (!port_of(v, &p)) return bad("a bad bound port " + v.dump());
    info->bound.insert(p);
  }
  for (const Json& v : d.value("in_use", Json::array())) {
    if (!v.is_object() || !port_of(v.value("port", Json()), &p)) {
      return bad("a bad in_use entry " + v.dump());
    }
    info->bind_errors[p] = v.value("error", std::string("could not bind"));
  }
  for (const Json& v : d.value("ephemeral_sample", Json::array())) {
    if (!port_of(v, &p)) return bad("a bad ephemeral port " + v.dump());
    info->ephemeral.push_back(p);
  }
  const Json& r = d.value("ephemeral_range", Json());
  int lo = 0, hi = 0;
  if (r.is_array() && r.size() == 2 && port_of(r[0], &lo) && port_of(r[1], &hi)) {
    info->ephemeral_range = std::make_pair(lo, hi);
  }
  return Status::Ok();
}

std::vector<int> ListenPorts(const std::vector<int>& listed, std::optional<int> ssh_port) {
  std::vector<int> out;
  for (int p : listed) {
    if (!ssh_port || p != *ssh_port) out.push_back(p);
  }
  return out;
}

std::vector<PlannedProbe> PlanProbes(const std::vector<std::string>& senders,
                                     const std::vector<ReceiverInfo>& receivers,
                                     const std::vector<int>& listed) {
  ProbePlan plan(senders, receivers, listed);
  std::vector<PlannedProbe> out;
  out.reserve(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) out.push_back(plan.At(i));
  return out;
}

std::map<std::string, std::vector<size_t>> BatchProbes(
    const ProbePlan& plan,
    const std::vector<std::vector<std::pair<std::string, std::string>>>& rounds, size_t first,
    size_t count, const std::set<std::string>& skip) {
  std::map<std::string, std::vector<size_t>> out;
  for (size_t r = first; r < first + count && r < rounds.size(); ++r) {
    for (const auto& [a, b] : rounds[r]) {
      if (skip.count(a) || skip.count(b)) continue;
      for (const auto& [src, dst] : {std::pair{a, b}, std::pair{b, a}}) {
        auto [lo, hi] = plan.Range(src, dst);
        if (lo == hi) continue;
        auto& v = out[src];
        for (size_t i = lo; i < hi; ++i) v.push_back(i);
      }
    }
  }
  return out;
}

namespace {

std::string Where(const PlannedProbe& p) { return p.addr + ":" + std::to_string(p.port); }

std::string WithNote(std::string m, const std::string& note) {
  return note.empty() ? m : m + " (" + note + ")";
}

// The ssh port is held by its expected owner, sshd: its banner
// ("SSH-2.0-...") is the answer that counts as open. A port that answers
// something else is held by an unexpected process. No line at all is still
// open: sshd drops unauthenticated connections past its MaxStartups, and a
// connect that succeeded proves the path.
ProbeJudgement JudgeSsh(const PlannedProbe& p, const std::string& reply, const std::string& note) {
  if (reply.rfind("SSH-", 0) == 0)
    return {"open", Outcome::kPass, "sshd answered \"" + reply + "\""};
  if (reply.empty()) {
    return {"open", Outcome::kPass,
            WithNote("connected to sshd's port; no banner came back", note)};
  }
  return {"in-use", Outcome::kWarn,
          Where(p) + " is " + p.dst + "'s ssh port, but it answers \"" + reply +
              "\", not an SSH banner: another process holds it"};
}

}  // namespace

ProbeJudgement JudgeProbe(const PlannedProbe& p, const std::string& agent_state,
                          const std::string& reply, const std::string& note,
                          const std::map<std::string, std::string>& tokens) {
  const bool in_use = p.plain && !p.bind_error.empty();
  const std::string quoted = reply.empty() ? "" : " answering \"" + reply + "\"";
  if (agent_state == "open") return {"open", Outcome::kPass, ""};
  if (agent_state == "open-other") {
    if (p.kind == PortKind::kSsh) return JudgeSsh(p, reply, note);
    if (in_use) {
      return {"in-use", Outcome::kWarn,
              p.dst + " could not listen on tcp/" + std::to_string(p.port) + " (" + p.bind_error +
                  "): another process holds it; a plain connect reached it" + quoted +
                  ". A job that listens there on " + p.dst + " would fail"};
    }
    if (reply.empty()) {
      // Something at an address:port we hold accepted and stayed silent:
      // almost always our own listener, too slow to answer on a loaded node.
      return {"open", Outcome::kWarn,
              WithNote("connected to " + Where(p) + ", but no token came back in time", note)};
    }
    for (const auto& [node, token] : tokens) {
      if (node != p.dst && reply == token) {
        return {"wrong-host", Outcome::kFail,
                Where(p) + " is answered by " + node + "'s listener, not " + p.dst +
                    "'s: that address leads to another node (duplicate address or NAT?)"};
      }
    }
    return {"in-use", Outcome::kWarn,
            WithNote("connected to " + Where(p) + " but not to our listener" + quoted, note)};
  }
  if (agent_state == "refused" && in_use && p.bind_error.rfind("EADDRINUSE", 0) != 0) {
    // Nothing of ours listened, so a refusal says nothing about firewalls.
    return {"error", Outcome::kError,
            p.dst + " could not listen on tcp/" + std::to_string(p.port) + " (" + p.bind_error +
                "), so it could not be tested"};
  }
  if (agent_state == "refused") {
    std::string why = p.kind == PortKind::kSsh ? "no sshd there, or a REJECT rule"
                      : in_use                 ? "the process holding it refuses, or a REJECT rule"
                                               : "a REJECT rule: our listener was up";
    return {"refused", Outcome::kFail, Where(p) + " refused the connection (" + why + ")"};
  }
  if (agent_state == "filtered") {
    return {"filtered", Outcome::kFail,
            WithNote(Where(p) + " did not answer: dropped on the way", note)};
  }
  if (agent_state == "unreachable") {
    return {"unreachable", Outcome::kFail, WithNote(Where(p) + " is unreachable", note)};
  }
  return {"error", Outcome::kError,
          WithNote("could not be tested (agent state '" + agent_state + "')", note)};
}

size_t PortsPerPair(const PortsSettings& s, std::optional<int> ssh_port) {
  return ListenPorts(s.ports, ssh_port).size() + (ssh_port ? 1 : 0) +
         static_cast<size_t>(std::max(0, s.ephemeral_samples));
}

PortsEstimate EstimatePorts(const PortsSettings& s, std::optional<int> ssh_port, size_t rounds) {
  // Measured on simulated nodes: a batch's agent round trip (start the
  // probes, read the answers) and one open port answering.
  constexpr double kBatchS = 1.0;
  constexpr double kConnectS = 0.01;
  PortsEstimate e;
  e.ports_per_pair = PortsPerPair(s, ssh_port);
  if (rounds == 0) return e;
  const size_t window = static_cast<size_t>(std::max(1, s.senders_per_receiver));
  e.batches = (rounds + window - 1) / window;
  const size_t per_sender = std::min(window, rounds) * e.ports_per_pair;
  const size_t parallel = static_cast<size_t>(std::max(1, s.parallel));
  const double waves = static_cast<double>((per_sender + parallel - 1) / parallel);
  e.healthy_s = 1 + static_cast<double>(e.batches) * (kBatchS + waves * kConnectS);
  e.worst_s = 1 + static_cast<double>(e.batches) * (kBatchS + waves * s.timeout_ms / 1000.0);
  return e;
}

long long ProbePhaseMs(size_t targets, int parallel, int timeout_ms) {
  long long p = std::max(1, parallel);
  long long rounds = (static_cast<long long>(targets) + p - 1) / p;
  // Slack: name resolution, writing results, a slow link for the control
  // lines. Never less than a few seconds.
  return std::max<long long>(1, rounds) * std::max(1, timeout_ms) + 10000;
}

}  // namespace cc
