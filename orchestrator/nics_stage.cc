// `nics`: which network NCCL and MPI should use, with evidence (DESIGN.md
// step 5, issue 6). From every usable node's facts (network and rdma
// sections; asked for here when the facts stage did not run), in three
// phases over the agents (agent/nics_command.cc):
//   1. `nics`: each node listens on every routable address it has (a TCP
//      token listener and a UDP echo, free ports);
//   2. `probe`: every node probes every peer's address on each subnet they
//      share: TCP with token check, then DF datagrams of the subnet's MTU;
//   3. `stop`.
// Then the pure judgement (nic_select.h), results (nics_results.h), the
// selection in the run's meta ("nics") and for later stages:
// ctx.Select("nccl_env"), ("mpi_mca") and ("addresses", node -> address).
#include <cstdio>

#include "orchestrator/agent_wait.h"
#include "orchestrator/nic_local.h"
#include "orchestrator/nic_recommend.h"
#include "orchestrator/nic_select.h"
#include "orchestrator/nics_results.h"
#include "orchestrator/stages_decl.h"

namespace cc {
namespace {

constexpr double kListenTimeoutS = 30;
constexpr double kStopTimeoutS = 15;
constexpr double kFactsTimeoutS = 60;
constexpr int kDefaultTimeoutMs = 1000;
constexpr int kDfTries = 3;
// Tried first on every address of every node (a free one when taken).
constexpr int kDefaultPort = 29400;

struct Peer {
  NodeState* state = nullptr;
  std::string name;
  NodeNics nics;
  std::string facts_error;  // why there are no facts ("" when there are)
  int64_t id = -1;
  Status listen;
  std::map<std::string, Json> endpoint;  // addr -> {tcp_port, udp_port, error}
  Json targets = Json::array();
  Status probe;
  std::vector<Json> answers;
  Status stop;
};

class NicsStage : public Stage {
 public:
  std::string name() const override { return "nics"; }

  Status Run(StageContext& ctx) override {
    const Json settings = ctx.inventory().StageSettings("nics");
    timeout_ms_ = settings.value("timeout_ms", kDefaultTimeoutMs);
    mtu_probe_ = settings.value("mtu_probe", true);
    port_ = settings.value("port", kDefaultPort);
    std::vector<NodeState*> usable = ctx.fleet().Usable();
    std::string skip;
    if (ctx.inventory().transport == "local") {
      RecordLocal(ctx, usable);
      return Status::Ok();
    } else if (usable.size() < 2) {
      skip = "the nics stage needs at least two usable nodes";
    }
    if (!skip.empty()) {
      for (NodeState* s : usable) Record(ctx, s->node->name, "selected", Outcome::kSkip, skip);
      return Status::Ok();
    }
    for (NodeState* s : usable) {
      peers_.push_back(Peer{});
      peers_.back().state = s;
      peers_.back().name = s->node->name;
      by_name_[s->node->name] = peers_.size() - 1;
    }
    ctx.progress().StartStage("nics", static_cast<long long>(peers_.size()) * 3, "steps");
    run_token_ = std::to_string(ctx.run_id()) + "-" + std::to_string(Clock::now().time_since_epoch().count() % 1000000007);
    for (Peer& p : peers_) {
      std::string t = "clustercheck-nics " + run_token_ + " " + p.name;
      tokens_[p.name] = t;
      node_of_token_[t] = p.name;
    }
    Listen(ctx);
    Plan();
    Probe(ctx);
    Stop(ctx);
    ctx.progress().FinishStage();
    Judge(ctx);
    return Status::Ok();
  }

 private:
  static void Record(StageContext& ctx, const std::string& node, const std::string& check,
                     Outcome o, const std::string& message) {
    ctx.Record(NodeCheck("nics", node, check, o, message));
  }

  // Local transport: every node is this host and there is no network
  // between them, so the first node lists this host's interfaces and what
  // it would pick (nic_local.h); the others say why they have nothing more.
  void RecordLocal(StageContext& ctx, const std::vector<NodeState*>& usable) {
    if (usable.empty()) return;
    peers_.push_back(Peer{});
    Peer& p = peers_.back();
    p.state = usable[0];
    p.name = usable[0]->node->name;
    LoadFacts(ctx, p, ctx.facts());
    LocalNics local = DescribeLocalNics(p.nics);
    if (!p.facts_error.empty()) {
      Record(ctx, p.name, "interfaces", Outcome::kError, p.facts_error);
    } else {
      std::string list;
      for (const auto& line : local.interfaces) list += (list.empty() ? "" : "; ") + line;
      Record(ctx, p.name, "interfaces", Outcome::kPass, list.empty() ? "no interfaces but loopback" : list);
    }
    Record(ctx, p.name, "selected", Outcome::kSkip,
           "one machine, no network between nodes to probe: " + local.summary);
    for (size_t i = 1; i < usable.size(); ++i) {
      Record(ctx, usable[i]->node->name, "selected", Outcome::kSkip,
             "local transport: the same host as " + p.name);
    }
  }

