#include "orchestrator/transport/socket_process.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <thread>

namespace cc {
namespace {

constexpr size_t kMaxLine = 16 * 1024 * 1024;
// An empty buffer keeps at most this much room between reads.
constexpr size_t kIdleBufferBytes = 4096;
constexpr int kSliceMs = 200;
// How long a closed connection waits for its launcher's last words.
constexpr int kLauncherWordsMs = 3000;

int ClampMs(long long ms) { return static_cast<int>(std::clamp<long long>(ms, 0, kSliceMs)); }

}  // namespace

std::string SlurmTimeLimitLine(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("CANCELLED") != std::string::npos &&
        line.find("DUE TO TIME LIMIT") != std::string::npos) {
      return line;
    }
  }
  return "";
}

SocketProcess::SocketProcess(int fd, std::string name, std::unique_ptr<RemoteProcess> launcher,
                             std::function<std::string()> launcher_said, bool slurm_launcher)
    : fd_(fd),
      name_(std::move(name)),
      launcher_(std::move(launcher)),
      launcher_said_(std::move(launcher_said)),
      slurm_launcher_(slurm_launcher) {}

SocketProcess::~SocketProcess() { Kill(); }

Status SocketProcess::WriteStdin(std::string_view data, Deadline deadline) {
  size_t off = 0;
  while (off < data.size()) {
    if (fd_ < 0 || write_closed_) return Status::Eof(name_ + ": the connection is closed");
    ssize_t n = send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN)
      return EndOfStream("writing: " + std::string(std::strerror(errno)));
    if (deadline.Passed()) return Status::Timeout(name_ + ": its connection took no more in time");
    pollfd p{fd_, POLLOUT, 0};
    poll(&p, 1, ClampMs(deadline.RemainingMs()));
  }
  return Status::Ok();
}

void SocketProcess::CloseStdin() {
  if (fd_ >= 0 && !write_closed_) shutdown(fd_, SHUT_WR);
  write_closed_ = true;
}

Result<std::string> SocketProcess::ReadLine(Deadline deadline) {
  bool last_try = false;
  for (;;) {
    if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      // A burst of answers grows the buffer; one kept that large per agent
      // was 2.4 MB at 128 nodes (heaptrack), for nothing between bursts.
      if (buf_.empty() && buf_.capacity() > kIdleBufferBytes) std::string().swap(buf_);
      return line;
    }
    if (buf_.size() >= kMaxLine) {
      return Status::Protocol(name_ + ": a line longer than " + std::to_string(kMaxLine) +
                              " bytes");
    }
    if (eof_) {
      if (!buf_.empty()) return std::exchange(buf_, {});
      return EndOfStream("its connection closed");
    }
    if (last_try) return Status::Timeout(name_ + ": no output in time");
    last_try = deadline.Passed();
    Pump(last_try ? 0 : ClampMs(deadline.RemainingMs()));
  }
}

void SocketProcess::Pump(int ms) {
  if (fd_ < 0) {
    eof_ = true;
    return;
  }
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0) return;
  char chunk[65536];
  for (;;) {
    ssize_t r = recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (r > 0) {
      buf_.append(chunk, static_cast<size_t>(r));
      if (buf_.size() >= kMaxLine) return;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return;
    eof_ = true;  // EOF, or an error that ends the stream all the same
    return;
  }
}

Status SocketProcess::EndOfStream(const std::string& what) {
  if (!end_) end_ = WhyItEnded(what);
  return *end_;
}

Status SocketProcess::WhyItEnded(const std::string& what) {
  // Slurm's own words for why, when it killed the step at its time limit.
  // The connection may close before srun has printed them: a launcher gets
  // a moment to say so.
  std::string limit = SlurmTimeLimitLine(StderrSoFar());
  for (int i = 0; slurm_launcher_ && limit.empty() && (launcher_ || launcher_said_) &&
                  i * kSliceMs < kLauncherWordsMs;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kSliceMs));
    limit = SlurmTimeLimitLine(StderrSoFar());
  }
  if (!limit.empty()) return Status::Timeout(name_ + ": Slurm ended it: " + limit);
  std::string err = StderrSoFar();
  if (err.size() > 2000) err = "..." + err.substr(err.size() - 2000);
  return Status::Eof(name_ + ": " + what + (err.empty() ? "" : "; stderr: " + err));
}

std::string SocketProcess::StderrSoFar() {
  if (launcher_) {
    // A launcher that collects only as it is pumped (ssh) gets one look
    // without waiting.
    if (!slurm_launcher_) (void)launcher_->Wait(Deadline::In(Millis(0)));
    return launcher_->StderrSoFar();
  }
  return launcher_said_ ? launcher_said_() : "";
}

Result<int> SocketProcess::Wait(Deadline deadline) {
  if (launcher_) {
    // The step ends when the agent does; its connection's end comes first.
    while (!eof_ && !deadline.Passed()) Pump(ClampMs(deadline.RemainingMs()));
    return launcher_->Wait(deadline);
  }
  while (!eof_) {
    if (deadline.Passed()) return Status::Timeout(name_ + ": still connected at the deadline");
    Pump(ClampMs(deadline.RemainingMs()));
    buf_.clear();
  }
  return 0;
}

void SocketProcess::Kill() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  eof_ = true;
  if (launcher_) launcher_->Kill();
}

}  // namespace cc
