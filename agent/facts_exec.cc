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

}  // namespace

ExecResult RunProgram(const std::vector<std::string>& argv, Deadline deadline) {
  ExecResult res;
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out[2], err[2], status[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    res.error = std::string("pipe: ") + strerror(errno);
    return res;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    res.error = std::string("pipe: ") + strerror(errno);
    close(out[0]), close(out[1]);
    return res;
  }
  if (pipe2(status, O_CLOEXEC) != 0) {
    res.error = std::string("pipe: ") + strerror(errno);
    close(out[0]), close(out[1]), close(err[0]), close(err[1]);
    return res;
  }
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
  // The status pipe closes on a successful exec (CLOEXEC) or carries errno.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(status[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(status[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    waitpid(pid, nullptr, 0);
    close(out[0]), close(err[0]);
    res.error = argv[0] + ": " + strerror(exec_errno);
    return res;
  }
  res.started = true;

  int ofd = out[0], efd = err[0];
  while (ofd >= 0 || efd >= 0) {
    if (deadline.Passed()) {
      res.timed_out = true;
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
        Drain(ofd, &res.out);
      } else {
        Drain(efd, &res.err);
      }
    }
  }
  CloseIf(ofd);
  CloseIf(efd);
  if (res.timed_out) kill(-pid, SIGKILL);  // the whole group: bash -l children too
  int wstatus = 0;
  // Output closed but the child may still run (it closed its stdout itself):
  // wait with the same deadline, then kill.
  for (;;) {
    pid_t w = waitpid(pid, &wstatus, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return res;
    if (deadline.Passed() && !res.timed_out) {
      res.timed_out = true;
      kill(-pid, SIGKILL);
    }
    usleep(10000);
  }
  if (!res.timed_out && WIFEXITED(wstatus)) res.exit_code = WEXITSTATUS(wstatus);
  return res;
}

}  // namespace cc::agent
