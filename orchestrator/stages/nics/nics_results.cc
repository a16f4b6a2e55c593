#include "orchestrator/stages/nics/nics_results.h"

#include "orchestrator/stages/nics/nic_recommend.h"

namespace cc {

using Json = nlohmann::json;

namespace {

const SubnetJudgement* FindSubnet(const NicSelection& s, const std::string& cidr) {
  for (const SubnetJudgement& j : s.subnets) {
    if (j.cidr == cidr) return &j;
  }
  return nullptr;
}

// The "duplicate" problem of src or dst on the subnet, if any: a probe of
// a shared address is answered by whichever node wins ARP, so it tells
// nothing about the pair (the node results name the duplicate).
const NicProblem* SharedAddress(const SubnetJudgement& j, const std::string& src,
                                const std::string& dst) {
  for (const NicProblem& p : j.problems) {
    if (p.kind == "duplicate" && (p.node == src || p.node == dst)) return &p;
  }
  return nullptr;
}

}  // namespace

NicProbe ProbeFromAgent(const std::string& src, const Json& a,
                        const std::map<std::string, std::string>& node_of_token) {
  NicProbe p;
  p.src = src;
  p.dst = a.value("node", "");
  p.subnet = a.value("subnet", "");
  p.addr = a.value("addr", "");
  p.tcp_state = a.value("state", "");
  if (p.tcp_state == "open") {
    p.answered_by = p.dst;
  } else if (p.tcp_state == "open-other") {
    auto it = node_of_token.find(a.value("reply", ""));
    if (it != node_of_token.end()) p.answered_by = it->second;
  }
  p.mtu_bytes = a.value("mtu_bytes", 0);
  p.mtu_state = a.value("mtu_state", "");
  std::string note = a.value("note", "");
  std::string mtu_note = a.value("mtu_note", "");
  if (!mtu_note.empty()) note += (note.empty() ? "" : "; ") + mtu_note;
  p.note = note;
  return p;
}

std::vector<PairResult> NicsPairResults(const std::vector<NicProbe>& probes,
                                        const NicSelection& s) {
  std::vector<PairResult> out;
  for (const NicProbe& p : probes) {
    const SubnetJudgement* j = FindSubnet(s, p.subnet);
    bool chosen = s.subnet && *s.subnet == p.subnet;
    bool excluded = j != nullptr && !j->excluded.empty();
    const NicProblem* shared = j == nullptr ? nullptr : SharedAddress(*j, p.src, p.dst);
    Outcome bad = chosen ? Outcome::kFail : Outcome::kWarn;
    PairResult r;
    r.stage = "nics";
    r.src = p.src;
    r.dst = p.dst;
    r.evidence = {{"subnet", p.subnet},           {"addr", p.addr},
                  {"src_nic", p.src_nic},         {"dst_nic", p.dst_nic},
                  {"answered_by", p.answered_by}, {"note", p.note}};
    r.check = "tcp:" + p.subnet;
    r.state = p.tcp_state;
    bool reached = p.tcp_state == "open" && p.answered_by == p.dst;
    r.outcome = excluded || shared ? Outcome::kSkip : reached ? Outcome::kPass : bad;
    r.message = excluded  ? "excluded: " + j->excluded
                : shared  ? "untested: " + shared->message
                : reached ? p.dst + " answered at " + p.addr
                          : p.dst + " at " + p.addr + ": " + p.tcp_state +
                                (p.answered_by.empty() ? "" : ", answered by " + p.answered_by);
    out.push_back(r);
    if (p.mtu_bytes <= 0) continue;
    r.check = "mtu:" + p.subnet;
    r.state = p.mtu_state;
    r.value = p.mtu_bytes;
    r.unit = "bytes";
    bool ok = p.mtu_state == "ok";
    // Where TCP did not get through, the datagrams prove nothing about the
    // MTU: the pair's fault is already the tcp result.
    r.outcome = excluded || shared || !reached ? Outcome::kSkip : ok ? Outcome::kPass : bad;
    r.message = excluded   ? "excluded: " + j->excluded
                : shared   ? "untested: " + shared->message
                : !reached ? "untested: " + p.dst + " not reached over tcp"
                : ok       ? std::to_string(p.mtu_bytes) + "-byte DF datagrams pass"
                           : std::to_string(p.mtu_bytes) + "-byte DF datagrams: " + p.mtu_state +
                           (p.note.empty() ? "" : " (" + p.note + ")");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<NodeResult> NicsNodeResults(const std::vector<std::string>& nodes,
                                        const NicSelection& s) {
  std::vector<NodeResult> out;
  const SubnetJudgement* chosen = s.subnet ? FindSubnet(s, *s.subnet) : nullptr;
  for (const std::string& n : nodes) {
    if (chosen == nullptr) break;
    Outcome o = Outcome::kPass;
    std::string msg;
    std::string next;
    Json problems = Json::array();
    for (const NicProblem& p : chosen->problems) {
      if (p.node != n) continue;
      o = Worse(o, p.outcome);
      msg += (msg.empty() ? "" : "; ") + p.message;
      if (!p.next_step.empty()) next += (next.empty() ? "" : "; ") + p.next_step;
      problems.push_back(
          {{"kind", p.kind}, {"nic", p.nic}, {"message", p.message}, {"next_step", p.next_step}});
    }
    auto nic = s.nic_of.find(n);
    auto addr = s.address_of.find(n);
    std::string where = nic == s.nic_of.end() ? "" : nic->second + " " + addr->second;
    if (msg.empty()) msg = n + ": " + where + " on " + *s.subnet;
    Json evidence = {{"subnet", *s.subnet}, {"problems", problems}};
    if (!next.empty()) evidence["next_step"] = next;
    out.push_back(NodeCheck("nics", n, "selected", o, msg, std::move(evidence), where));
  }
  for (const NicProblem& p : s.ib_problems) {
    out.push_back(NodeCheck("nics", p.node, "ib:" + p.nic, p.outcome, p.message));
  }
  for (const SubnetJudgement& j : s.subnets) {
    if (j.excluded.empty()) continue;
    out.push_back(NodeCheck("nics", "*", "excluded:" + j.cidr, Outcome::kSkip,
                            j.cidr + " " + j.excluded,
                            {{"nodes", j.nodes}, {"kind", j.exclusion_kind}}, j.exclusion_kind));
  }
  std::string lines;
  for (const std::string& l : EnvLines(s)) lines += (lines.empty() ? "" : "\n") + l;
  out.push_back(
      NodeCheck("nics", "*", "recommendation", s.subnet ? Outcome::kPass : Outcome::kFail,
                s.subnet ? s.reason + "\n" + lines : "no network to recommend: " + s.reason,
                SelectionJson(s), s.socket_ifname));
  return out;
}

std::vector<Verdict> NicsCauses(const NicSelection& s) {
  static const std::map<std::string, std::string> kCauseKind = {
      {"missing", "address-missing"},     {"prefix", "wrong-prefix"}, {"subnet", "wrong-subnet"},
      {"duplicate", "duplicate-address"}, {"down", "link-down"},      {"mtu", "mtu"}};
  std::vector<Verdict> out;
  const SubnetJudgement* chosen = s.subnet ? FindSubnet(s, *s.subnet) : nullptr;
  if (chosen == nullptr) return out;
  size_t duplicate = SIZE_MAX;  // its index in `out`: one cause for every sharer
  for (const NicProblem& p : chosen->problems) {
    auto kind = kCauseKind.find(p.kind);
    if (kind == kCauseKind.end() || p.outcome != Outcome::kFail) continue;
    if (kind->second == "duplicate-address" && duplicate != SIZE_MAX) {
      Verdict& d = out[duplicate];
      d.nodes.push_back(p.node);
      if (d.next_step.find(p.next_step) == std::string::npos) d.next_step += "; " + p.next_step;
      continue;
    }
    Verdict v;
    v.kind = kind->second;
    v.stage = "nics";
    v.check = "selected";
    v.nodes = {p.node};
    v.summary = p.message;
    v.next_step = p.next_step;
    v.evidence = {{"subnet", *s.subnet}, {"nic", p.nic}};
    v.cause = CauseScope::kNode;
    if (v.kind == "duplicate-address") duplicate = out.size();
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace cc
