#include "orchestrator/transport/ssh_process.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace cc {
namespace {

constexpr size_t kStderrKeep = 64 * 1024;
// Longest stdout line accepted (as LocalTransport).
constexpr size_t kMaxLine = 16 * 1024 * 1024;
// Upper bound of one wait on the socket: a guard against libssh holding
// data it already read (it should not), and the granularity at which a
// deadline is noticed when nothing arrives.
constexpr long long kSliceMs = 100;
// One ssh_channel_write at most; also at most the remote window, so that
// the write never waits inside libssh for a window adjust.
constexpr size_t kWriteChunk = 32 * 1024;
// Bound for Kill, CloseStdin and the destructor, which have no deadline.
constexpr Millis kHousekeeping{2000};
// How long Kill waits for the exit status after sending SIGKILL.
constexpr Millis kKillGrace{500};

}  // namespace

int ExitCodeForSignal(const std::string& name) {
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ILL", 4},   {"TRAP", 5},
      {"ABRT", 6},  {"BUS", 7},   {"FPE", 8},   {"KILL", 9},  {"USR1", 10},
      {"SEGV", 11}, {"USR2", 12}, {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15},
  };
  for (const auto& [n, number] : kSignals) {
    if (name == n) return 128 + number;
  }
  return 128;
}

Result<std::unique_ptr<RemoteProcess>> SshProcess::Start(std::shared_ptr<SshSession> session,
                                                         const std::string& command,
                                                         const std::string& where,
                                                         Deadline deadline) {
  if (session->broken()) {
    return Status::Unreachable(where + ": connection was cut at an earlier deadline");
  }
  BlockingCall bounded(*session, deadline);
  ssh_channel channel = ssh_channel_new(session->get());
  if (channel == nullptr) return Status::Internal(where + ": ssh_channel_new failed");
  // From here the process owns the channel (its destructor frees it).
  std::unique_ptr<SshProcess> p(new SshProcess(session, channel, where));
  if (ssh_channel_open_session(channel) != SSH_OK) {
    if (deadline.Passed())
      return Status::Timeout(where + ": opening a channel: no answer by the deadline");
    return Status::Io(where + ": cannot open a channel: " + session->Error());
  }
  if (ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    if (deadline.Passed()) return Status::Timeout(where + ": exec: no answer by the deadline");
    return Status::Io(where + ": exec refused: " + session->Error());
  }
  return std::unique_ptr<RemoteProcess>(std::move(p));
}

SshProcess::SshProcess(std::shared_ptr<SshSession> session, ssh_channel channel, std::string where)
    : session_(std::move(session)), channel_(channel), where_(std::move(where)) {
  callbacks_.userdata = this;
  callbacks_.channel_exit_status_function = &SshProcess::OnExitStatus;
  callbacks_.channel_exit_signal_function = &SshProcess::OnExitSignal;
  ssh_callbacks_init(&callbacks_);
  ssh_set_channel_callbacks(channel_, &callbacks_);
}

SshProcess::~SshProcess() {
  ssh_remove_channel_callbacks(channel_, &callbacks_);
  if (!session_->broken() && ssh_channel_is_open(channel_)) {
    BlockingCall bounded(*session_, Deadline::In(kHousekeeping));
    ssh_channel_close(channel_);
  }
  ssh_channel_free(channel_);
}

void SshProcess::OnExitStatus(ssh_session, ssh_channel, int status, void* self) {
  static_cast<SshProcess*>(self)->exit_code_ = status;
}

void SshProcess::OnExitSignal(ssh_session, ssh_channel, const char* signal, int, const char*,
                              const char*, void* self) {
  static_cast<SshProcess*>(self)->exit_code_ = ExitCodeForSignal(signal != nullptr ? signal : "");
}

void SshProcess::AppendStderr(const char* data, size_t n) {
  err_.append(data, n);
  if (err_.size() > kStderrKeep) err_.erase(0, err_.size() - kStderrKeep);
}

Status SshProcess::Lost(const std::string& doing) const {
  return Status::Unreachable(where_ + ": connection lost while " + doing + ": " +
                             session_->Error());
}

Status SshProcess::Pump(bool* progressed) {
  if (session_->broken()) {
    return Status::Unreachable(where_ + ": connection was cut at an earlier deadline");
  }
  bool had_exit = exit_code_.has_value();
  char buf[16384];
  // stderr first: it is the one nobody waits for, so it must not fill up.
  for (int is_stderr : {1, 0}) {
    // A caller that does not read lines gets back-pressure, not a heap
    // that grows without end: past kMaxLine the remote waits on its window.
    while (is_stderr || out_.size() < kMaxLine) {
      int n = ssh_channel_read_nonblocking(channel_, buf, sizeof buf, is_stderr);
      if (n > 0) {
        if (is_stderr) {
          AppendStderr(buf, static_cast<size_t>(n));
        } else {
          out_.append(buf, static_cast<size_t>(n));
        }
        *progressed = true;
        continue;
      }
      if (n == SSH_EOF) {
        if (!is_stderr && !out_eof_) {
          out_eof_ = true;
          *progressed = true;
        }
      } else if (n == SSH_ERROR) {
        // A channel the remote closed reports an error here on some libssh
        // versions; that is an end, not a loss.
        if (!ssh_channel_is_closed(channel_) ||
            ssh_get_status(session_->get()) & SSH_CLOSED_ERROR) {
          return Lost("reading output");
        }
        if (!is_stderr && !out_eof_) {
          out_eof_ = true;
          *progressed = true;
        }
      }
      break;
    }
  }
  if (out_eof_ && !exit_code_ && !ssh_channel_is_closed(channel_)) {
    // After the remote EOF, libssh's channel reads no longer touch the
    // socket, so an exit-status packet that arrived later than the EOF
    // would sit there unread until the deadline. One non-blocking pass of
    // libssh's own packet loop processes it (and fires OnExitStatus).
    ssh_set_blocking(session_->get(), 0);
    ssh_channel_get_exit_status(channel_);
    ssh_set_blocking(session_->get(), 1);
  }
  if (!had_exit && exit_code_.has_value()) *progressed = true;
  return Status::Ok();
}

