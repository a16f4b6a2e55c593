#include "orchestrator/transport/fake_transport.h"

#include <signal.h>

#include <condition_variable>
#include <deque>

#include "agent/protocol.h"
#include "version.h"

namespace cc {
namespace {

constexpr size_t kStderrKeep = 64 * 1024;

// A scripted process. Its state is guarded so that Kill() from another
// thread wakes a ReadLine or Wait that is blocked until its deadline.
class FakeProcess : public RemoteProcess {
 public:
  FakeProcess(CommandLine cmd, FakeProgram program)
      : cmd_(std::move(cmd)), program_(std::move(program)) {
    std::lock_guard lock(mu_);
    hung_ = program_.hang;
    if (!hung_ && program_.on_start) Apply(program_.on_start(cmd_));
  }

  Status WriteStdin(std::string_view data, Deadline deadline) override {
    std::unique_lock lock(mu_);
    if (exited_ || stdin_closed_) {
      return Status::Eof(Name() + ": stdin is closed");
    }
    partial_.append(data);
    for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
      std::string line = partial_.substr(0, nl);
      partial_.erase(0, nl + 1);
      if (hung_ || exited_ || !program_.on_line) continue;
      // The callback runs unlocked: it may take its time or block.
      lock.unlock();
      FakeReply reply = program_.on_line(cmd_, line);
      lock.lock();
      Apply(std::move(reply));
    }
    return Status::Ok();
  }

  void CloseStdin() override {
    std::lock_guard lock(mu_);
    stdin_closed_ = true;
    if (!hung_) Exit(program_.exit_code);
  }

  Result<std::string> ReadLine(Deadline deadline) override {
    std::unique_lock lock(mu_);
    deadline.clock().WaitUntil(cv_, lock, deadline.at(), [&] { return !out_.empty() || exited_; });
    if (!out_.empty()) {
      std::string line = std::move(out_.front());
      out_.pop_front();
      return line;
    }
    if (exited_) return Status::Eof(Name() + ": stdout closed");
    return Status::Timeout(Name() + ": no output in time");
  }

  std::string StderrSoFar() override {
    std::lock_guard lock(mu_);
    return err_;
  }

  Result<int> Wait(Deadline deadline) override {
    std::unique_lock lock(mu_);
    if (!deadline.clock().WaitUntil(cv_, lock, deadline.at(), [&] { return exited_; })) {
      return Status::Timeout(Name() + ": still running at the deadline");
    }
    return exit_code_;
  }

  void Kill() override {
    std::lock_guard lock(mu_);
    stdin_closed_ = true;
    Exit(128 + SIGTERM);
  }

 private:
  std::string Name() const { return cmd_.argv.empty() ? std::string("fake") : cmd_.argv[0]; }
  // REQUIRES: mu_ held.
  void Apply(FakeReply reply) {
    if (exited_) return;
    for (auto& l : reply.lines) out_.push_back(std::move(l));
    err_ += reply.err;
    if (err_.size() > kStderrKeep) err_.erase(0, err_.size() - kStderrKeep);
    if (reply.exit) Exit(program_.exit_code);
    if (reply.hang) hung_ = true;
    cv_.notify_all();
  }
  // REQUIRES: mu_ held. The first exit wins, as for a real process.
  void Exit(int code) {
    if (exited_) return;
    exited_ = true;
    exit_code_ = code;
    cv_.notify_all();
  }

  const CommandLine cmd_;
  const FakeProgram program_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> out_;
  std::string err_;
  std::string partial_;  // stdin after the last '\n'
  bool stdin_closed_ = false;
  bool hung_ = false;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace

class FakeConnection : public Connection {
 public:
  FakeConnection(FakeTransport* t, std::string node, FakeNode script)
      : t_(t), node_(std::move(node)), script_(std::move(script)) {}

  Result<std::unique_ptr<RemoteProcess>> Start(const CommandLine& cmd, Deadline deadline) override {
    {
      std::lock_guard lock(t_->mu_);
      t_->state_[node_].started.push_back(cmd);
    }
    if (!script_.start_error.ok()) return script_.start_error;
    return std::unique_ptr<RemoteProcess>(new FakeProcess(cmd, script_.program));
  }

