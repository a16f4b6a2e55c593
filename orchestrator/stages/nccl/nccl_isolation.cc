#include "orchestrator/stages/nccl/nccl_isolation.h"

#include <algorithm>

namespace cc {
namespace {

enum class State { kGood, kBad, kUnknown };

State StateOf(Outcome o) {
  if (IsPassOrWarn(o)) return State::kGood;
  if (IsFailOrHang(o)) return State::kBad;
  return State::kUnknown;
}

enum class Kind { kSplit, kPair, kSingle, kCross };

// One open question about a broken group, and the tests it waits on.
struct Task {
  Kind kind = Kind::kSplit;
  NodeGroup group;        // split/pair/single: the nodes in question
  NodeGroup left, right;  // cross: halves that work alone
  int phase = 0;          // cross: 0 find a in left, 1 find b in right, 2 confirm
  NodeGroup cand;         // cross: candidates left
  std::string a, b;       // cross: found so far
  NodeGroup failed_with;  // single: known-good partners it broke with
  NodeGroup whole;        // single: the broken group it was left over from
  // The tests of this round, their purpose and outcomes.
  std::vector<NodeGroup> tests;
  std::vector<Outcome> outcomes;
  std::string purpose;
};

NodeGroup Concat(NodeGroup a, const NodeGroup& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

NodeGroup FirstHalf(const NodeGroup& g) {
  return NodeGroup(g.begin(), g.begin() + static_cast<long>((g.size() + 1) / 2));
}
NodeGroup SecondHalf(const NodeGroup& g) {
  return NodeGroup(g.begin() + static_cast<long>((g.size() + 1) / 2), g.end());
}

Task SplitOrPair(const NodeGroup& g) {
  Task t;
  t.kind = g.size() == 2 ? Kind::kPair : Kind::kSplit;
  t.group = g;
  return t;
}

class Search {
 public:
  Search(const RunGroupBatch& run, const IsolationOptions& o, size_t n)
      : run_(run),
        good_(o.known_good),
        bad_(o.known_bad),
        max_tests_(o.max_tests > 0 ? o.max_tests : static_cast<int>(4 * n + 16)) {}

  IsolationResult Run(const NodeGroup& broken) {
    if (broken.size() >= 2) {
      tasks_.push_back(SplitOrPair(broken));
    } else if (broken.size() == 1) {
      Task t;
      t.kind = Kind::kSingle;
      t.group = broken;
      tasks_.push_back(t);
    }
    while (!tasks_.empty()) {
      if (!Round()) break;
    }
    for (const Task& t : tasks_) GiveUp(t);
    std::sort(out_.bad_nodes.begin(), out_.bad_nodes.end());
    out_.bad_nodes.erase(std::unique(out_.bad_nodes.begin(), out_.bad_nodes.end()),
                         out_.bad_nodes.end());
    std::sort(out_.bad_links.begin(), out_.bad_links.end());
    return out_;
  }

 private:
  // Plans, runs and digests one batch. false when nothing could be run.
  bool Round() {
    std::set<std::string> busy;
    std::vector<NodeGroup> batch;
    std::vector<Task*> owners;
    for (Task& t : tasks_) {
      t.tests.clear();
      t.outcomes.clear();
      if (!Plan(t, busy)) continue;
      for (const NodeGroup& g : t.tests) {
        busy.insert(g.begin(), g.end());
        batch.push_back(g);
        owners.push_back(&t);
      }
    }
    if (batch.empty()) return false;
    if (static_cast<int>(out_.tests.size() + batch.size()) > max_tests_) {
      out_.budget_exhausted = true;
      return false;
    }
    std::vector<Outcome> got = run_(batch);
    got.resize(batch.size(), Outcome::kError);
    ++out_.rounds;
    for (size_t i = 0; i < batch.size(); ++i) {
      owners[i]->outcomes.push_back(got[i]);
      out_.tests.push_back({batch[i], got[i], out_.rounds, owners[i]->purpose});
      if (StateOf(got[i]) == State::kGood) good_.insert(batch[i].begin(), batch[i].end());
    }
    std::vector<Task> next;
    for (Task& t : tasks_) {
      if (t.tests.empty()) {
        next.push_back(std::move(t));
      } else {
        Advance(t, next);
      }
    }
    tasks_ = std::move(next);
    return true;
  }

  // A known-good node outside `avoid` and `busy`; "" when none is left.
  std::string Partner(const std::set<std::string>& busy, const NodeGroup& avoid) const {
    for (const std::string& g : good_) {
      if (busy.count(g) || bad_.count(g)) continue;
      if (std::find(avoid.begin(), avoid.end(), g) != avoid.end()) continue;
      return g;
    }
    return "";
  }

  static bool Free(const NodeGroup& g, const std::set<std::string>& busy) {
    return std::none_of(g.begin(), g.end(), [&](const std::string& n) { return busy.count(n); });
  }

  // Fills t.tests for this round; false when the task must wait.
  bool Plan(Task& t, const std::set<std::string>& busy_in) {
    std::set<std::string> busy = busy_in;
    const NodeGroup& own = t.kind == Kind::kCross ? Concat(t.left, t.right) : t.group;
    if (!Free(own, busy)) return false;
    busy.insert(own.begin(), own.end());
    switch (t.kind) {
      case Kind::kSplit: {
        t.purpose = "split";
        NodeGroup h1 = FirstHalf(t.group), h2 = SecondHalf(t.group);
        t.tests.push_back(h1);
        if (h2.size() == 1) {
          std::string g = Partner(busy, t.failed_with);
          if (!g.empty()) t.tests.push_back({h2[0], g});
        } else {
          t.tests.push_back(h2);
        }
        return true;
      }
      case Kind::kPair: {
        t.purpose = "pair";
        std::string g1 = Partner(busy, {});
        if (g1.empty()) return false;
        busy.insert(g1);
        std::string g2 = Partner(busy, {});
        if (g2.empty()) return false;
        t.tests = {{t.group[0], g1}, {t.group[1], g2}};
        return true;
      }
      case Kind::kSingle: {
        t.purpose = "pair";
        std::string g = Partner(busy, t.failed_with);
        if (g.empty()) return false;
        t.tests = {{t.group[0], g}};
        return true;
      }
      case Kind::kCross:
        return PlanCross(t);
    }
    return false;
  }

  static bool PlanCross(Task& t) {
    t.purpose = "cross";
    if (t.phase == 0) {
      if (t.cand.size() > 1) {
        t.tests = {Concat(FirstHalf(t.cand), t.right)};
        return true;
      }
      t.a = t.cand.at(0);
      t.phase = 1;
      t.cand = t.right;
    }
    if (t.phase == 1) {
      if (t.cand.size() > 1) {
        t.tests = {Concat({t.a}, FirstHalf(t.cand))};
        return true;
      }
      t.b = t.cand.at(0);
      t.phase = 2;
    }
    t.purpose = "confirm";
    t.tests = {{t.a, t.b}};
    return true;
  }

  void Advance(Task& t, std::vector<Task>& next) {
    for (Outcome o : t.outcomes) {
      if (StateOf(o) == State::kUnknown) {
        GiveUp(t);
        return;
      }
    }
    auto broken = [&](size_t i) { return StateOf(t.outcomes.at(i)) == State::kBad; };
    switch (t.kind) {
      case Kind::kSplit: {
        NodeGroup h1 = FirstHalf(t.group), h2 = SecondHalf(t.group);
        bool tested2 = t.tests.size() == 2;
        if (broken(0)) next.push_back(SplitOrPair(h1));
        if (tested2 && broken(1)) {
          if (h2.size() == 1) {
            Task s;
            s.kind = Kind::kSingle;
            s.group = h2;
            s.failed_with = {t.tests[1][1]};
            next.push_back(s);
          } else {
            next.push_back(SplitOrPair(h2));
          }
        }
        if (!tested2) {
          // The lone node was not tested (no partner yet): ask on its own.
          Task s;
          s.kind = Kind::kSingle;
          s.group = h2;
          s.whole = t.group;
          next.push_back(s);
        } else if (!broken(0) && !broken(1)) {
          // Each half works alone: the fault needs members of both.
          Task c;
          c.kind = Kind::kCross;
          c.left = h1;
          c.right = h2;
          c.cand = h1;
          next.push_back(c);
        }
        return;
      }
      case Kind::kPair: {
        bool x = broken(0), y = broken(1);
        if (x) NameBad(t.group[0]);
        if (y) NameBad(t.group[1]);
        if (!x && !y) NameLink(t.group[0], t.group[1]);
        return;
      }
      case Kind::kSingle: {
        const std::string& partner = t.tests[0][1];
        if (broken(0)) {
          t.failed_with.push_back(partner);
          if (t.failed_with.size() >= 2) {
            NameBad(t.group[0]);
          } else {
            next.push_back(t);
          }
        } else if (!t.failed_with.empty()) {
          NameLink(t.group[0], t.failed_with[0]);
        } else if (!t.whole.empty()) {
          // The lone node works with a known-good one; what broke its
          // group is not found by pairs.
          out_.unexplained.push_back(t.whole);
        }
        return;
      }
      case Kind::kCross:
        AdvanceCross(t, broken(0), next);
        return;
    }
  }

  void AdvanceCross(Task& t, bool broke, std::vector<Task>& next) {
    if (t.phase == 0) {
      // One half tested per step; when it works the fault is in the other.
      NodeGroup h = FirstHalf(t.cand), rest = SecondHalf(t.cand);
      t.cand = broke ? h : rest;
    } else if (t.phase == 1) {
      NodeGroup h = FirstHalf(t.cand), rest = SecondHalf(t.cand);
      if (broke && h.size() == 1) {
        NameLink(t.a, h[0]);  // the pair {a, b} itself broke
        return;
      }
      t.cand = broke ? h : rest;
    } else {
      if (broke) {
        NameLink(t.a, t.b);
      } else {
        out_.unexplained.push_back(Concat(t.left, t.right));
      }
      return;
    }
    next.push_back(t);
  }

  void NameBad(const std::string& n) {
    out_.bad_nodes.push_back(n);
    bad_.insert(n);
    good_.erase(n);
  }
  void NameLink(const std::string& a, const std::string& b) {
    out_.bad_links.push_back(a < b ? NodePair{a, b} : NodePair{b, a});
  }
  void GiveUp(const Task& t) {
    out_.unexplained.push_back(t.kind == Kind::kCross ? Concat(t.left, t.right) : t.group);
  }

  const RunGroupBatch& run_;
  std::set<std::string> good_;
  std::set<std::string> bad_;
  int max_tests_;
  std::vector<Task> tasks_;
  IsolationResult out_;
};

}  // namespace

IsolationResult IsolateBrokenGroup(const NodeGroup& broken, const RunGroupBatch& run,
                                   const IsolationOptions& options) {
  return Search(run, options, broken.size()).Run(broken);
}

}  // namespace cc
