#include "reports/evidence_mutator_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "common/json_read.h"

namespace cc::testdata {
namespace {

using nlohmann::json;

// A value and where it is, "symptoms/0/stage".
struct Place {
  json* value;
  std::string path;
};

void Places(json& j, const std::string& path, std::vector<Place>& out) {
  out.push_back({&j, path});
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) Places(v, path + "/" + k, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) Places(j[i], path + "/" + std::to_string(i), out);
  }
}

void Keys(const json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      out.insert(k);
      Keys(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) Keys(v, out);
  }
}

// The value for a failure message, cut to stay readable.
std::string Shown(const json& j) {
  std::string s = JsonDump(j);
  return s.size() > 60 ? s.substr(0, 60) + "..." : s;
}

}  // namespace

EvidenceMutator::EvidenceMutator(uint64_t seed, std::vector<std::string> keys, Targets targets)
    : rng_(seed), targets_(targets), keys_(std::move(keys)) {}

void EvidenceMutator::AddKeysOf(const RunData& run) {
  std::set<std::string> found(learned_.begin(), learned_.end());
  Keys(run.run.meta, found);
  for (const auto& n : run.nodes) Keys(n.facts, found);
  for (const auto& r : run.node_results) Keys(r.evidence, found);
  for (const auto& r : run.pair_results) Keys(r.evidence, found);
  for (const auto& v : run.verdicts) Keys(v.evidence, found);
  // Sorted, so that the mutations depend on the seed alone.
  learned_.assign(found.begin(), found.end());
}

std::string EvidenceMutator::RandomKey() {
  bool given = learned_.empty() || (!keys_.empty() && Below(3) < 2);
  if (given) return keys_.empty() ? "symptoms" : keys_[Below(keys_.size())];
  return learned_[Below(learned_.size())];
}

std::string EvidenceMutator::RandomString() {
  static const char* const kWords[] = {
      "",     "gpu01", "gpu03", "drain", "reboot",    "reset-gpu", "fail", "hang", "flaky",
      "pass", "-1",    "1e999", "ports", "tcp/29500", "ok",        "null", "{}",   "[1, 2]"};
  size_t pick = Below(std::size(kWords) + 2);
  if (pick < std::size(kWords)) return kWords[pick];
  if (pick == std::size(kWords)) return std::string(300, 'x');
  return RandomKey();
}

