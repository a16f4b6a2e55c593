// Whether a run the store calls "running" still has a live controller. A
// controller killed with SIGKILL (or a machine that lost power) never writes
// its finish, so the stored status alone would say "running" forever.
//
// While it runs, a controller records who it is in the run's meta
// ("controller": {"host", "pid", "lock"}) and holds an exclusive OFD lock on
// one byte of `<db>.lock` (the byte at offset run id; see run_lock.h). The
// kernel drops that lock when the process dies, however it dies. The
// decision below is pure: run_lock.h gathers its inputs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace cc {

// The "controller" entry of a run's meta.
struct ControllerRecord {
  std::string host;  // gethostname() of the controller
  int64_t pid = 0;
  std::string lock;  // the lock file it holds a byte of; "" = it took none
};

// nullopt when meta has no usable "controller" entry (runs stored by older
// versions).
std::optional<ControllerRecord> ControllerFromMeta(const nlohmann::json& meta);
nlohmann::json ControllerToMeta(const ControllerRecord& c);

enum class LockState {
  kHeld,     // some process holds the run's byte
  kFree,     // nobody does
  kUnknown,  // the lock file could not be probed (unreadable, not recorded)
};

// What this process sees of the controller, from where it runs.
struct LivenessProbe {
  std::string this_host;
  LockState lock = LockState::kUnknown;
  bool pid_alive = false;  // kill(pid, 0) succeeds here; only meaningful
                           // when this_host is the controller's host
};

struct RunLiveness {
  std::string status;  // the stored status, or "killed"
  std::string reason;  // why, for people; "" when the stored status stands
};

// The status to show for a run stored with `stored_status`. Only "running"
// can change, and only to "killed" when the controller is provably gone: on
// its own host, its lock is free (or, without a lock, its pid is gone). From
// another host a free lock proves nothing (the file may be a copy), so the
// run stays "running" with a reason saying it cannot be told.
RunLiveness JudgeRunLiveness(const std::string& stored_status,
                             const std::optional<ControllerRecord>& controller,
                             const LivenessProbe& probe);

}  // namespace cc
