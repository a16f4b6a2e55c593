#include "orchestrator/transport/local_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace cc {
namespace {

constexpr size_t kStderrKeep = 64 * 1024;
// A stdout "line" longer than this is garbage, not a message.
constexpr size_t kMaxLine = 16 * 1024 * 1024;
// How long a process may clean up after SIGTERM before SIGKILL.
constexpr Millis kKillGrace{500};
// A process in uninterruptible sleep (a stuck driver call) may not die even
// from SIGKILL; we stop waiting for it rather than hang the controller.
constexpr Millis kReapAfterKill{5000};
// Poll slice when no pidfd tells us about the exit.
constexpr int kPollSliceMs = 10;

std::string ErrnoText(int e) { return std::strerror(e); }

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

int ClampMs(long long ms) { return static_cast<int>(std::min<long long>(ms, 1 << 30)); }

std::string HomeDir() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) {
    return pw->pw_dir;
  }
  return "/";
}

// write(2) that turns a closed reader into EPIPE without killing the
// controller with SIGPIPE, whatever the process-wide disposition is: the
// signal is blocked for this thread and a SIGPIPE we caused is consumed.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t n) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigset_t pending;
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE);
  ssize_t r = write(fd, data, n);
  int e = errno;
  if (r < 0 && e == EPIPE && !was_pending) {
    timespec zero{};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = e;
  return r;
}

class LocalProcess : public RemoteProcess {
 public:
  LocalProcess(pid_t pid, int in, int out, int err, std::string name)
      : pid_(pid), in_(in), out_(out), err_(err), name_(std::move(name)) {
#ifdef SYS_pidfd_open
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
  }
  ~LocalProcess() override {
    Kill();
    CloseFd(in_);
    CloseFd(out_);
    CloseFd(err_);
    CloseFd(pidfd_);
  }

  Status WriteStdin(std::string_view data, Deadline deadline) override {
    size_t off = 0;
    while (off < data.size()) {
      if (in_ < 0) return Status::Eof(name_ + ": stdin is closed");
      ssize_t n = WriteNoSigpipe(in_, data.data() + off, data.size() - off);
      if (n > 0) {
        off += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EPIPE) {
        CloseFd(in_);
        return Status::Eof(name_ + " closed its stdin");
      }
      if (n < 0 && errno != EAGAIN) {
        return Status::Io(name_ + ": writing stdin: " + ErrnoText(errno));
      }
      if (deadline.Passed()) {
        return Status::Timeout(name_ + ": stdin not accepted in time");
      }
      // Keep draining its output meanwhile: a child that echoes while we
      // write would otherwise block on a full stdout pipe, and so would we.
      Pump(ClampMs(deadline.RemainingMs()), /*want_stdin=*/true);
    }
    return Status::Ok();
  }

  void CloseStdin() override { CloseFd(in_); }

  Result<std::string> ReadLine(Deadline deadline) override {
    bool last_try = false;
    for (;;) {
      if (size_t nl = out_buf_.find('\n'); nl != std::string::npos) {
        std::string line = out_buf_.substr(0, nl);
        out_buf_.erase(0, nl + 1);
        return line;
      }
      if (out_buf_.size() >= kMaxLine) {
        return Status::Protocol(name_ + ": stdout line longer than " + std::to_string(kMaxLine) +
                                " bytes");
      }
      if (out_ < 0) {
        if (out_buf_.empty()) return Status::Eof(name_ + ": stdout closed");
        return std::exchange(out_buf_, {});  // a last unterminated line
      }
      if (last_try) return Status::Timeout(name_ + ": no output in time");
      // At the deadline, still take what is already in the pipe.
      last_try = deadline.Passed();
      Pump(last_try ? 0 : ClampMs(deadline.RemainingMs()));
    }
  }

  std::string StderrSoFar() override {
    Pump(0);
    return err_buf_;
  }

  Result<int> Wait(Deadline deadline) override {
    for (;;) {
      if (reaped_) {
        Pump(0);  // what it wrote just before exiting
        if (exit_code_ < 0) {
          return Status::Io(name_ + ": exit status was collected elsewhere");
        }
        return exit_code_;
      }
      if (TryReap()) continue;
      if (deadline.Passed()) {
        return Status::Timeout(name_ + ": still running at the deadline");
      }
      long long ms = deadline.RemainingMs();
      if (pidfd_ < 0 || exited_) ms = std::min<long long>(ms, kPollSliceMs);
      Pump(ClampMs(ms));
    }
  }

  // Once reaped, the process group id may be reused, so a reaped process is
  // never signalled again: Kill() after Wait() does nothing.
  void Kill() override {
    CloseFd(in_);
    if (reaped_) return;
    // The leader is not reaped yet, so the group id is still ours.
    kill(-pid_, SIGTERM);
    Deadline grace = Deadline::In(kKillGrace);
    while (!LeaderExited() && !grace.Passed()) {
      std::this_thread::sleep_for(Millis(kPollSliceMs / 2));
    }
    // Also whatever in the group ignored SIGTERM.
    kill(-pid_, SIGKILL);
    Deadline reap = Deadline::In(kReapAfterKill);
    while (!TryReap() && !reap.Passed()) {
      std::this_thread::sleep_for(Millis(kPollSliceMs / 2));
    }
    if (!reaped_) exit_code_ = 128 + SIGKILL;
  }

