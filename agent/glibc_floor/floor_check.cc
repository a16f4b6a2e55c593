// Exercises, in one process linked like the agent (with glibc_floor.c),
// every path glibc_floor.c replaces: constructors, exceptions (the
// unwinder's _dl_find_object), threads, once, thread-local destructors,
// steady-clock waits, the stat family and dlopen/dlsym/dlinfo. Run by
// tests/e2e/agent_static_test.sh; prints one line per check, exits 1 on
// the first failure.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

// glibc_floor.c counts its runs of the program's constructors.
extern "C" int glibc_floor_ran_constructors;

namespace {

int constructed = 0;
struct Constructor {
  Constructor() { ++constructed; }
} constructor;

int failures = 0;
void Check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

[[gnu::noinline]] void Throw(int depth) {
  if (depth == 0) throw std::runtime_error("thrown");
  Throw(depth - 1);
}

bool CatchesExceptions() {
  try {
    Throw(5);
  } catch (const std::exception& e) {
    return std::string(e.what()) == "thrown";
  }
  return false;
}

bool ThreadsRunAndJoin() {
  int seen = 0;
  std::thread t([&] { seen = 1; });
  t.join();
  std::once_flag once;
  int calls = 0;
  for (int i = 0; i < 3; ++i) std::call_once(once, [&] { ++calls; });
  return seen == 1 && calls == 1;
}

int thread_local_destroyed = 0;
struct ThreadLocal {
  ~ThreadLocal() { thread_local_destroyed = 1; }
};
bool ThreadLocalsAreDestroyed() {
  std::thread([] {
    static thread_local ThreadLocal t;
    (void)t;
  }).join();
  return thread_local_destroyed == 1;
}

bool SteadyWaitTimesOut() {
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(m);
  auto start = std::chrono::steady_clock::now();
  bool woke = cv.wait_until(lock, start + std::chrono::milliseconds(50), [] { return false; });
  auto waited = std::chrono::steady_clock::now() - start;
  return !woke && waited >= std::chrono::milliseconds(50) && waited < std::chrono::seconds(5);
}

bool StatWorks() {
  struct stat a, b, c;
  int fd = open("/proc/self/exe", O_RDONLY);
  bool ok = stat("/proc/self/exe", &a) == 0 && lstat("/proc/self/exe", &b) == 0 && fd >= 0 &&
            fstat(fd, &c) == 0 && a.st_ino == c.st_ino && S_ISLNK(b.st_mode);
  if (fd >= 0) close(fd);
  return ok && std::filesystem::exists("/proc/self/exe") && stat("/nonexistent", &a) != 0;
}

bool DlopenWorks() {
  void* h = dlopen("libm.so.6", RTLD_NOW);
  if (h == nullptr) return false;
  void* cosine = dlsym(h, "cos");
  link_map* map = nullptr;
  bool ok = cosine != nullptr && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr;
  ok = ok && dlsym(h, "no_such_symbol") == nullptr && dlerror() != nullptr;
  dlclose(h);
  return ok;
}

}  // namespace

int main() {
  Check(constructed == 1, "static constructors ran, once");
  Check(glibc_floor_ran_constructors == 1,
        "glibc_floor.c ran them (as an older glibc needs it to)");
  Check(CatchesExceptions(), "an exception is caught five frames up");
  Check(ThreadsRunAndJoin(), "std::thread and std::call_once");
  Check(ThreadLocalsAreDestroyed(), "thread_local destructors run");
  Check(SteadyWaitTimesOut(), "condition_variable waits on the steady clock");
  Check(StatWorks(), "stat, lstat, fstat");
  Check(DlopenWorks(), "dlopen, dlsym, dlinfo, dlerror");
  return failures == 0 ? 0 : 1;
}
