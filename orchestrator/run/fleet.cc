#include "orchestrator/run/fleet.h"

#include <elf.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "orchestrator/run/fanout.h"
#include "orchestrator/transport/framed_command.h"
#include "orchestrator/transport/sha256.h"

namespace cc {

Outcome OutcomeForNodeError(const Status& s) {
  if (s.Is(ErrorKind::kTimeout)) return Outcome::kHang;
  if (s.Is(ErrorKind::kInterrupted) || s.Is(ErrorKind::kLauncherRefused)) return Outcome::kError;
  // Drained by the site: not tested, and not accused.
  if (s.Is(ErrorKind::kOutOfService)) return Outcome::kSkip;
  return Outcome::kFail;
}

std::string ElfMachine(const std::string& b) {
  if (b.size() < sizeof(Elf64_Ehdr) || b.compare(0, 4, ELFMAG) != 0) return "";
  uint16_t machine = 0;
  std::memcpy(&machine, b.data() + offsetof(Elf64_Ehdr, e_machine), 2);
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_PPC64:
      return "ppc64le";
    case EM_386:
      return "i686";
    default:
      return "elf-machine-" + std::to_string(machine);
  }
}

Fleet::Fleet(Transport& transport, const std::vector<Node>& nodes, FleetOptions options)
    : transport_(transport), options_(std::move(options)) {
  for (const Node& n : nodes) {
    auto s = std::make_unique<NodeState>();
    s->node = &n;
    states_.push_back(std::move(s));
  }
}

Fleet::~Fleet() { CloseAll(); }

Status Fleet::Prepare(const std::function<void(const NodeState&)>& on_done) {
  std::ifstream in(options_.agent_binary, std::ios::binary);
  if (!in) {
    return Status::NotFound("agent binary " + options_.agent_binary +
                            " not found (build it with `make programs`, or reinstall the "
                            "clustercheck package; --agent FILE names another)");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  agent_content_ = ss.str();
  agent_machine_ = ElfMachine(agent_content_);
  // Content-addressed: a changed agent gets a new name, an unchanged one
  // is never sent twice.
  agent_name_ = "agent-" + Sha256Hex(agent_content_).substr(0, 16);
  SlidingWindow(states_.size(), options_.fanout, [&](size_t i) {
    NodeState& s = *states_[i];
    Clock::time_point start = clock().Now();
    PrepareOne(s);
    s.prepare_ms = std::chrono::duration<double, std::milli>(clock().Now() - start).count();
    std::lock_guard<std::mutex> lock(callback_mu_);
    if (on_done) on_done(s);
  });
  // Every node has it now or never will in this run: 2 MB less to hold
  // through the stages.
  std::string().swap(agent_content_);
  return Status::Ok();
}

void Fleet::PrepareOne(NodeState& s) {
  const Node& node = *s.node;
  if (InterruptFlag().load()) {
    s.status = Status::Interrupted("interrupted before connecting");
    s.step = "connect";
    return;
  }
  auto conn = transport_.Connect(node, Deadline::InSeconds(clock(), node.ssh.connect_timeout_s));
  if (!conn.ok()) {
    s.status = conn.status();
    s.step = "connect";
    return;
  }
  s.connection = std::move(*conn);
  s.warnings = s.connection->Warnings();
  if (options_.push) {
    Status pushed = Push(s);
    if (!pushed.ok()) {
      s.status = pushed;
      s.step = "push";
      return;
    }
  } else {
    s.agent_path = options_.agent_binary;
  }
  auto agent = StartAgent(s, Deadline::InSeconds(clock(), options_.hello_timeout_s));
  if (!agent.ok()) {
    s.status = agent.status();
    s.step = "hello";
    return;
  }
  s.agent = std::move(*agent);
  s.warnings = s.connection->Warnings();  // starting it may have added one
  if (s.shell_noise.empty()) s.shell_noise = s.agent->preamble();
}

Status Fleet::Push(NodeState& s) {
  const Node& node = *s.node;
  std::string dir = node.ssh.agent_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  s.agent_path = dir + "/" + agent_name_;
  // One round trip tells the architecture, whether the agent is already
  // there, and how long the shell takes to start. Framed: a login shell's
  // banner must not be read as `uname -m`.
  auto probe =
      RunFramed(*s.connection,
                "uname -m; stat -c %s " + ShellQuote(s.agent_path) + " 2>/dev/null || echo missing",
                Deadline::InSeconds(clock(), node.ssh.command_timeout_s));
  if (!probe.ok()) return probe.status().WithContext("probing the node");
  s.shell_noise = probe->shell_noise;
  s.shell_startup_s = probe->startup_s;
  std::istringstream lines(probe->output);
  std::string arch, size;
  std::getline(lines, arch);
  std::getline(lines, size);
  if (!agent_machine_.empty() && arch != agent_machine_) {
    return Status::Error(ErrorKind::kBadArgument,
                         "node is " + arch + " but the agent was built for " + agent_machine_ +
                             "; build clustercheck-agent for " + arch);
  }
  if (size == std::to_string(agent_content_.size())) return Status::Ok();
  Status up = s.connection->Upload(
      agent_content_, s.agent_path, 0755,
      Deadline::InSeconds(clock(), node.ssh.command_timeout_s + s.shell_startup_s));
  if (!up.ok()) return up.WithContext("uploading the agent to " + s.agent_path);
  s.bytes_pushed = static_cast<long long>(agent_content_.size());
  return Status::Ok();
}

Result<std::unique_ptr<AgentChannel>> Fleet::StartAgent(NodeState& s, Deadline deadline) {
  const Node& node = *s.node;
  deadline = deadline.Extended(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(s.shell_startup_s)));
  CommandLine cmd{{s.agent_path, "--root=" + node.root}, node.env, /*agent=*/true};
  auto proc = s.connection->Start(cmd, deadline);
  if (!proc.ok()) return proc.status().WithContext("starting the agent");
  auto channel = std::make_unique<AgentChannel>(std::move(*proc), deadline.clock());
  auto hello = channel->ReadHello(deadline);
  if (!hello.ok()) {
    channel->Close(Millis(200));
    return hello.status();
  }
  s.hello = *hello;
  return channel;
}