  // Facts from the facts stage, or asked for now (network and rdma only).
  void LoadFacts(StageContext& ctx, Peer& p, const std::map<std::string, Json>& facts) {
    auto it = facts.find(p.name);
    Json f = it == facts.end() ? Json() : it->second;
    if (!f.is_object() || !f.contains("network")) {
      auto call = p.state->agent->Call("facts", {{"sections", {"network", "rdma"}}},
                                       Deadline::InSeconds(kFactsTimeoutS));
      if (call.ok()) f = call->Find("facts");
      if (!call.ok()) p.facts_error = "no network facts: " + call.status().ToString();
    }
    p.nics = NodeNicsFromFacts(p.name, f);
  }

  void Listen(StageContext& ctx) {
    const std::map<std::string, Json> facts = ctx.facts();
    double hold_s = kListenTimeoutS + kStopTimeoutS + 120 +
                    static_cast<double>(peers_.size()) * 8 * timeout_ms_ * (1 + kDfTries) / 1000.0;
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto it = by_name_.find(s.node->name);
      if (it == by_name_.end()) return;
      Peer& p = peers_[it->second];
      LoadFacts(ctx, p, facts);
      Json addrs = Json::array();
      for (const NicInfo& n : p.nics.nics) {
        for (const std::string& a : n.addresses) {
          if (SubnetOf(a)) addrs.push_back({{"nic", n.name}, {"addr", AddressPart(a)}});
        }
      }
      Deadline d = Deadline::InSeconds(kListenTimeoutS);
      auto id = s.agent->Send("nics", {{"addresses", addrs}, {"token", tokens_[p.name]},
                                       {"hold_s", hold_s}, {"port", port_}}, d);
      if (!id.ok()) {
        p.listen = id.status();
      } else {
        p.id = *id;
        std::vector<Json> got;
        p.listen = WaitForResult(*s.agent, p.id, "listening", d, false, &got);
        if (p.listen.ok()) {
          for (const Json& l : got.at(0).value("listeners", Json::array())) {
            if (l.is_object()) p.endpoint[l.value("addr", "")] = l;
          }
        }
      }
      ctx.progress().Advance();
    });
  }

  void Plan() {
    nodes_.clear();
    for (const Peer& p : peers_) nodes_.push_back(p.nics);
    subnets_ = GroupBySubnet(nodes_);
    for (const Subnet& s : subnets_) {
      std::vector<long long> mtus;
      for (const SubnetMember& m : s.members) {
        if (m.nic->mtu) mtus.push_back(*m.nic->mtu);
      }
      auto mtu = MostCommonValue(mtus);
      for (const SubnetMember& src : s.members) {
        Peer& from = peers_[by_name_[src.node]];
        if (!from.listen.ok()) continue;
        for (const SubnetMember& dst : s.members) {
          if (dst.node == src.node) continue;
          const Peer& to = peers_[by_name_[dst.node]];
          auto ep = to.endpoint.find(dst.addr);
          Json t = {{"node", dst.node}, {"subnet", s.cidr}, {"addr", dst.addr},
                    {"src_nic", src.nic->name}, {"dst_nic", dst.nic->name},
                    {"tcp_port", 0}, {"udp_port", 0}, {"mtu_bytes", 0}};
          if (ep != to.endpoint.end() && ep->second.value("error", "").empty()) {
            t["tcp_port"] = ep->second.value("tcp_port", 0);
            t["udp_port"] = ep->second.value("udp_port", 0);
            if (mtu_probe_ && mtu) t["mtu_bytes"] = *mtu;
          }
          from.targets.push_back(t);
        }
      }
    }
  }

