// Where agents that Slurm started dial back (transport = "slurm";
// agent/dial_back.h). Listens only while it lives. Each connection must
// send its hello within kHelloTimeoutS: one from a node that is not
// expected, with the wrong secret, or a second one for a node's slot that
// already dialled, is refused (closed) and logged. The good ones wait
// until the transport takes them (Await).
//
// Threading: one thread accepts and reads hellos; every method may be
// called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/deadline.h"
#include "common/status.h"

namespace cc {

class DialBackListener {
 public:
  static constexpr double kHelloTimeoutS = 5;

  // Listens on `address` (an IPv4 literal; "" = every address) and `port`
  // (0 = a free one). `on_refusal` (may be empty) hears each refusal as it
  // happens, from the listener's thread.
  static Result<std::unique_ptr<DialBackListener>> Open(
      const std::string& address, int port, std::string secret, std::set<std::string> nodes,
      std::function<void(const std::string&)> on_refusal = {});
  ~DialBackListener();
  DialBackListener(const DialBackListener&) = delete;
  DialBackListener& operator=(const DialBackListener&) = delete;

  int port() const { return port_; }

  // The connection of `node`'s agent in `slot`, once it has dialled; the
  // descriptor is the caller's from then on. kTimeout at `deadline`,
  // kInterrupted on Ctrl-C (InterruptFlag), kBadArgument when it was taken.
  Result<int> Await(const std::string& node, const std::string& slot, Deadline deadline);
  // Whether `node` dialled in `slot` (taken or not).
  bool Dialled(const std::string& node, const std::string& slot) const;
  // Every refusal so far: "10.0.0.9:51022: wrong secret (node gpu3)".
  std::vector<std::string> refusals() const;

 private:
  DialBackListener(int fd, int port, std::string secret, std::set<std::string> nodes,
                   std::function<void(const std::string&)> on_refusal);
  struct Pending {
    int fd;
    std::string peer;  // "ADDR:PORT", for the log
    std::string buffer;
    std::chrono::steady_clock::time_point since;
  };
  void Loop();
  void Accept();
  // Reads what `p` sent; true when it is done with (taken or refused).
  bool Read(Pending& p);
  void Judge(Pending& p, const std::string& line);
  void Refuse(Pending& p, const std::string& why);

  int fd_;
  int port_;
  const std::string secret_;
  const std::set<std::string> nodes_;
  std::function<void(const std::string&)> on_refusal_;
  std::vector<Pending> pending_;  // the loop's own
  mutable std::mutex mu_;
  std::condition_variable dialled_;
  std::map<std::pair<std::string, std::string>, int> ready_;  // (node, slot) -> fd
  std::set<std::pair<std::string, std::string>> seen_;        // ever dialled
  std::vector<std::string> refusals_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The address of this machine that `host` is reached from (the kernel's
// route); "" when there is none.
std::string LocalAddressTowards(const std::string& host);

}  // namespace cc
