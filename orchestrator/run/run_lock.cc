#include "orchestrator/run/run_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace cc {
namespace {

struct flock RunByte(int64_t run_id, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(run_id);
  fl.l_len = 1;
  fl.l_pid = 0;  // required by OFD locks
  return fl;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

bool PidAlive(int64_t pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

std::string RunLockPath(const std::string& db_path) { return db_path + ".lock"; }

RunLock::RunLock(const std::string& db_path, int64_t run_id) : path_(RunLockPath(db_path)) {
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    error_ = path_ + ": " + std::strerror(errno);
    return;
  }
  struct flock fl = RunByte(run_id, F_WRLCK);
  if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    error_ = path_ + ": lock byte " + std::to_string(run_id) + ": " + std::strerror(errno);
    ::close(fd);
    return;
  }
  fd_ = fd;
  // Recorded absolute: `report` may run from another directory.
  char abs[PATH_MAX];
  if (::realpath(path_.c_str(), abs) != nullptr) path_ = abs;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

LockState ProbeRunLock(const std::string& lock_path, int64_t run_id) {
  if (lock_path.empty()) return LockState::kUnknown;
  int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  // The controller created the file before it recorded its path, so a
  // missing file means nobody holds anything in it.
  if (fd < 0) return errno == ENOENT ? LockState::kFree : LockState::kUnknown;
  struct flock fl = RunByte(run_id, F_WRLCK);
  int rc = ::fcntl(fd, F_OFD_GETLK, &fl);
  ::close(fd);
  if (rc != 0) return LockState::kUnknown;
  return fl.l_type == F_UNLCK ? LockState::kFree : LockState::kHeld;
}

ControllerRecord ThisController(const std::string& lock_path) {
  return ControllerRecord{HostName(), static_cast<int64_t>(::getpid()), lock_path};
}

void ApplyRunLiveness(RunRecord& run) {
  if (run.status != "running") return;
  auto controller = ControllerFromMeta(run.meta);
  LivenessProbe probe;
  probe.this_host = HostName();
  if (controller) {
    probe.lock = ProbeRunLock(controller->lock, run.id);
    probe.pid_alive = PidAlive(controller->pid);
  }
  RunLiveness l = JudgeRunLiveness(run.status, controller, probe);
  run.status = l.status;
  run.meta["liveness"] = {{"status", l.status}, {"reason", l.reason}};
}

}  // namespace cc
