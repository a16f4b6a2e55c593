// Paths (a sender to one address) whose TCP failure a stage has already
// confirmed by a quiet retest, so that a later stage that sees the same
// path fail the same way takes that as its confirmation instead of waiting
// for its own retest's deadline again (the nics stage confirms node2 ->
// 10.42.0.5 filtered; the ports stage's probes of node2 -> 10.42.0.5 that
// time out are the same path). Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace cc {

class ConfirmedPaths {
 public:
  // `src` could not reach `addr` in state `state` ("filtered"), confirmed
  // by `stage`'s retest.
  void Add(const std::string& src, const std::string& addr, const std::string& state,
           const std::string& stage);
  // Why a failure of src -> addr in `state` is confirmed already ("nics'
  // retest of node2 -> 10.42.0.5 was filtered too"); "" when it is not.
  std::string Why(const std::string& src, const std::string& addr, const std::string& state) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> paths_;
};

}  // namespace cc