  void Probe(StageContext& ctx) {
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto it = by_name_.find(s.node->name);
      if (it == by_name_.end()) return;
      Peer& p = peers_[it->second];
      ctx.progress().Advance();
      if (!p.listen.ok()) return;
      // A target whose receiver did not listen there is not sent: its
      // result says why (below).
      Json send = Json::array();
      for (const Json& t : p.targets) {
        if (t["tcp_port"].get<int>() > 0) send.push_back(t);
      }
      double budget_ms = 10000 + static_cast<double>(send.size()) * timeout_ms_ / 64 +
                         static_cast<double>(timeout_ms_) * (1 + kDfTries);
      Deadline d = Deadline::In(Millis(static_cast<long long>(budget_ms)));
      p.probe = s.agent->SendControl(p.id, "probe",
                                     {{"targets", send}, {"tokens", Json(tokens_)},
                                      {"timeout_ms", timeout_ms_}, {"tries", kDfTries},
                                      {"parallel", 64}}, d);
      std::vector<Json> got;
      if (p.probe.ok()) p.probe = WaitForResult(*s.agent, p.id, "probes", d, true, &got);
      p.answers = std::move(got);
    });
  }

  void Stop(StageContext& ctx) {
    for (Peer& p : peers_) {
      if (p.id >= 0) {
        p.stop = p.state->agent->SendControl(p.id, "stop", Json::object(),
                                             Deadline::InSeconds(kStopTimeoutS));
      }
    }
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto it = by_name_.find(s.node->name);
      if (it == by_name_.end()) return;
      Peer& p = peers_[it->second];
      if (p.id >= 0 && p.stop.ok()) {
        std::vector<Json> unused;
        Deadline d = Deadline::InSeconds(kStopTimeoutS);
        p.stop = WaitForResult(*s.agent, p.id, "stopped", d, false, &unused);
        if (p.stop.ok()) p.stop = WaitForEnd(*s.agent, p.id, d);
      }
      ctx.progress().Advance();
    });
  }

  // Every planned target becomes a NicProbe: the agent's answer, or an
  // error saying why there is none.
  std::vector<NicProbe> Probes() const {
    std::vector<NicProbe> out;
    for (const Peer& p : peers_) {
      std::map<std::pair<std::string, std::string>, const Json*> answer;  // (node, addr)
      for (const Json& a : p.answers) answer[{a.value("node", ""), a.value("addr", "")}] = &a;
      for (const Json& t : p.targets) {
        std::string dst = t["node"], addr = t["addr"];
        auto it = answer.find({dst, addr});
        NicProbe np;
        if (it != answer.end()) np = ProbeFromAgent(p.name, *it->second, node_of_token_);
        np.src_nic = t["src_nic"];
        np.dst_nic = t["dst_nic"];
        if (it != answer.end()) {
          out.push_back(np);
          continue;
        }
        np.src = p.name;
        np.dst = dst;
        np.subnet = t["subnet"];
        np.addr = addr;
        np.tcp_state = "error";
        const Peer& to = peers_[by_name_.at(dst)];
        auto ep = to.endpoint.find(addr);
        np.note = !p.listen.ok()  ? p.name + "'s agent did not start: " + p.listen.ToString()
                  : !p.probe.ok() ? p.name + "'s agent did not report: " + p.probe.ToString()
                  : !to.listen.ok() ? dst + "'s agent did not listen: " + to.listen.ToString()
                  : ep == to.endpoint.end() ? dst + " did not listen on " + addr
                                            : dst + " could not listen on " + addr + ": " +
                                                  ep->second.value("error", std::string("?"));
        out.push_back(np);
      }
    }
    return out;
  }

  void Judge(StageContext& ctx) {
    std::vector<NicProbe> probes = Probes();
    NicSelection sel = SelectNics(nodes_, probes);
    ctx.Record(NicsPairResults(probes, sel));
    std::vector<std::string> names;
    for (const Peer& p : peers_) {
      names.push_back(p.name);
      if (!p.facts_error.empty()) Record(ctx, p.name, "facts", Outcome::kError, p.facts_error);
      if (!p.stop.ok() && p.listen.ok()) {
        Record(ctx, p.name, "stop", Outcome::kError,
               "stop not confirmed (" + p.stop.ToString() +
                   "): its listeners close when the agent exits at the end of the run");
      }
    }
    for (NodeResult& r : NicsNodeResults(names, sel)) ctx.Record(std::move(r));
    Json stored = SelectionJson(sel);
    Status s = ctx.store().SetRunMeta(ctx.run_id(), "nics", stored);
    if (!s.ok()) ctx.progress().Note("nics: selection not stored: " + s.ToString());
    if (sel.subnet) {
      ctx.Select("nccl_env", {{"NCCL_SOCKET_IFNAME", sel.socket_ifname},
                              {"NCCL_IB_HCA", sel.ib_hca},
                              {"NCCL_IB_GID_INDEX", sel.ib_gid_index
                                                        ? Json(std::to_string(*sel.ib_gid_index))
                                                        : Json("")}});
      ctx.Select("mpi_mca", {{"btl_tcp_if_include", sel.tcp_if_include},
                             {"oob_tcp_if_include", sel.tcp_if_include}});
      ctx.Select("addresses", Json(sel.address_of));
    }
    ctx.progress().Note("nics: " + (sel.subnet ? sel.reason : "nothing to recommend: " + sel.reason));
    for (const std::string& l : EnvLines(sel)) ctx.progress().Note("  " + l);
  }

  int timeout_ms_ = kDefaultTimeoutMs;
  bool mtu_probe_ = true;
  int port_ = kDefaultPort;
  std::string run_token_;
  std::vector<Peer> peers_;
  std::map<std::string, size_t> by_name_;
  std::map<std::string, std::string> tokens_;
  std::map<std::string, std::string> node_of_token_;
  std::vector<NodeNics> nodes_;
  std::vector<Subnet> subnets_;
};

}  // namespace

std::unique_ptr<Stage> MakeNicsStage() { return std::make_unique<NicsStage>(); }

}  // namespace cc