  Status Upload(const std::string& content, const std::string& remote_path, int mode,
                Deadline deadline) override {
    if (!script_.upload_error.ok()) return script_.upload_error;
    std::lock_guard lock(t_->mu_);
    auto& st = t_->state_[node_];
    st.files[remote_path] = content;
    ++st.uploads;
    return Status::Ok();
  }

  Result<long long> FileSize(const std::string& remote_path, Deadline deadline) override {
    std::lock_guard lock(t_->mu_);
    auto& files = t_->state_[node_].files;
    auto it = files.find(remote_path);
    if (it == files.end()) {
      return Status::NotFound(node_ + ": no file " + remote_path);
    }
    return static_cast<long long>(it->second.size());
  }

  std::string Describe() const override { return "fake " + node_; }

 private:
  FakeTransport* t_;
  std::string node_;
  FakeNode script_;
};

void FakeTransport::SetNode(const std::string& name, FakeNode node) {
  std::lock_guard lock(mu_);
  scripts_[name] = std::move(node);
}

void FakeTransport::SetDefault(FakeNode node) {
  std::lock_guard lock(mu_);
  default_ = std::move(node);
}

void FakeTransport::SetFile(const std::string& node, const std::string& path,
                            const std::string& content) {
  std::lock_guard lock(mu_);
  state_[node].files[path] = content;
}

std::map<std::string, std::string> FakeTransport::Files(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = state_.find(node);
  return it == state_.end() ? std::map<std::string, std::string>{} : it->second.files;
}

int FakeTransport::UploadCount(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = state_.find(node);
  return it == state_.end() ? 0 : it->second.uploads;
}

std::vector<CommandLine> FakeTransport::Started(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = state_.find(node);
  return it == state_.end() ? std::vector<CommandLine>{} : it->second.started;
}

int FakeTransport::ConnectCount(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = state_.find(node);
  return it == state_.end() ? 0 : it->second.connects;
}

FakeNode FakeTransport::ScriptFor(const std::string& node) const {
  auto it = scripts_.find(node);
  return it == scripts_.end() ? default_ : it->second;
}

Result<std::unique_ptr<Connection>> FakeTransport::Connect(const Node& node, Deadline deadline) {
  FakeNode script;
  {
    std::lock_guard lock(mu_);
    ++state_[node.name].connects;
    script = ScriptFor(node.name);
  }
  if (script.connect_hangs) {
    deadline.clock().SleepUntil(deadline.at());
    return Status::Timeout(node.name + ": connect: no answer in time");
  }
  if (!script.connect_error.ok()) return script.connect_error;
  return std::unique_ptr<Connection>(new FakeConnection(this, node.name, std::move(script)));
}

FakeProgram FakeAgent(std::function<std::vector<nlohmann::json>(const nlohmann::json&)> answer,
                      const std::string& hostname, int version) {
  using protocol::Json;
  FakeProgram p;
  int v = version < 0 ? protocol::kVersion : version;
  p.on_start = [hostname, v](const CommandLine&) {
    return FakeReply::Lines(
        {protocol::MakeHello(CLUSTERCHECK_VERSION, "x86_64", 4242, hostname, v).dump()});
  };
  p.on_line = [answer](const CommandLine&, const std::string& line) {
    FakeReply reply;
    auto req = protocol::ParseRequest(line);
    if (!req.ok()) {
      reply.lines.push_back(protocol::MakeEnd(0, false, req.status().message()).dump());
      return reply;
    }
    int64_t id = req->value("id", int64_t{0});
    bool ended = false;
    for (const Json& m : answer(*req)) {
      ended = ended || m.value("type", "") == "end";
      reply.lines.push_back(m.dump());
    }
    if (!ended) reply.lines.push_back(protocol::MakeEnd(id, true).dump());
    return reply;
  };
  return p;
}

}  // namespace cc
