#include "orchestrator/transport/ssh_session.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace cc {
namespace {

// One thread for all sockets: deadlines are few (one per connection in
// flight) and far apart, so a scan of a small map is enough. Real time
// (steady_clock): it cuts real sockets.
class Watchdog {
 public:
  static Watchdog& Get() {
    // Leaked on purpose: the thread may still wait when statics are torn
    // down at exit.
    static Watchdog* w = new Watchdog();
    return *w;
  }

  uint64_t Arm(int fd, std::chrono::steady_clock::time_point when) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t id = ++next_id_;
    armed_[id] = Entry{fd, when};
    cv_.notify_one();
    return id;
  }

  // Returns true when the watchdog had cut the socket. After Disarm
  // returns, it will not touch the fd again (the caller may close it).
  bool Disarm(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_.erase(id);
    return fired_.erase(id) > 0;
  }

 private:
  struct Entry {
    int fd;
    std::chrono::steady_clock::time_point when;
  };

  Watchdog() {
    std::thread([this] { Loop(); }).detach();
  }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (armed_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto next = std::chrono::steady_clock::time_point::max();
      for (const auto& [id, e] : armed_) next = std::min(next, e.when);
      if (std::chrono::steady_clock::now() < next) {
        cv_.wait_until(lock, next);
        continue;
      }
      auto now = std::chrono::steady_clock::now();
      for (auto it = armed_.begin(); it != armed_.end();) {
        if (it->second.when <= now) {
          // shutdown, not close: the fd stays libssh's, but its next read
          // sees EOF and the blocked call returns an error.
          ::shutdown(it->second.fd, SHUT_RDWR);
          fired_.insert(it->first);
          it = armed_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_id_ = 0;
  std::map<uint64_t, Entry> armed_;
  std::set<uint64_t> fired_;
};

int NoPassphrase(const char*, char*, size_t, int, int, void*) { return -1; }

}  // namespace

void EnsureLibsshInitialized() {
  static const int rc = ssh_init();
  (void)rc;
}

SshSession::SshSession() : session_(ssh_new()) {
  callbacks_.auth_function = NoPassphrase;
  ssh_callbacks_init(&callbacks_);
  if (session_ != nullptr) ssh_set_callbacks(session_, &callbacks_);
}

SshSession::~SshSession() {
  if (session_ == nullptr) return;
  if (ssh_is_connected(session_)) {
    BlockingCall bounded(*this, Deadline::In(Millis(1000)));
    ssh_disconnect(session_);
  }
  ssh_free(session_);
}

std::string SshSession::Error() const {
  const char* e = ssh_get_error(session_);
  return e != nullptr && *e != '\0' ? e : "unknown libssh error";
}

void SshSession::SetTimeout(Deadline deadline) {
  // Rounded up, plus 1 ms: libssh counts whole milliseconds from its own
  // start (truncating), so a timeout of exactly the time left could end a
  // call just before the deadline, and a caller that then asks
  // deadline.Passed() would take a timeout for another error.
  long long us =
      std::chrono::duration_cast<std::chrono::microseconds>(deadline.at() - deadline.clock().Now())
          .count();
  long long ms = std::max<long long>(1, (std::max<long long>(0, us) + 999) / 1000 + 1);
  long sec = static_cast<long>(ms / 1000);
  long usec = static_cast<long>((ms % 1000) * 1000);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &sec);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT_USEC, &usec);
}

BlockingCall::BlockingCall(SshSession& session, Deadline deadline) : session_(session) {
  session_.SetTimeout(deadline);
  int fd = ssh_get_fd(session_.get());
  if (fd >= 0) ticket_ = Watchdog::Get().Arm(fd, deadline.at() + kWatchdogGrace);
}

BlockingCall::~BlockingCall() {
  if (ticket_ != 0 && Watchdog::Get().Disarm(ticket_)) session_.MarkBroken();
}

}  // namespace cc
