#include "orchestrator/run/stage.h"

namespace cc {

void StageContext::Record(NodeResult r) {
  r.run_id = run_id_;
  if (r.at.empty()) r.at = NowIso8601();
  Status s = store_.AddNodeResult(r);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(r.outcome);
}

void StageContext::Record(PairResult r) {
  r.run_id = run_id_;
  if (r.at.empty()) r.at = NowIso8601();
  Status s = store_.AddPairResult(r);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(r.outcome);
}

void StageContext::Record(std::vector<PairResult> rs) {
  std::string at = NowIso8601();
  for (auto& r : rs) {
    r.run_id = run_id_;
    if (r.at.empty()) r.at = at;
  }
  Status s = store_.AddPairResults(rs);
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok()) store_errors_.push_back(s.ToString());
  for (const auto& r : rs) any_failed_or_hung_ = any_failed_or_hung_ || IsFailOrHang(r.outcome);
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

void StageContext::Select(const std::string& key, nlohmann::json value) {
  {
    std::lock_guard<std::mutex> l(mu_);
    selections_[key] = value;
  }
  Status s = store_.SetRunMeta(run_id_, "selection." + key, value);
  if (!s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    store_errors_.push_back(s.ToString());
  }
}

void StageContext::RecordRetests(const std::string& stage, const RetestCounts& counts) {
  Status s = store_.SetRunMeta(run_id_, "retests." + stage, counts.ToJson());
  if (!s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    store_errors_.push_back(s.ToString());
  }
}

nlohmann::json StageContext::Selection(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  return selections_.contains(key) ? selections_[key] : nlohmann::json();
}

std::vector<std::string> StageContext::store_errors() const {
  std::lock_guard<std::mutex> l(mu_);
  return store_errors_;
}

}  // namespace cc
