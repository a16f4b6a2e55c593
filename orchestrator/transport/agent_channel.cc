#include "orchestrator/transport/agent_channel.h"

#include <algorithm>

#include "common/shell_frame.h"

namespace cc {

std::atomic<bool>& InterruptFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

Json CallResult::Find(const std::string& name) const {
  for (const auto& r : results) {
    if (r.value("name", "") == name) return r.value("data", Json());
  }
  return Json();
}

AgentChannel::AgentChannel(std::unique_ptr<RemoteProcess> process, Clock& clock)
    : process_(std::move(process)), clock_(clock) {}

AgentChannel::~AgentChannel() { Close(Millis(500)); }

Status AgentChannel::Describe(Status s) {
  std::string err = process_->StderrSoFar();
  if (err.size() > 600) err = "..." + err.substr(err.size() - 600);
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
  if (err.empty()) return s;
  return Status::Error(s.kind(), s.message() + " (stderr: " + err + ")");
}

Result<Json> AgentChannel::Next(Deadline deadline) {
  std::string raw;
  auto msg = NextMessage(deadline, &raw);
  if (!msg.ok() && !raw.empty()) return Describe(msg.status());
  return msg;
}

Result<Json> AgentChannel::NextMessage(Deadline deadline, std::string* raw) {
  for (;;) {
    if (InterruptFlag().load()) return Status::Interrupted("interrupted");
    Deadline slice = deadline.Within(Millis(kCancelPollMs));
    auto line = process_->ReadLine(slice);
    if (line.ok()) {
      if (line->empty()) continue;
      auto msg = protocol::ParseMessage(*line);
      if (!msg.ok()) *raw = std::move(*line);
      return msg;
    }
    if (line.status().Is(ErrorKind::kTimeout)) {
      if (deadline.Passed()) return line.status();
      // Before the slice ended: the process's own verdict (Slurm ended its
      // step at the time limit: socket_process.h), not the end of our wait.
      if (!slice.Passed()) return Describe(line.status());
      continue;
    }
    if (line.status().Is(ErrorKind::kEof)) {
      return Describe(Status::Eof("agent exited"));
    }
    return Describe(line.status());
  }
}

Result<Json> AgentChannel::ReadHello(Deadline deadline) {
  for (;;) {
    std::string raw;
    auto msg = NextMessage(deadline, &raw);
    if (!msg.ok() && !raw.empty()) {
      // Not the agent yet: the shell talking. Keep it for the notice.
      if (preamble_.size() < kMaxPreamble) {
        preamble_ += raw.substr(0, kMaxPreamble - preamble_.size());
        preamble_ += '\n';
      }
      continue;
    }
    std::string before =
        preamble_.empty() ? "" : " (before it, stdout said: " + QuoteShellText(preamble_) + ")";
    if (!msg.ok()) {
      if (msg.status().Is(ErrorKind::kTimeout)) {
        return Describe(Status::Timeout("no hello from the agent within the deadline" + before));
      }
      // Already with stderr (NextMessage); the shell's words go after it.
      Status s = msg.status();
      if (!s.Is(ErrorKind::kInterrupted)) s = Status::Error(s.kind(), s.message() + before);
      return s.WithContext("hello");
    }
    Status s = protocol::CheckHello(*msg);
    if (!s.ok()) return s;
    return msg;
  }
}

Result<int64_t> AgentChannel::Send(const std::string& cmd, const Json& args, Deadline deadline) {
  int64_t id = next_id_++;
  std::string line = protocol::MakeRequest(id, cmd, args).dump() + "\n";
  Status s = process_->WriteStdin(line, deadline);
  if (!s.ok()) return Describe(s).WithContext("send " + cmd);
  return id;
}

Status AgentChannel::SendControl(int64_t id, const std::string& cmd, const Json& args,
                                 Deadline deadline) {
  std::string line = protocol::MakeRequest(id, cmd, args).dump() + "\n";
  return process_->WriteStdin(line, deadline);
}

Result<CallResult> AgentChannel::Call(const std::string& cmd, const Json& args, Deadline deadline,
                                      const std::function<void(const Json&)>& on_message) {
  auto id = Send(cmd, args, deadline);
  if (!id.ok()) return id.status();
  CallResult out;
  for (;;) {
    auto msg = Next(deadline);
    if (!msg.ok()) return msg.status().WithContext(cmd);
    const Json& m = *msg;
    if (m.value("id", int64_t{-2}) != *id) continue;  // stale message
    if (on_message) on_message(m);
    std::string type = m.value("type", "");
    if (type == "result") {
      out.results.push_back(m);
    } else if (type == "log") {
      out.logs.push_back(m);
    } else if (type == "end") {
      if (!m.value("ok", false)) {
        return Status::Internal("agent: " + m.value("error", std::string("failed")))
            .WithContext(cmd);
      }
      return out;
    }
  }
}

void AgentChannel::Close(Millis grace) {
  if (closed_) return;
  closed_ = true;
  process_->CloseStdin();
  auto code = process_->Wait(Deadline::In(clock_, grace));
  if (!code.ok()) process_->Kill();
}

}  // namespace cc
