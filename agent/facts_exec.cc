#include "agent/facts_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>

namespace cc::agent {

namespace {
std::atomic<double> g_facts_deadline_scale{1.0};
}  // namespace

void SetFactsDeadlineScale(double scale) {
  g_facts_deadline_scale = std::isfinite(scale) && scale > 1 ? scale : 1.0;
}

double FactsDeadlineS(double base_s) { return base_s * g_facts_deadline_scale.load(); }

std::string FactsDeadlineText(double base_s) {
  return std::to_string(static_cast<long long>(std::lround(FactsDeadlineS(base_s)))) + " s";
}

namespace {

void CloseIf(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Reads what is ready on fd into *to; closes fd at EOF.
void Drain(int& fd, std::string* to) {
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    CloseIf(fd);
    return;
  }
  if (to->size() < kMaxExecOutput) to->append(buf, static_cast<size_t>(n));
}

// In the child: only async-signal-safe calls until exec (the agent may have
// other threads, e.g. a GPU probe).
[[noreturn]] void Child(char* const* argv, int out_w, int err_w, int status_w) {
  setpgid(0, 0);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(out_w, 1);
  dup2(err_w, 2);
  signal(SIGPIPE, SIG_DFL);
  execvp(argv[0], argv);
  int e = errno;
  ssize_t ignored = write(status_w, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

// Three close-on-exec pipes (stdout, stderr, exec status); closes the ones
// made and says why when one fails.
bool OpenPipes(int out[2], int err[2], int status[2], std::string* error) {
  int* pipes[] = {out, err, status};
  for (size_t i = 0; i < 3; ++i) {
    if (pipe2(pipes[i], O_CLOEXEC) == 0) continue;
    *error = std::string("pipe: ") + strerror(errno);
    for (size_t k = 0; k < i; ++k) close(pipes[k][0]), close(pipes[k][1]);
    return false;
  }
  return true;
}

// The status pipe closes on a successful exec (CLOEXEC) or carries the
// child's errno: 0 when the program started.
int ExecErrno(int status_fd) {
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(status_fd, &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(status_fd);
  return n == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

// Reads the child's stdout and stderr into res until both close or the
// deadline passes (res->timed_out).
void ReadOutput(int ofd, int efd, Deadline deadline, ExecResult* res) {
  while (ofd >= 0 || efd >= 0) {
    if (deadline.Passed()) {
      res->timed_out = true;
      break;
    }
    pollfd p[2];
    int np = 0;
    if (ofd >= 0) p[np++] = {ofd, POLLIN, 0};
    if (efd >= 0) p[np++] = {efd, POLLIN, 0};
    long long wait = deadline.RemainingMs();
    int r = poll(p, np, wait > 1000 ? 1000 : static_cast<int>(wait));
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < np && r > 0; ++i) {
      if (p[i].revents == 0) continue;
      if (p[i].fd == ofd) {
        Drain(ofd, &res->out);
      } else {
        Drain(efd, &res->err);
      }
    }
  }
  CloseIf(ofd);
  CloseIf(efd);
}

// Waits for the child (its whole group killed at the deadline) and takes
// its exit code.
void Reap(pid_t pid, Deadline deadline, ExecResult* res) {
  if (res->timed_out) kill(-pid, SIGKILL);  // the whole group: bash -l children too
  int wstatus = 0;
  // Output closed but the child may still run (it closed its stdout itself):
  // wait with the same deadline, then kill.
  for (;;) {
    pid_t w = waitpid(pid, &wstatus, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return;
    if (deadline.Passed() && !res->timed_out) {
      res->timed_out = true;
      kill(-pid, SIGKILL);
    }
    usleep(10000);
  }
  if (!res->timed_out && WIFEXITED(wstatus)) res->exit_code = WEXITSTATUS(wstatus);
}

}  // namespace

ExecResult RunProgram(const std::vector<std::string>& argv, Deadline deadline) {
  ExecResult res;
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out[2], err[2], status[2];
  if (!OpenPipes(out, err, status, &res.error)) return res;
  pid_t pid = fork();
  if (pid == 0) Child(cargv.data(), out[1], err[1], status[1]);
  if (pid > 0) setpgid(pid, pid);  // both sides, so kill(-pid) never races
  close(out[1]);
  close(err[1]);
  close(status[1]);
  if (pid < 0) {
    res.error = std::string("fork: ") + strerror(errno);
    close(out[0]), close(err[0]), close(status[0]);
    return res;
  }
  if (int exec_errno = ExecErrno(status[0]); exec_errno != 0) {
    waitpid(pid, nullptr, 0);
    close(out[0]), close(err[0]);
    res.error = argv[0] + ": " + strerror(exec_errno);
    return res;
  }
  res.started = true;
  ReadOutput(out[0], err[0], deadline, &res);
  Reap(pid, deadline, &res);
  return res;
}

}  // namespace cc::agent
