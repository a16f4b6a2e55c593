#include "orchestrator/transport/ssh_dial_back.h"

#include <cstdio>

#include "agent/dial_back.h"
#include "common/random_hex.h"
#include "orchestrator/transport/socket_process.h"

namespace cc {
namespace {

// How often a start that waits for its agent looks whether the ssh command
// already ended (then it will never dial).
constexpr Millis kLookMs{200};
// How long a start still waits for the dial of an agent whose command
// ended with a failure: a connection made just before may still be read.
constexpr Millis kLateDialMs{1000};
// The secret's size: 128 bits, as the Slurm launcher's.
constexpr size_t kSecretBytes = 16;

// How long a dialled agent's ssh command may take to end once the agent
// left it (agent/main.cc DetachFromLauncher). Longer only under a load that
// delays the exit status; then the command is dropped all the same.
constexpr Millis kLauncherExitMs{5000};

// The agent on `node` dialled in on `fd`: it leaves its ssh command
// (kDialDetachEnv), which then ends by itself, and this side lets it end
// before dropping it. Dropping a command kills what is still in it (a
// local stand-in for ssh kills its process group), which must never be an
// agent that dialled; it lets the connection close its ssh session
// (SshConnection).
Result<std::unique_ptr<RemoteProcess>> Dialled(int fd, const std::string& node,
                                               std::unique_ptr<RemoteProcess> ssh_command) {
  (void)ssh_command->Wait(Deadline::In(kLauncherExitMs));
  ssh_command.reset();
  return std::unique_ptr<RemoteProcess>(std::make_unique<SocketProcess>(
      fd, node + "'s agent", nullptr, std::function<std::string()>{}, /*slurm_launcher=*/false));
}

}  // namespace

Result<std::unique_ptr<SshDialBack>> SshDialBack::Open(const std::string& listen,
                                                       const std::string& towards,
                                                       std::set<std::string> nodes) {
  std::string host = listen;
  int port = 0;
  if (std::string h; SplitHostPort(listen, &h, &port)) host = h;
  if (host.empty()) {
    host = LocalAddressTowards(towards);
    if (host.empty()) {
      return Status::Unreachable("no route from this machine to " + towards +
                                 " for the agents to dial back; set [ssh] dial_back_listen");
    }
  }
  std::string secret = RandomHex(kSecretBytes);
  auto listener =
      DialBackListener::Open(host, port, secret, std::move(nodes), [](const std::string& what) {
        std::fprintf(stderr, "clustercheck: ssh dial_back: %s\n", what.c_str());
      });
  if (!listener.ok()) return listener.status().WithContext("[ssh] dial_back");
  std::string connect = host + ":" + std::to_string((*listener)->port());
  return std::unique_ptr<SshDialBack>(
      new SshDialBack(std::move(*listener), std::move(secret), std::move(connect)));
}

SshDialBack::SshDialBack(std::unique_ptr<DialBackListener> listener, std::string secret,
                         std::string connect)
    : listener_(std::move(listener)), secret_(std::move(secret)), connect_(std::move(connect)) {}

CommandLine SshDialBack::Wrapped(const std::string& node, const std::string& slot,
                                 const std::string& connect, const CommandLine& agent) {
  CommandLine inner = agent;
  inner.argv.push_back("--connect=" + connect);
  inner.env[kDialSlotEnv] = slot;
  inner.env[kDialNodeEnv] = node;
  inner.env[kDialDetachEnv] = "1";
  inner.agent = false;
  std::string var = kDialSecretEnv;
  // sh, not the login shell: `read` and `export` as POSIX has them.
  std::string script =
      "IFS= read -r " + var + " && export " + var + " && exec " + ShellQuoteCommand(inner);
  return CommandLine{{"sh", "-c", script}, {}};
}

Result<std::unique_ptr<RemoteProcess>> SshDialBack::Start(const std::string& node,
                                                          const CommandLine& agent,
                                                          const StartCommand& start,
                                                          Deadline deadline) {
  const std::string slot = "ssh-" + std::to_string(next_slot_++);
  auto proc = start(Wrapped(node, slot, connect_, agent), deadline);
  if (!proc.ok()) return proc.status();
  Status gave = (*proc)->WriteStdin(secret_ + "\n", deadline);
  if (!gave.ok()) {
    (*proc)->Kill();
    return gave.WithContext("giving the agent on " + node + " its secret");
  }
  (*proc)->CloseStdin();
  for (;;) {
    auto fd = listener_->Await(node, slot, deadline.Within(kLookMs));
    if (fd.ok()) return Dialled(*fd, node, std::move(*proc));
    if (!fd.status().Is(ErrorKind::kTimeout)) {
      (*proc)->Kill();
      return fd.status();
    }
    auto exited = (*proc)->Wait(Deadline::In(Millis(0)));
    if (exited.ok()) {
      // 0 is the agent leaving its command once it dialled (DetachFromLauncher):
      // its connection is on the way to the listener, which under load may
      // take a while to read its hello, so it is awaited to the deadline.
      // Any other exit: it may have dialled just before it ended.
      const Deadline late_by = *exited == 0 ? deadline : deadline.Within(kLateDialMs);
      if (auto late = listener_->Await(node, slot, late_by); late.ok()) {
        return Dialled(*late, node, std::move(*proc));
      }
      std::string err = (*proc)->StderrSoFar();
      if (err.size() > 2000) err = "..." + err.substr(err.size() - 2000);
      if (*exited == 0) {
        return Status::Timeout("the agent on " + node + " dialled " + connect_ +
                               " and left its ssh command, but its connection never got here "
                               "in time" +
                               (err.empty() ? "" : "; stderr: " + err));
      }
      return Status::Eof("the agent on " + node + " exited with " + std::to_string(*exited) +
                         " before dialling back to " + connect_ +
                         (err.empty() ? "" : "; stderr: " + err));
    }
    if (deadline.Passed()) {
      std::string err = (*proc)->StderrSoFar();
      (*proc)->Kill();
      return Status::Timeout("the agent on " + node + " did not dial back to " + connect_ +
                             " in time (can the node reach this machine there? [ssh] "
                             "dial_back_listen sets the address)" +
                             (err.empty() ? "" : "; stderr: " + err));
    }
  }
}

nlohmann::json SshDialBack::Meta() const {
  return {{"launcher", "ssh"},
          {"dial_back", connect_},
          {"refused", listener_->refusals()},
          {"over_ssh", fell_back_.load()}};
}

}  // namespace cc
