// A scripted CommandContext for tests of phased agent commands (ports,
// nics): the test thread feeds control lines and waits for results.
// Test-only; header-only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "agent/command.h"

namespace cc::agent::testing {

// Feeds control lines from the test thread; collects results.
class ScriptedContext : public CommandContext {
 public:
  const std::string& root() const override { return root_; }
  void Result(const std::string& name, const Json& data) override {
    std::lock_guard<std::mutex> l(mu_);
    results_.push_back({name, data});
    cv_.notify_all();
  }
  void Log(const std::string&, const std::string& msg) override {
    std::lock_guard<std::mutex> l(mu_);
    logs_.push_back(msg);
  }
  void Progress(int64_t, int64_t, const std::string&) override {}
  std::optional<Json> NextControl(Deadline deadline) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_until(l, deadline.at(), [&] { return !controls_.empty() || eof_; });
    if (controls_.empty()) return std::nullopt;
    Json c = controls_.front();
    controls_.pop_front();
    return c;
  }
  void Control(const std::string& cmd, const Json& args) {
    std::lock_guard<std::mutex> l(mu_);
    controls_.push_back({{"v", 1}, {"id", 1}, {"cmd", cmd}, {"args", args}});
    cv_.notify_all();
  }
  void CloseStdin() {
    std::lock_guard<std::mutex> l(mu_);
    eof_ = true;
    cv_.notify_all();
  }
  // Data of the n-th result named `name`; null after 20 s.
  Json WaitResult(const std::string& name, size_t n = 0) {
    std::unique_lock<std::mutex> l(mu_);
    Json out;
    cv_.wait_for(l, std::chrono::seconds(20), [&] {
      size_t seen = 0;
      for (const auto& [k, v] : results_) {
        if (k == name && seen++ == n) {
          out = v;
          return true;
        }
      }
      return false;
    });
    return out;
  }

  std::string root_ = "/";

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Json> controls_;
  bool eof_ = false;
  std::vector<std::pair<std::string, Json>> results_;
  std::vector<std::string> logs_;
};

}  // namespace cc::agent::testing
