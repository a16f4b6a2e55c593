#include "orchestrator/transport/slurm_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "agent/dial_back.h"
#include "common/hostlist.h"
#include "common/random_hex.h"
#include "orchestrator/transport/agent_channel.h"
#include "orchestrator/transport/local_transport.h"
#include "orchestrator/transport/sha256.h"
#include "orchestrator/transport/socket_process.h"

namespace cc {
namespace {

constexpr double kQueryTimeoutS = 60;
constexpr double kCopyTimeoutS = 300;
constexpr double kScancelTimeoutS = 30;
// After srun ended, how long a node's agent may still be on its way.
constexpr Millis kAfterSrunGrace{2000};

struct LocalRun {
  int exit_code = -1;
  std::string out, err;
};

// Runs a command here to its end; its stdout and stderr. Ctrl-C stops it,
// unless it is what cleans up after Ctrl-C (`interruptible` false).
Result<LocalRun> RunLocal(const std::vector<std::string>& argv, double timeout_s,
                          bool interruptible = true) {
  LocalConnection here;
  Deadline deadline = Deadline::InSeconds(timeout_s);
  auto proc = here.Start(CommandLine{argv, {}}, deadline);
  if (!proc.ok()) return proc.status();
  (*proc)->CloseStdin();
  LocalRun run;
  for (;;) {
    if (interruptible && InterruptFlag().load()) {
      (*proc)->Kill();
      return Status::Interrupted(argv[0] + " interrupted");
    }
    auto line = (*proc)->ReadLine(deadline.Within(Millis(kCancelPollMs)));
    if (line.ok()) {
      run.out += *line + "\n";
    } else if (line.status().Is(ErrorKind::kEof)) {
      break;
    } else if (deadline.Passed()) {
      (*proc)->Kill();
      return Status::Timeout(argv[0] + " did not finish in " +
                             std::to_string(static_cast<int>(timeout_s)) + " s");
    }
  }
  auto code = (*proc)->Wait(deadline);
  run.err = (*proc)->StderrSoFar();
  if (!code.ok()) return code.status();
  run.exit_code = *code;
  return run;
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A connection to one node whose agent dialled back: the first agent the
// fleet starts is that one; every later one is a Slurm step.
class SlurmConnection : public Connection {
 public:
  SlurmConnection(SlurmTransport& transport, const Node& node, int main_fd)
      : transport_(transport), node_(node), main_fd_(main_fd) {}
  ~SlurmConnection() override {
    if (main_fd_ >= 0) close(main_fd_);
  }
  Result<std::unique_ptr<RemoteProcess>> Start(const CommandLine& cmd, Deadline deadline) override {
    if (main_fd_ >= 0) {
      int fd = std::exchange(main_fd_, -1);
      return std::unique_ptr<RemoteProcess>(std::make_unique<SocketProcess>(
          fd, node_.name + "'s agent", nullptr, [this] { return transport_.MainSrunSaid(); }));
    }
    return transport_.StartStep(node_, cmd, deadline);
  }
  Status Upload(const std::string&, const std::string&, int, Deadline) override {
    return Status::BadArgument("the slurm transport copies nothing but the agent (sbcast)");
  }
  Result<long long> FileSize(const std::string&, Deadline) override {
    return Status::BadArgument("the slurm transport reads no files on the nodes");
  }
  std::string Describe() const override { return "slurm " + node_.name; }

 private:
  SlurmTransport& transport_;
  const Node& node_;
  int main_fd_;
};

}  // namespace

SlurmTransport::SlurmTransport(Environment env) : env_(std::move(env)) {}

SlurmTransport::~SlurmTransport() { End(); }

Status SlurmTransport::Begin(const Inventory& inv, const std::string& agent_binary) {
  settings_ = inv.slurm;
  std::vector<std::string> names;
  for (const Node& n : inv.nodes) names.push_back(n.name);
  if (names.empty()) return Status::Ok();
  auto sinfo = RunLocal(SinfoArgv(settings_, names), kQueryTimeoutS);
  if (!sinfo.ok()) return sinfo.status().WithContext("asking Slurm for the nodes (sinfo)");
  if (sinfo->exit_code != 0) {
    return Status::Error(
        ErrorKind::kLauncherRefused,
        "sinfo failed (exit " + std::to_string(sinfo->exit_code) + "): " + sinfo->err);
  }
  states_ = ParseSinfoNodes(sinfo->out);
  std::vector<std::string> usable;
  for (const std::string& n : names) {
    auto it = states_.find(n);
    if (it != states_.end() && AvailabilityOf(it->second) == SlurmAvailability::kUsable) {
      usable.push_back(n);
    }
  }
  if (usable.empty()) return Status::Ok();
  launch_ = Allocate(usable);
  if (launch_.ok()) launch_ = PlaceAgent(agent_binary, usable);
  if (launch_.ok()) launch_ = Listen(inv, usable);
  return Status::Ok();
}

Status SlurmTransport::Allocate(const std::vector<std::string>& usable) {
  if (auto job = env_("SLURM_JOB_ID"); job && !job->empty()) {
    job_ = *job;
    return Status::Ok();
  }
  auto argv = SallocArgv(settings_, usable);
  std::fprintf(stderr,
               "clustercheck: no Slurm allocation here (SLURM_JOB_ID); asking for one: %s\n",
               Joined(argv).c_str());
  auto salloc = RunLocal(argv, settings_.allocation_timeout_s + kQueryTimeoutS);
  if (!salloc.ok()) return salloc.status().WithContext("salloc");
  auto granted = GrantedJobId(salloc->err);
  if (salloc->exit_code != 0 || !granted) {
    std::string said = SlurmErrorLines(salloc->err);
    return Status::Error(ErrorKind::kLauncherRefused,
                         "salloc refused the allocation: " + (said.empty() ? salloc->err : said));
  }
  job_ = *granted;
  own_allocation_ = true;
  return Status::Ok();
}

Status SlurmTransport::PlaceAgent(const std::string& agent_binary,
                                  const std::vector<std::string>& usable) {
  if (!settings_.agent_path.empty()) {
    agent_path_ = settings_.agent_path;
    return Status::Ok();
  }
  const std::string content = ReadFile(agent_binary);
  if (content.empty()) return Status::NotFound("agent binary " + agent_binary + " not found");
  std::string dir = settings_.agent_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // Content-addressed: a node that has this build already gets nothing.
  agent_path_ = dir + "/clustercheck-agent-" + Sha256Hex(content).substr(0, 16);
  const std::string size = std::to_string(content.size());
  auto check = RunLocal(SrunAgentsArgv(settings_, job_, usable,
                                       {"/bin/sh", "-c",
                                        "if [ \"$(stat -c %s " + ShellQuote(agent_path_) +
                                            " 2>/dev/null)\" = " + size +
                                            " ]; then echo \"$SLURMD_NODENAME have\"; else echo "
                                            "\"$SLURMD_NODENAME missing\"; fi"}),
                        kQueryTimeoutS);
  if (!check.ok()) return check.status().WithContext("srun (looking for the agent)");
  if (check->exit_code != 0) {
    return Status::Error(ErrorKind::kLauncherRefused,
                         "srun refused the step: " + SlurmErrorLines(check->err));
  }
  std::istringstream lines(check->out);
  int missing = 0;
  for (std::string l; std::getline(lines, l);) missing += l.size() > 8 && l.ends_with(" missing");
  if (missing == 0) return Status::Ok();
  auto sbcast = RunLocal(SbcastArgv(settings_, job_, agent_binary, agent_path_), kCopyTimeoutS);
  if (!sbcast.ok()) return sbcast.status().WithContext("sbcast");
  if (sbcast->exit_code != 0) {
    return Status::Error(
        ErrorKind::kLauncherRefused,
        "sbcast of the agent to " + agent_path_ + " failed: " +
            (SlurmErrorLines(sbcast->err).empty() ? sbcast->err : SlurmErrorLines(sbcast->err)));
  }
  copied_to_ = missing;
  return Status::Ok();
}

Status SlurmTransport::Listen(const Inventory& inv, const std::vector<std::string>& usable) {
  std::string host = settings_.listen;
  int port = 0;
  if (std::string h; SplitHostPort(settings_.listen, &h, &port)) host = h;
  if (host.empty()) {
    const Node* first = inv.FindNode(usable.front());
    host = LocalAddressTowards(first->address);
    if (host.empty()) {
      return Status::Unreachable("no route from this machine to " + first->address +
                                 " for the agents to dial back; set [slurm] listen");
    }
  }
  secret_ = RandomHex(32);
  auto listener = DialBackListener::Open(
      host, port, secret_, std::set<std::string>(usable.begin(), usable.end()),
      [](const std::string& what) {
        std::fprintf(stderr, "clustercheck: slurm: %s\n", what.c_str());
      });
  if (!listener.ok()) return listener.status();
  listener_ = std::move(*listener);
  connect_ = host + ":" + std::to_string(listener_->port());
  // One srun for every node, when they all take the same environment;
  // else every node's first agent is a step of its own.
  const Node* first = inv.FindNode(usable.front());
  for (const std::string& n : usable) {
    const Node* node = inv.FindNode(n);
    if (node->env != first->env || node->root != first->root) return Status::Ok();
  }
  main_env_ = first->env;
  std::map<std::string, std::string> env = main_env_;
  env[kDialSecretEnv] = secret_;
  env[kDialSlotEnv] = kDialMainSlot;
  LocalConnection here;
  auto srun = here.Start(
      CommandLine{SrunAgentsArgv(settings_, job_, usable,
                                 {agent_path_, "--root=" + first->root, "--connect=" + connect_}),
                  env},
      Deadline::InSeconds(settings_.launch_timeout_s));
  if (!srun.ok()) return srun.status().WithContext("starting srun");
  std::lock_guard<std::mutex> lock(srun_mu_);
  main_srun_ = std::move(*srun);
  main_srun_->CloseStdin();
  return Status::Ok();
}

Status SlurmTransport::WhyNoDialBack(const std::string& node, RemoteProcess* srun,
                                     const Status& waited) {
  if (srun == nullptr) return waited;
  std::string err = srun->StderrSoFar();
  std::string said = SlurmErrorLines(err);
  std::string limit = SlurmTimeLimitLine(err);
  if (!limit.empty())
    return Status::Timeout("Slurm ended the step of " + node + "'s agent: " + limit);
  if (!said.empty()) {
    return Status::Error(ErrorKind::kLauncherRefused,
                         "srun did not start " + node + "'s agent: " + said);
  }
  return waited.WithContext(err.empty() ? "srun said nothing" : "srun said: " + err);
}

Result<std::unique_ptr<Connection>> SlurmTransport::Connect(const Node& node, Deadline) {
  auto st = states_.find(node.name);
  if (st == states_.end()) {
    return Status::Unreachable("Slurm does not know " + node.name + " (sinfo has no such node)");
  }
  switch (AvailabilityOf(st->second)) {
    case SlurmAvailability::kDrained:
      return Status::Error(ErrorKind::kOutOfService, DescribeSlurmState(st->second));
    case SlurmAvailability::kDown:
      return Status::Unreachable(DescribeSlurmState(st->second));
    case SlurmAvailability::kUsable:
      break;
  }
  if (!launch_.ok()) return launch_;
  if (!main_srun_) {
    // No common srun (the nodes' environments differ): the first agent is
    // a step, started by the fleet's Start.
    return std::unique_ptr<Connection>(std::make_unique<SlurmConnection>(*this, node, -1));
  }
  // The launch deadline counts from srun's start, not from this call: the
  // fleet connects a window of nodes at a time.
  Deadline deadline = Deadline::InSeconds(settings_.launch_timeout_s);
  std::optional<Clock::time_point> srun_ended;
  for (;;) {
    auto fd = listener_->Await(node.name, kDialMainSlot, deadline.Within(Millis(500)));
    if (fd.ok()) {
      return std::unique_ptr<Connection>(std::make_unique<SlurmConnection>(*this, node, *fd));
    }
    if (!fd.status().Is(ErrorKind::kTimeout)) return fd.status();
    std::lock_guard<std::mutex> lock(srun_mu_);
    bool ended = main_srun_->Wait(Deadline::In(Millis(0))).ok();
    if (ended && !srun_ended) srun_ended = RealClock().Now();
    if (deadline.Passed() || (srun_ended && RealClock().Now() - *srun_ended > kAfterSrunGrace)) {
      return WhyNoDialBack(
          node.name, main_srun_.get(),
          Status::Timeout("no agent dialled back from " + node.name + " within " +
                          std::to_string(static_cast<int>(settings_.launch_timeout_s)) +
                          " s of srun's start"));
    }
  }
}

std::vector<std::string> SlurmTransport::AgentArgv(const CommandLine& cmd) const {
  std::vector<std::string> argv = cmd.argv;
  if (!argv.empty()) argv[0] = agent_path_;
  argv.push_back("--connect=" + connect_);
  return argv;
}

Result<std::unique_ptr<RemoteProcess>> SlurmTransport::StartStep(const Node& node,
                                                                 const CommandLine& cmd,
                                                                 Deadline deadline) {
  if (!launch_.ok()) return launch_;
  const std::string slot = "step-" + std::to_string(next_slot_++);
  std::map<std::string, std::string> env = cmd.env;
  env[kDialSecretEnv] = secret_;
  env[kDialSlotEnv] = slot;
  LocalConnection here;
  auto srun = here.Start(
      CommandLine{SrunAgentsArgv(settings_, job_, {node.name}, AgentArgv(cmd)), env}, deadline);
  if (!srun.ok()) return srun.status().WithContext("starting srun for " + node.name);
  (*srun)->CloseStdin();
  std::optional<Clock::time_point> srun_ended;
  for (;;) {
    auto fd = listener_->Await(node.name, slot, deadline.Within(Millis(500)));
    if (fd.ok()) {
      return std::unique_ptr<RemoteProcess>(std::make_unique<SocketProcess>(
          *fd, node.name + "'s agent (" + slot + ")", std::move(*srun)));
    }
    if (!fd.status().Is(ErrorKind::kTimeout)) return fd.status();
    if ((*srun)->Wait(Deadline::In(Millis(0))).ok() && !srun_ended) srun_ended = RealClock().Now();
    if (deadline.Passed() || (srun_ended && RealClock().Now() - *srun_ended > kAfterSrunGrace)) {
      Status why = WhyNoDialBack(
          node.name, srun->get(),
          Status::Timeout("the step's agent on " + node.name + " did not dial back in time"));
      (*srun)->Kill();
      return why;
    }
  }
}

std::string SlurmTransport::MainSrunSaid() {
  std::lock_guard<std::mutex> lock(srun_mu_);
  return main_srun_ ? main_srun_->StderrSoFar() : "";
}

void SlurmTransport::End() {
  if (ended_) return;
  ended_ = true;
  {
    std::lock_guard<std::mutex> lock(srun_mu_);
    if (main_srun_) main_srun_->Kill();  // srun cancels its step on SIGTERM
  }
  listener_.reset();
  if (!own_allocation_ && !job_.empty()) CancelOwnSteps();
  if (own_allocation_ && !job_.empty()) {
    auto r = RunLocal(ScancelArgv(settings_, job_), kScancelTimeoutS, /*interruptible=*/false);
    if (!r.ok() || r->exit_code != 0) {
      std::fprintf(stderr, "clustercheck: scancel %s failed: %s\n", job_.c_str(),
                   r.ok() ? r->err.c_str() : r.status().ToString().c_str());
    }
  }
}

// Inside the user's allocation the allocation is theirs to keep, but no
// step of this run may outlive it: srun cancels its step on SIGTERM, yet a
// srun that had to be killed, or a step whose srun was lost, would go on
// holding the nodes. So every step still named ours is cancelled.
void SlurmTransport::CancelOwnSteps() {
  auto steps =
      RunLocal(SqueueStepsArgv(settings_, job_), kScancelTimeoutS, /*interruptible=*/false);
  if (!steps.ok() || steps->exit_code != 0) {
    std::fprintf(stderr, "clustercheck: cannot list the steps of job %s (squeue): %s\n",
                 job_.c_str(), steps.ok() ? steps->err.c_str() : steps.status().ToString().c_str());
    return;
  }
  std::vector<std::string> ours = StepsNamed(steps->out, OwnStepName());
  if (ours.empty()) return;
  std::vector<std::string> argv = ScancelArgv(settings_, ours.front());
  argv.insert(argv.end(), ours.begin() + 1, ours.end());
  std::fprintf(stderr, "clustercheck: cancelling %zu step(s) of this run in job %s\n", ours.size(),
               job_.c_str());
  auto r = RunLocal(argv, kScancelTimeoutS, /*interruptible=*/false);
  if (!r.ok() || r->exit_code != 0) {
    std::fprintf(stderr, "clustercheck: scancel of this run's steps failed: %s\n",
                 r.ok() ? r->err.c_str() : r.status().ToString().c_str());
  }
}

nlohmann::json SlurmTransport::LauncherMeta() const {
  nlohmann::json refused =
      listener_ ? nlohmann::json(listener_->refusals()) : nlohmann::json::array();
  return {{"launcher", "slurm"},
          {"job_id", job_},
          {"allocated_by_clustercheck", own_allocation_},
          {"agent_path", agent_path_},
          {"agent_copied_to", copied_to_},
          {"dial_back", connect_},
          {"refused", refused},
          {"launch", launch_.ok() ? "ok" : launch_.ToString()}};
}

}  // namespace cc
