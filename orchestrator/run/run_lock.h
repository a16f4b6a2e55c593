// The lock a live controller holds on its run (run_liveness.h says why):
// an exclusive OFD lock on the byte at offset run id of `<db>.lock`. OFD
// locks belong to the open file, not the process, so threads share it, and
// the kernel drops it when the controller dies, however it dies.
#pragma once

#include <cstdint>
#include <string>

#include "orchestrator/run/run_liveness.h"
#include "orchestrator/store/store.h"

namespace cc {

// "<db_path>.lock"
std::string RunLockPath(const std::string& db_path);

// Held for the life of the object. Acquire failing (read-only directory,
// a filesystem without OFD locks) is not fatal to a run: held() is false
// and the run records no lock, so liveness falls back to the pid.
class RunLock {
 public:
  RunLock(const std::string& db_path, int64_t run_id);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }    // absolute once held
  const std::string& error() const { return error_; }  // why not held

 private:
  std::string path_;
  std::string error_;
  int fd_ = -1;
};

// Whether some process holds run_id's byte of `lock_path`.
LockState ProbeRunLock(const std::string& lock_path, int64_t run_id);

// This process as the controller of a run (host, pid; lock "" = none).
ControllerRecord ThisController(const std::string& lock_path);

// Replaces a stored "running" by "killed" when its controller is gone, and
// records the judgement in run.meta["liveness"] ({"status", "reason"}).
void ApplyRunLiveness(RunRecord& run);

}  // namespace cc