json EvidenceMutator::RandomValue(int depth) {
  // Containers only near the top, so that values stay small.
  size_t kinds = depth < 2 ? 14 : 12;
  switch (Below(kinds)) {
    case 0:
      return nullptr;
    case 1:
      return Below(2) == 1;
    case 2:
      return static_cast<int64_t>(Below(12)) - 3;
    case 3:
      return std::numeric_limits<int64_t>::min();
    case 4:
      return std::numeric_limits<int64_t>::max();
    case 5:
      return std::numeric_limits<uint64_t>::max();
    case 6:
      return Below(2) ? 1e308 : -1e308;
    case 7:
      return 0.5;
    case 8:
      return Below(2) ? std::nan("") : std::numeric_limits<double>::infinity();
    case 9:
    case 10:
    case 11:
      return RandomString();
    case 12: {
      json a = json::array();
      for (size_t i = Below(4); i > 0; --i) a.push_back(RandomValue(depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (size_t i = Below(4); i > 0; --i) o[RandomKey()] = RandomValue(depth + 1);
      return o;
    }
  }
}

std::string EvidenceMutator::Mutate(json& root) {
  std::vector<Place> places;
  Places(root, "", places);
  // The whole document now and then: evidence that is not an object.
  Place at = Below(6) == 0 ? places.front() : places[Below(places.size())];
  json& v = *at.value;
  std::string where = at.path.empty() ? "/" : at.path;
  switch (Below(4)) {
    case 1:
      if (v.is_object() && !v.empty()) {
        auto it = v.begin();
        std::advance(it, static_cast<long>(Below(v.size())));
        std::string key = it.key();
        v.erase(it);
        return where + ": dropped member \"" + key + "\"";
      }
      break;
    case 2:
      if (v.is_object()) {
        std::string key = RandomKey();
        v[key] = RandomValue(1);
        return where + ": set member \"" + key + "\" to " + Shown(v[key]);
      }
      break;
    case 3:
      if (v.is_array() && !v.empty() && Below(2)) {
        size_t i = Below(v.size());
        v.erase(v.begin() + static_cast<long>(i));
        return where + ": dropped element " + std::to_string(i);
      }
      if (v.is_array()) {
        v.push_back(RandomValue(1));
        return where + ": appended " + Shown(v.back());
      }
      break;
    default:
      break;
  }
  json was = v;
  // Another type than it had (a number for a string, ...).
  for (int tries = 0; tries < 8 && v.type() == was.type(); ++tries) v = RandomValue(1);
  return where + ": " + Shown(was) + " became " + Shown(v);
}

std::string EvidenceMutator::Mutate(RunData& run) {
  // Weights of verdicts, node results, pair results (their evidence); of
  // the run meta, facts and messages.
  static const size_t kEvidence[] = {35, 30, 30, 0, 0, 0};
  static const size_t kOthers[] = {0, 0, 0, 60, 30, 10};
  const size_t* weights = targets_ == Targets::kEvidence ? kEvidence : kOthers;
  size_t total = 0;
  for (size_t t = 0; t < 6; ++t) total += weights[t];
  for (int tries = 0; tries < 64; ++tries) {
    size_t pick = Below(total), target = 0;
    while (pick >= weights[target]) pick -= weights[target++];
    switch (target) {
      case 0:
        if (run.verdicts.empty()) continue;
        {
          size_t i = Below(run.verdicts.size());
          Verdict& v = run.verdicts[i];
          return "verdicts[" + std::to_string(i) + "] (" + v.kind + " " + v.stage + "/" + v.check +
                 ") evidence" + Mutate(v.evidence);
        }
      case 1:
        if (run.node_results.empty()) continue;
        {
          size_t i = Below(run.node_results.size());
          NodeResult& r = run.node_results[i];
          return "node_results[" + std::to_string(i) + "] (" + r.stage + "/" + r.check + " " +
                 r.node + ") evidence" + Mutate(r.evidence);
        }
      case 2:
        if (run.pair_results.empty()) continue;
        {
          size_t i = Below(run.pair_results.size());
          PairResult& r = run.pair_results[i];
          return "pair_results[" + std::to_string(i) + "] (" + r.stage + "/" + r.check + " " +
                 r.src + "->" + r.dst + ") evidence" + Mutate(r.evidence);
        }
      case 3:
        return "run meta" + Mutate(run.run.meta);
      case 4:
        if (run.nodes.empty()) continue;
        {
          size_t i = Below(run.nodes.size());
          return "nodes[" + std::to_string(i) + "] (" + run.nodes[i].node + ") facts" +
                 Mutate(run.nodes[i].facts);
        }
      default:
        if (run.node_results.empty()) continue;
        {
          size_t i = Below(run.node_results.size());
          run.node_results[i].message += " \xe9t\xe9 \xff";
          return "node_results[" + std::to_string(i) + "] message: bytes that are not UTF-8";
        }
    }
  }
  return "nothing to mutate";
}

namespace {

RunData OneResultRun() {
  RunData d;
  d.run.meta = {{"nodes", {"n1", "n2"}}};
  d.node_results = {NodeCheck("nics", "n1", "ib0", Outcome::kFail, "down", {{"device", "mlx5_0"}})};
  d.verdicts.push_back(Verdict{});
  d.verdicts[0].evidence = {{"symptoms", {{{"symptom", "filtered"}}}}};
  return d;
}

TEST(EvidenceMutator, TheSameSeedMutatesTheSameWay) {
  RunData a = OneResultRun(), b = OneResultRun();
  EvidenceMutator ma(7, {"speed"}), mb(7, {"speed"});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(ma.Mutate(a), mb.Mutate(b));
  EXPECT_EQ(JsonDump(RunDataToJson(a)), JsonDump(RunDataToJson(b)));
}

// Every evidence of the run, in one array.
json EvidenceOf(const RunData& d) {
  json out = json::array();
  for (const auto& v : d.verdicts) out.push_back(v.evidence);
  for (const auto& r : d.node_results) out.push_back(r.evidence);
  for (const auto& r : d.pair_results) out.push_back(r.evidence);
  return out;
}

TEST(EvidenceMutator, EveryMutationChangesItsTargetsOnly) {
  using T = EvidenceMutator::Targets;
  for (T targets : {T::kEvidence, T::kMetaFactsAndMessages}) {
    RunData d = OneResultRun();
    EvidenceMutator m(11, {"speed", "next_step"}, targets);
    m.AddKeysOf(d);
    for (int i = 0; i < 200; ++i) {
      json before = RunDataToJson(d);
      json evidence = EvidenceOf(d);
      std::string what = m.Mutate(d);
      EXPECT_NE(RunDataToJson(d), before) << what;
      // Everything else stays: the meta, facts and messages of an evidence
      // mutation, the evidence otherwise.
      if (targets == T::kEvidence) {
        EXPECT_EQ(RunDataToJson(d)["run"], before["run"]) << what;
      } else {
        EXPECT_EQ(EvidenceOf(d), evidence) << what;
      }
      if (i % 20 == 0) d = OneResultRun();  // now and then a fresh start, small values
    }
  }
}

}  // namespace
}  // namespace cc::testdata
