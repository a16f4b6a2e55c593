#include "orchestrator/run/stage.h"

#include <algorithm>

namespace cc {

void StageContext::Record(NodeResult r) {
  r.run_id = run_id_;
  if (burnin_round_) r.round = burnin_round_->number;
  if (r.at.empty()) r.at = Iso8601Utc(fleet_.clock().WallNow());
  Status s = store_.AddNodeResult(r);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(r.outcome);
}

void StageContext::Record(PairResult r) {
  r.run_id = run_id_;
  if (burnin_round_) r.round = burnin_round_->number;
  if (r.at.empty()) r.at = Iso8601Utc(fleet_.clock().WallNow());
  Status s = store_.AddPairResult(r);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(r.outcome);
}

void StageContext::Record(std::vector<PairResult> rs) {
  std::string at = Iso8601Utc(fleet_.clock().WallNow());
  for (auto& r : rs) {
    r.run_id = run_id_;
    if (burnin_round_) r.round = burnin_round_->number;
    if (r.at.empty()) r.at = at;
  }
  Status s = store_.AddPairResults(rs);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  for (const auto& r : rs) any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(r.outcome);
}

void StageContext::Record(const Verdict& v) {
  Status s = store_.AddVerdict(run_id_, v, Iso8601Utc(fleet_.clock().WallNow()),
                               burnin_round_ ? burnin_round_->number : 0);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(v.severity);
}

void StageContext::RecordCause(Verdict v) {
  if (v.cause == CauseScope::kNone)
    v.cause = v.pairs.empty() ? CauseScope::kNode : CauseScope::kLink;
  Record(v);
  if (!inventory_.containment || burnin_round_) return;
  std::lock_guard<std::mutex> l(mu_);
  containment_.Add(v);
}

Containment StageContext::containment() const {
  std::lock_guard<std::mutex> l(mu_);
  return containment_;
}

bool StageContext::AnyFailedOrHung() const {
  std::lock_guard<std::mutex> l(mu_);
  return any_failed_or_hung_;
}

void StageContext::SetFacts(const std::string& node, nlohmann::json facts) {
  std::lock_guard<std::mutex> l(mu_);
  facts_[node] = std::move(facts);
}

std::map<std::string, nlohmann::json> StageContext::facts() const {
  std::lock_guard<std::mutex> l(mu_);
  return facts_;
}

void StageContext::SetNetworkChoice(NetworkChoice choice) {
  std::map<std::string, nlohmann::json> meta = NetworkChoiceMeta(choice);
  {
    std::lock_guard<std::mutex> l(mu_);
    network_choice_ = std::move(choice);
  }
  for (const auto& [key, value] : meta) {
    Status s = store_.SetRunMeta(run_id_, key, value);
    if (!s.ok()) {
      std::lock_guard<std::mutex> l(mu_);
      store_errors_.push_back(s.ToString());
    }
  }
}

std::optional<NetworkChoice> StageContext::network_choice() const {
  std::lock_guard<std::mutex> l(mu_);
  return network_choice_;
}

void StageContext::RecordRetests(const std::string& stage, const RetestCounts& counts) {
  Status s = store_.SetRunMeta(run_id_, "retests." + stage, counts.ToJson());
  if (!s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    store_errors_.push_back(s.ToString());
  }
}

void StageContext::SetBurnInRound(std::optional<BurnInRound> round) {
  burnin_round_ = std::move(round);
}

std::vector<Round> StageContext::PairRounds(const std::vector<std::string>& nodes) const {
  if (!burnin_round_) return RoundRobinRounds(nodes);
  Round kept;
  auto among = [&](const std::string& n) {
    return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
  };
  for (const NodePair& p : burnin_round_->pairs) {
    if (among(p.first) && among(p.second)) kept.push_back(p);
  }
  if (kept.empty()) return {};
  return {kept};
}

bool StageContext::MeetsThisRound(const std::string& a, const std::string& b) const {
  if (!burnin_round_) return true;
  for (const NodePair& p : burnin_round_->pairs) {
    if ((p.first == a && p.second == b) || (p.first == b && p.second == a)) return true;
  }
  return false;
}

void StageContext::InheritFrom(const StageContext& earlier) {
  auto facts = earlier.facts();
  auto choice = earlier.network_choice();
  std::lock_guard<std::mutex> l(mu_);
  facts_ = std::move(facts);
  network_choice_ = std::move(choice);
}

std::vector<std::string> StageContext::store_errors() const {
  std::lock_guard<std::mutex> l(mu_);
  return store_errors_;
}

}  // namespace cc