 private:
  // Waits up to `ms` for output (or, through the pidfd, the exit) and reads
  // whatever is available on stdout and stderr.
  void Pump(int ms, bool want_stdin = false) {
    pollfd fds[4];
    int n = 0;
    int out_i = -1, err_i = -1, pid_i = -1;
    if (out_ >= 0 && out_buf_.size() < kMaxLine) {
      out_i = n;
      fds[n++] = {out_, POLLIN, 0};
    }
    if (err_ >= 0) {
      err_i = n;
      fds[n++] = {err_, POLLIN, 0};
    }
    if (pidfd_ >= 0 && !exited_) {
      pid_i = n;
      fds[n++] = {pidfd_, POLLIN, 0};
    }
    if (want_stdin && in_ >= 0) fds[n++] = {in_, POLLOUT, 0};
    if (n == 0) {
      std::this_thread::sleep_for(Millis(std::min(ms, kPollSliceMs)));
      return;
    }
    if (poll(fds, n, ms) <= 0) return;  // timeout or EINTR: caller loops
    if (out_i >= 0 && fds[out_i].revents) Drain(out_, &out_buf_, false);
    if (err_i >= 0 && fds[err_i].revents) Drain(err_, &err_buf_, true);
    // The pidfd stays readable once the process exited; stop polling it.
    if (pid_i >= 0 && fds[pid_i].revents) exited_ = true;
  }

  // Reads until the pipe is empty; closes it at EOF.
  void Drain(int& fd, std::string* buf, bool keep_tail) {
    char chunk[65536];
    for (;;) {
      ssize_t r = read(fd, chunk, sizeof chunk);
      if (r > 0) {
        buf->append(chunk, static_cast<size_t>(r));
        if (keep_tail && buf->size() > kStderrKeep) {
          buf->erase(0, buf->size() - kStderrKeep);
        }
        if (!keep_tail && buf->size() >= kMaxLine) return;
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EAGAIN) return;
      CloseFd(fd);  // EOF, or an error that ends the stream all the same
      return;
    }
  }

  // Whether the leader has exited, without reaping it (the zombie keeps
  // the process group id from being reused while we still signal it).
  bool LeaderExited() {
    siginfo_t info{};
    if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return true;  // ECHILD: nothing left to wait for
    }
    return info.si_pid == pid_;
  }

  bool TryReap() {
    if (reaped_) return true;
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == 0) return false;
    if (r < 0 && errno == EINTR) return false;
    reaped_ = true;
    CloseFd(pidfd_);
    if (r < 0) return true;  // ECHILD: exit_code_ stays -1
    exit_code_ = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
    return true;
  }

  pid_t pid_;
  int in_, out_, err_;
  int pidfd_ = -1;
  std::string name_;  // argv[0], for messages
  std::string out_buf_;
  std::string err_buf_;
  bool exited_ = false;  // the pidfd said so; not reaped yet
  bool reaped_ = false;
  int exit_code_ = -1;
};