Status SshProcess::WaitForData(Deadline deadline) {
  bool progressed = false;
  Status s = Pump(&progressed);
  if (!s.ok() || progressed) return s;
  long long ms = std::min(kSliceMs, deadline.RemainingMs());
  if (ms <= 0) return Status::Ok();
  pollfd p{};
  p.fd = ssh_get_fd(session_->get());
  p.events = POLLIN;
  if (p.fd < 0) return Lost("waiting");
  ::poll(&p, 1, static_cast<int>(ms));
  return Status::Ok();
}

Result<std::string> SshProcess::ReadLine(Deadline deadline) {
  bool last_try = false;
  for (;;) {
    size_t nl = out_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_.substr(0, nl);
      out_.erase(0, nl + 1);
      return line;
    }
    if (out_.size() >= kMaxLine) {
      return Status::Protocol(where_ + ": stdout line longer than " + std::to_string(kMaxLine) +
                              " bytes");
    }
    if (out_eof_ || killed_) {
      if (!out_.empty()) return std::exchange(out_, std::string());  // unterminated
      return Status::Eof(where_ + ": stdout closed");
    }
    if (last_try) {
      return Status::Timeout(where_ + ": no complete output line by the deadline");
    }
    // At the deadline, still take what has already arrived.
    last_try = deadline.Passed();
    Status s = WaitForData(deadline);
    if (!s.ok()) return s;
  }
}

Result<int> SshProcess::Wait(Deadline deadline) {
  bool last_try = false;
  for (;;) {
    if (exit_code_) return *exit_code_;
    if (killed_ && !session_->broken()) {
      // We closed our end; sshd still reports the exit of a child that
      // outlived the close, then closes its end. libssh's own wait handles
      // a locally closed channel (our reads do not).
      {
        BlockingCall bounded(*session_, deadline);
        ssh_channel_get_exit_status(channel_);
      }
      if (exit_code_) return *exit_code_;
      if (deadline.Passed())
        return Status::Timeout(where_ + ": killed, but no exit by the deadline");
      return Status::Protocol(where_ + ": killed; the channel closed without an exit status");
    }
    if (killed_ || ssh_channel_is_closed(channel_)) {
      // One last look: the status may sit unprocessed on the socket.
      bool progressed = false;
      if (!killed_ && Pump(&progressed).ok() && exit_code_) return *exit_code_;
      return Status::Protocol(where_ + ": the channel closed without an exit status");
    }
    if (last_try) return Status::Timeout(where_ + ": still running at the deadline");
    last_try = deadline.Passed();
    Status s = WaitForData(deadline);
    if (!s.ok()) return s;
  }
}

Status SshProcess::WriteStdin(std::string_view data, Deadline deadline) {
  if (killed_ || stdin_closed_) return Status::Eof(where_ + ": stdin is closed");
  size_t off = 0;
  while (off < data.size()) {
    if (session_->broken()) return Lost("writing input");
    if (ssh_channel_is_closed(channel_))
      return Status::Eof(where_ + ": the process closed its input");
    uint32_t window = ssh_channel_window_size(channel_);
    if (window == 0) {
      if (deadline.Passed())
        return Status::Timeout(where_ + ": the process did not read its input by the deadline");
      Status s = WaitForData(deadline);
      if (!s.ok()) return s;
      continue;
    }
    size_t n = std::min({static_cast<size_t>(window), data.size() - off, kWriteChunk});
    int rc;
    {
      BlockingCall bounded(*session_, deadline);
      rc = ssh_channel_write(channel_, data.data() + off, static_cast<uint32_t>(n));
    }
    if (rc == SSH_ERROR) {
      if (deadline.Passed()) return Status::Timeout(where_ + ": writing input: deadline passed");
      if (ssh_channel_is_closed(channel_))
        return Status::Eof(where_ + ": the process closed its input");
      return Lost("writing input");
    }
    off += static_cast<size_t>(rc);
    // Keep the output flowing: a process that echoes (cat) would otherwise
    // stop reading once its stdout window is full.
    bool progressed = false;
    Status s = Pump(&progressed);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void SshProcess::CloseStdin() {
  if (stdin_closed_ || killed_) return;
  stdin_closed_ = true;
  if (session_->broken() || !ssh_channel_is_open(channel_)) return;
  BlockingCall bounded(*session_, Deadline::In(kHousekeeping));
  ssh_channel_send_eof(channel_);
}

void SshProcess::Kill() {
  if (killed_) return;
  killed_ = true;
  if (session_->broken() || !ssh_channel_is_open(channel_)) return;
  {
    BlockingCall bounded(*session_, Deadline::In(kHousekeeping));
    ssh_channel_request_send_signal(channel_, "KILL");
  }
  // A moment for sshd to report the death, so that Wait() can say 137;
  // closing first would make sshd drop the exit status.
  Deadline grace = Deadline::In(kKillGrace);
  while (!exit_code_ && !ssh_channel_is_closed(channel_) && !grace.Passed()) {
    if (!WaitForData(grace).ok()) return;
  }
  if (session_->broken() || !ssh_channel_is_open(channel_)) return;
  BlockingCall bounded(*session_, Deadline::In(kHousekeeping));
  ssh_channel_close(channel_);
}

}  // namespace cc
