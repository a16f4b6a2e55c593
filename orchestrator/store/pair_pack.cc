#include "orchestrator/store/pair_pack.h"

#include <cmath>
#include <map>
#include <tuple>

namespace cc {
namespace {

// Evidence may hold raw bytes from logs; invalid UTF-8 must not throw.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool HasNull(const nlohmann::json& j) {
  if (j.is_null()) return true;
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) {
      if (HasNull(v)) return true;
    }
  }
  return false;
}

// The members every evidence in `group` has with the same value; {} when
// one of them is not an object free of nulls, or the group is one result.
nlohmann::json SharedMembers(const std::vector<const PairResult*>& group) {
  nlohmann::json shared = nlohmann::json::object();
  if (group.size() < 2) return shared;
  for (const PairResult* r : group) {
    if (!r->evidence.is_object() || HasNull(r->evidence)) return shared;
  }
  shared = group.front()->evidence;
  for (size_t i = 1; i < group.size() && !shared.empty(); ++i) {
    const nlohmann::json& e = group[i]->evidence;
    for (auto it = shared.begin(); it != shared.end();) {
      auto other = e.find(it.key());
      if (other == e.end() || *other != it.value()) {
        it = shared.erase(it);
      } else {
        ++it;
      }
    }
  }
  return shared;
}

PairPack Pack(const std::vector<const PairResult*>& group, const std::string& now) {
  const PairResult& first = *group.front();
  PairPack p;
  p.run_id = first.run_id;
  p.stage = first.stage;
  p.src = first.src;
  p.dst = first.dst;
  p.round = first.round;
  p.at = first.at.empty() ? now : first.at;
  nlohmann::json shared = SharedMembers(group);
  p.common = Dump(shared);
  nlohmann::json items = nlohmann::json::array();
  for (const PairResult* r : group) {
    nlohmann::json evidence = r->evidence;
    for (const auto& [k, v] : shared.items()) evidence.erase(k);
    const std::string& at = r->at.empty() ? now : r->at;
    bool has_value = r->value && std::isfinite(*r->value);
    items.push_back({r->check, OutcomeName(r->outcome), r->state,
                     has_value ? nlohmann::json(*r->value) : nlohmann::json(nullptr), r->unit,
                     r->message, std::move(evidence), at == p.at ? "" : at});
    ++p.n;
    p.n_value += has_value;
  }
  p.items = Dump(items);
  return p;
}

}  // namespace

std::vector<PairPack> PackPairResults(const std::vector<PairResult>& rs, const std::string& now) {
  using Key = std::tuple<int64_t, std::string, std::string, std::string, int>;
  std::map<Key, size_t> index;  // key -> its group in `groups`
  std::vector<std::vector<const PairResult*>> groups;
  for (const PairResult& r : rs) {
    Key key{r.run_id, r.stage, r.src, r.dst, r.round};
    auto it = index.find(key);
    if (it == index.end() || groups[it->second].size() >= kPackIdStride) {
      it = index.insert_or_assign(key, groups.size()).first;
      groups.emplace_back();
    }
    groups[it->second].push_back(&r);
  }
  std::vector<PairPack> packs;
  packs.reserve(groups.size());
  for (const auto& g : groups) packs.push_back(Pack(g, now));
  return packs;
}

}  // namespace cc
