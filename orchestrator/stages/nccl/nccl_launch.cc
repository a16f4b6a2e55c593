#include "orchestrator/stages/nccl/nccl_launch.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "orchestrator/run/fleet.h"

namespace cc {
namespace {

constexpr double kStartTimeoutS = 30;
constexpr double kAbortGraceS = 10;
constexpr double kSlackS = 20;

// One communicator in flight: its members and the id hand-over.
struct Comm {
  std::vector<NcclMember*> members;
  std::vector<int> rank_base;
  int nranks = 0;
  std::vector<RankReport> reports;
  std::mutex mu;
  std::condition_variable cv;
  std::string id;        // set by the first member's thread
  std::string id_error;  // set instead when there will be no id
};

void PublishId(Comm& c, const std::string& id, const std::string& error) {
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.id.empty() || !c.id_error.empty()) return;
  if (!id.empty()) {
    c.id = id;
  } else {
    c.id_error = error.empty() ? "ended without an id" : error;
  }
  c.cv.notify_all();
}

// Waits for the id, on `clock`, in slices of kCancelPollMs so that Ctrl-C
// is seen; "" with *why set when none comes. A rendezvous with the first
// member's thread: on a FakeClock it ends unmet at once unless the id is
// already there (fake_clock.h).
std::string AwaitId(Comm& c, Clock& clock, double seconds, std::string* why) {
  std::unique_lock<std::mutex> lock(c.mu);
  const Deadline until = Deadline::InSeconds(clock, seconds);
  auto settled = [&c] { return !c.id.empty() || !c.id_error.empty(); };
  while (!settled()) {
    if (InterruptFlag().load()) {
      *why = "interrupted";
      return "";
    }
    if (until.Passed()) {
      *why = "no NCCL id from " + c.members[0]->name + " within " +
             std::to_string(static_cast<int>(seconds)) + " s";
      return "";
    }
    clock.WaitUntil(c.cv, lock, until.Within(Millis(kCancelPollMs)).at(), settled);
  }
  if (c.id.empty()) *why = c.members[0]->name + " made no NCCL id: " + c.id_error;
  return c.id;
}

// Takes one message of the request into the report. true at its `end`.
bool Take(const Json& m, int64_t id, bool first, Comm& c, RankReport& rep, bool* have_outcome) {
  if (m.value("id", int64_t{-2}) != id) return false;
  std::string type = m.value("type", "");
  if (type == "end") {
    if (!*have_outcome) {
      rep.outcome = Outcome::kError;
      rep.reason = "agent: " + m.value("error", std::string("ended without an outcome"));
      rep.step = "request";
    }
    return true;
  }
  if (type != "result") return false;
  std::string name = m.value("name", "");
  const Json data = m.value("data", Json::object());
  if (name == "nccl_id" && first) {
    PublishId(c, data.value("id", std::string()), "");
  } else if (AddNcclResult(name, data, &rep)) {
    *have_outcome = true;
  }
  return false;
}

void RunMember(StageContext& ctx, Comm& c, size_t i, const NcclSettings& s) {
  NcclMember& m = *c.members[i];
  RankReport& rep = c.reports[i];
  const bool first = i == 0;
  auto fail = [&](Outcome o, const std::string& step, const std::string& why) {
    rep.outcome = o;
    rep.step = step;
    rep.reason = why;
    if (first) PublishId(c, "", why);
  };
  Clock& clock = ctx.clock();
  auto agent = ctx.fleet().StartAgent(*m.state, Deadline::InSeconds(clock, kStartTimeoutS));
  if (!agent.ok()) {
    fail(OutcomeForNodeError(agent.status()), "start",
         "could not start an agent: " + agent.status().ToString());
    return;
  }
  AgentChannel& ch = **agent;
  Json args = NcclAgentArgs(m, c.nranks, c.rank_base[i], s);
  if (!first) {
    std::string why;
    std::string id = AwaitId(c, clock, kStartTimeoutS + s.timeout_s + kSlackS, &why);
    if (id.empty()) {
      fail(Outcome::kError, "rendezvous", why);
      ch.Close(Millis(1000));
      return;
    }
    args["unique_id"] = id;
  }
  auto req = ch.Send("nccl", args, Deadline::InSeconds(clock, kStartTimeoutS));
  if (!req.ok()) {
    fail(OutcomeForNodeError(req.status()), "send", req.status().ToString());
    ch.Close(Millis(1000));
    return;
  }
  double budget = NcclAgentDeadlinesS(s) + kSlackS;
  Deadline d = Deadline::InSeconds(clock, budget);
  bool have_outcome = false, ended = false;
  Status last;
  while (!ended) {
    auto msg = ch.Next(d);
    if (!msg.ok()) {
      last = msg.status();
      break;
    }
    ended = Take(*msg, *req, first, c, rep, &have_outcome);
  }
  if (!ended && last.Is(ErrorKind::kTimeout)) {
    // The agent's own deadlines did not end it: abort, keep what it says.
    (void)ch.SendControl(*req, "abort", Json::object(), Deadline::InSeconds(clock, 5));
    Deadline grace = Deadline::InSeconds(clock, kAbortGraceS);
    while (!ended) {
      auto msg = ch.Next(grace);
      if (!msg.ok()) break;
      ended = Take(*msg, *req, first, c, rep, &have_outcome);
    }
    rep.outcome = Outcome::kHang;
    rep.reason = "no end from the agent within " + std::to_string(static_cast<int>(budget)) +
                 " s; aborted" + (rep.reason.empty() ? "" : " (" + rep.reason + ")");
  } else if (!ended) {
    fail(last.Is(ErrorKind::kInterrupted) ? Outcome::kError : Outcome::kFail,
         rep.step.empty() ? "run" : rep.step, "agent went away: " + last.ToString());
  }
  if (first) PublishId(c, "", rep.reason.empty() ? "ended without an id" : rep.reason);
  ch.Close(Millis(2000));
}

}  // namespace