Status Fleet::Reconnect(NodeState& s) {
  if (!transport_.Reconnects()) {
    return Status::BadArgument("the " + transport_.name() + " launcher cannot connect again");
  }
  const Node& node = *s.node;
  auto conn = transport_.Connect(node, Deadline::InSeconds(clock(), node.ssh.connect_timeout_s));
  if (!conn.ok()) return conn.status().WithContext("connecting again");
  std::unique_ptr<Connection> old = std::exchange(s.connection, std::move(*conn));
  auto agent = StartAgent(s, Deadline::InSeconds(clock(), options_.hello_timeout_s));
  if (!agent.ok()) {
    s.connection = std::move(old);
    return agent.status().WithContext("starting its agent again");
  }
  // The old agent's process holds what it needs of the old connection.
  if (s.agent) s.agent->Close(Millis(200));
  s.agent = std::move(*agent);
  return Status::Ok();
}

void Fleet::ForEach(const std::vector<std::string>& names,
                    const std::function<void(NodeState&)>& fn) {
  std::vector<NodeState*> todo;
  for (auto& s : states_) {
    if (!s->usable()) continue;
    if (!names.empty() && std::find(names.begin(), names.end(), s->node->name) == names.end()) {
      continue;
    }
    todo.push_back(s.get());
  }
  SlidingWindow(todo.size(), options_.fanout, [&](size_t i) { fn(*todo[i]); });
}

std::vector<NodeState*> Fleet::Usable() {
  std::vector<NodeState*> out;
  for (auto& s : states_) {
    if (s->usable()) out.push_back(s.get());
  }
  return out;
}

void Fleet::MarkUnusable(const std::string& name, Status why, const std::string& step) {
  NodeState* s = Find(name);
  if (s == nullptr || !s->usable()) return;
  s->status = std::move(why);
  s->step = step;
}

NodeState* Fleet::Find(const std::string& name) {
  for (auto& s : states_) {
    if (s->node->name == name) return s.get();
  }
  return nullptr;
}

long long Fleet::bytes_pushed() const {
  long long total = 0;
  for (const auto& s : states_) total += s->bytes_pushed;
  return total;
}

void Fleet::CloseAll() {
  // Closing stdin makes every agent exit; in parallel so that a slow node
  // does not delay the others.
  SlidingWindow(states_.size(), options_.fanout, [&](size_t i) {
    if (states_[i]->agent) states_[i]->agent->Close(Millis(1000));
  });
}

}  // namespace cc