// Finds `prog` like execvp, but in the parent and with the child's PATH,
// so that the child only calls async-signal-safe functions after fork.
Result<std::string> ResolveProgram(const std::string& prog, const std::string& path_var) {
  if (prog.find('/') != std::string::npos) return prog;
  size_t start = 0;
  for (;;) {
    size_t end = path_var.find(':', start);
    std::string dir = path_var.substr(start, end - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
    struct stat st;
    if (stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(cand.c_str(), X_OK) == 0) {
      return cand;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return Status::NotFound("cannot find '" + prog + "' in PATH");
}

// The parent's environment with `extra` put over it, as "K=V" strings.
std::vector<std::string> ChildEnvironment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (!extra.count(kv.substr(0, kv.find('=')))) env.push_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the forked child: only async-signal-safe calls from here to exec.
[[noreturn]] void ExecChild(int child_fds[3], int exec_err, const char* file, char* const argv[],
                            char* const envp[]) {
  setpgid(0, 0);
  // Ignored signals and the signal mask survive exec; the controller's
  // (SIGPIPE ignored, SIGINT blocked for its loop) must not.
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Lift all our descriptors above 2 first, so that dup2 cannot clobber one
  // that happens to be 0..2 (a controller started with stdin closed).
  int high[3];
  for (int i = 0; i < 3; ++i) high[i] = fcntl(child_fds[i], F_DUPFD_CLOEXEC, 3);
  if (exec_err < 3) exec_err = fcntl(exec_err, F_DUPFD_CLOEXEC, 3);
  for (int i = 0; i < 3; ++i) {
    if (high[i] < 0 || dup2(high[i], i) < 0) _exit(127);
  }
#ifdef SYS_close_range
  // Everything else goes, including descriptors that libraries opened
  // without O_CLOEXEC; exec_err closes at exec by itself.
  syscall(SYS_close_range, 3u, static_cast<unsigned>(exec_err) - 1, 0u);
  syscall(SYS_close_range, static_cast<unsigned>(exec_err) + 1, ~0u, 0u);
#endif
  execve(file, argv, envp);
  int e = errno;
  if (write(exec_err, &e, sizeof e) < 0) _exit(127);
  _exit(127);
}

void ClosePipe(int p[2]) {
  CloseFd(p[0]);
  CloseFd(p[1]);
}

}  // namespace

std::string ExpandHome(const std::string& path) {
  if (path == "~") return HomeDir();
  if (path.rfind("~/", 0) == 0) return HomeDir() + path.substr(1);
  return path;
}

Result<std::unique_ptr<RemoteProcess>> LocalConnection::Start(const CommandLine& cmd,
                                                              Deadline deadline) {
  if (cmd.argv.empty()) return Status::BadArgument("empty command line");
  std::vector<std::string> args;
  for (const auto& a : cmd.argv) args.push_back(ExpandHome(a));
  auto path_it = cmd.env.find("PATH");
  const char* parent_path = std::getenv("PATH");
  auto file = ResolveProgram(args[0], path_it != cmd.env.end()
                                          ? path_it->second
                                          : (parent_path ? parent_path : "/usr/bin:/bin"));
  if (!file.ok()) return file.status();
  std::vector<std::string> env = ChildEnvironment(cmd.env);
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);

  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  int exec_err[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
      pipe2(exec_err, O_CLOEXEC)) {
    int e = errno;
    for (int* p : {in, out, err, exec_err}) ClosePipe(p);
    return Status::Io("cannot make pipes for " + args[0] + ": " + ErrnoText(e));
  }
  pid_t pid = fork();
  if (pid == 0) {
    int child_fds[3] = {in[0], out[1], err[1]};
    ExecChild(child_fds, exec_err[1], file->c_str(), argv.data(), envp.data());
  }
  int fork_errno = errno;
  CloseFd(in[0]);
  CloseFd(out[1]);
  CloseFd(err[1]);
  CloseFd(exec_err[1]);
  if (pid < 0) {
    for (int* p : {in, out, err, exec_err}) ClosePipe(p);
    return Status::Io("cannot fork for " + args[0] + ": " + ErrnoText(fork_errno));
  }
  // Both sides set the group, so that it is set whichever runs first.
  setpgid(pid, pid);
  // The exec pipe closes on a successful exec, or carries its errno.
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(exec_err[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  CloseFd(exec_err[0]);
  if (got == sizeof child_errno) {
    waitpid(pid, nullptr, 0);
    for (int* p : {in, out, err}) ClosePipe(p);
    std::string msg = "cannot run '" + *file + "': " + ErrnoText(child_errno);
    return child_errno == ENOENT ? Status::NotFound(msg) : Status::Io(msg);
  }
  for (int fd : {in[1], out[0], err[0]}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return std::unique_ptr<RemoteProcess>(new LocalProcess(pid, in[1], out[0], err[0], args[0]));
}

namespace {

// mkdir -p with `mode` for the directories it creates.
Status MakeDirs(const std::string& dir, mode_t mode) {
  if (dir.empty()) return Status::Ok();
  for (size_t pos = 1;; ++pos) {
    pos = dir.find('/', pos);
    std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return Status::Io("cannot create directory " + prefix + ": " + ErrnoText(errno));
    }
    if (pos == std::string::npos) break;
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Io(dir + " is not a directory");
  }
  return Status::Ok();
}

Status WriteAll(int fd, const std::string& content) {
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Io(ErrnoText(errno));
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status LocalConnection::Upload(const std::string& content, const std::string& remote_path, int mode,
                               Deadline deadline) {
  std::string path = ExpandHome(remote_path);
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (slash == 0) dir = "/";
  Status s = MakeDirs(dir, 0700);
  if (!s.ok()) return s;
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io("cannot create " + tmp + ": " + ErrnoText(errno));
  s = WriteAll(fd, content);
  // fchmod: the mode must not depend on the umask. fsync before rename, so
  // that a crash never leaves a complete name with partial content.
  if (s.ok() && fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    s = Status::Io(ErrnoText(errno));
  }
  if (s.ok() && fsync(fd) != 0) s = Status::Io(ErrnoText(errno));
  if (close(fd) != 0 && s.ok()) s = Status::Io(ErrnoText(errno));
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::Io(ErrnoText(errno));
  }
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s.WithContext("upload to " + path);
  }
  return Status::Ok();
}

Result<long long> LocalConnection::FileSize(const std::string& remote_path, Deadline deadline) {
  std::string path = ExpandHome(remote_path);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::string msg = path + ": " + ErrnoText(errno);
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound(msg);
    return Status::Io(msg);
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::NotFound(path + " is not a regular file");
  }
  return static_cast<long long>(st.st_size);
}

Result<std::unique_ptr<Connection>> LocalTransport::Connect(const Node& node, Deadline deadline) {
  return std::unique_ptr<Connection>(new LocalConnection());
}

}  // namespace cc