Json NcclAgentArgs(const NcclMember& m, int nranks, int rank_base, const NcclSettings& s) {
  Json gpus = Json::array();
  for (int g = 0; g < m.gpus; ++g) gpus.push_back(g);
  Json env = Json::object();
  for (const auto& [k, v] : m.env) env[k] = v;
  Json args = {{"nranks", nranks},
               {"rank_base", rank_base},
               {"gpus", gpus},
               {"sizes", s.sizes},
               {"iters", s.iters},
               {"warmup", s.warmup},
               {"check_iters", s.check_iters},
               {"timeout_s", s.timeout_s},
               {"env", env},
               {"library_paths", m.library_paths}};
  // The agent's default is float alone: a request as before dtypes.
  if (s.dtypes != std::vector<std::string>{"float"}) args["dtypes"] = s.dtypes;
  return args;
}

bool AddNcclResult(const std::string& name, const Json& data, RankReport* rep) {
  if (name == "size") {
    rep->sizes.push_back(data);
  } else if (name == "nccl_log") {
    rep->log += data.value("text", std::string());
  } else if (name == "setup") {
    rep->setup = data;
  } else if (name == "outcome") {
    rep->outcome = ParseOutcome(data.value("outcome", std::string())).value_or(Outcome::kError);
    rep->reason = data.value("reason", std::string());
    rep->step = data.value("step", std::string());
    return true;
  }
  return false;
}

std::vector<std::vector<RankReport>> RunNcclBatch(
    StageContext& ctx, const std::vector<std::vector<NcclMember*>>& groups,
    const NcclSettings& settings) {
  std::vector<std::unique_ptr<Comm>> comms;
  for (const auto& g : groups) {
    auto c = std::make_unique<Comm>();
    c->members = g;
    for (NcclMember* m : g) {
      c->rank_base.push_back(c->nranks);
      c->nranks += m->gpus;
      RankReport r;
      r.node = m->name;
      r.nranks_here = m->gpus;
      c->reports.push_back(r);
    }
    comms.push_back(std::move(c));
  }
  // One thread per member: every rank of a communicator must run at once
  // (a bounded window smaller than a group would deadlock its init).
  std::vector<std::thread> threads;
  for (auto& c : comms) {
    for (size_t i = 0; i < c->members.size(); ++i) {
      threads.emplace_back(
          [&ctx, &settings, comm = c.get(), i] { RunMember(ctx, *comm, i, settings); });
    }
  }
  for (auto& t : threads) t.join();
  std::vector<std::vector<RankReport>> out;
  for (auto& c : comms) out.push_back(std::move(c->reports));
  return out;
}

}  // namespace cc
