// The agent's glibc floor: the pushed agent must start on every node a GPU
// cluster runs (RHEL/Rocky 8 has glibc 2.28, Ubuntu 20.04 2.31), but it is
// built on Debian 12 (glibc 2.36), whose headers and static libstdc++ bind
// some calls to symbol versions newer than 2.28. This file, linked into
// clustercheck-agent only, defines those functions itself, so that every
// reference in the binary (ours and libstdc++.a's) binds here, and forwards
// each to the oldest version glibc still exports (`.symver`).
//
// What moved, and why each replacement is right on both sides of 2.34:
//  - glibc 2.34 merged libpthread and libdl into libc and gave the merged
//    symbols new versions (pthread_create@GLIBC_2.34). The old versions
//    (@GLIBC_2.2.5) stay in 2.34+'s libc as compat symbols, and older
//    glibcs define them in libpthread.so.0 / libdl.so.2, which the agent
//    therefore lists as NEEDED (CMakeLists.txt).
//  - glibc 2.33 turned stat/fstat/lstat into real functions; before, they
//    were inline wrappers around __xstat(_STAT_VER, ...), still exported.
//  - __libc_start_main@GLIBC_2.34 expects init == NULL from crt1.o and runs
//    the program's constructors itself; the old entry point runs only what
//    it is given, so we hand it the equivalent of the old __libc_csu_init.
//  - pthread_cond_clockwait (2.30), _dl_find_object (2.35, libgcc's
//    unwinder), arc4random (2.36) and __libc_single_threaded (2.32) have no
//    older version at all: we implement them from older calls.
// tests/e2e/agent_static_test.sh fails if the agent needs anything newer
// than GLIBC_2.28; a new libstdc++ or a new call adds a line here.
#define _GNU_SOURCE
// Not clang-formatted: the FLOOR_SYMVER arguments are assembler symbol
// versions (GLIBC_2.2.5), which clang-format would split into tokens.
// clang-format off
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

// The oldest versions, under local names. x86_64's baseline is GLIBC_2.2.5.
#define FLOOR_SYMVER(local, name, version) \
  __asm__(".symver " #local ", " #name "@" #version)
// Every replacement stays inside the agent. Exported (the linker exports an
// executable's definition of a name a shared library also defines), it would
// also satisfy its own forward to the versioned original, and loop forever.
#define FLOOR_LOCAL __attribute__((visibility("hidden")))

// ---- process start ------------------------------------------------------

typedef int (*MainFn)(int, char**, char**);
typedef void (*InitFn)(int, char**, char**);
int floor_libc_start_main(MainFn main, int argc, char** argv, void (*init)(void),
                          void (*fini)(void), void (*rtld_fini)(void),
                          void* stack_end);
FLOOR_SYMVER(floor_libc_start_main, __libc_start_main, GLIBC_2.2.5);

// Provided by the linker and crti.o in every executable.
extern InitFn __init_array_start[] __attribute__((visibility("hidden")));
extern InitFn __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void);

// Set when RunConstructors ran: on glibc >= 2.34 the constructors would
// run without it too, so glibc_floor_check reads this to know that the
// path an older glibc depends on was taken.
FLOOR_LOCAL int glibc_floor_ran_constructors = 0;

// What glibc < 2.34's __libc_csu_init did for a dynamic executable (the
// loader runs the preinit array): DT_INIT, then the init array.
static void RunConstructors(int argc, char** argv, char** envp) {
  ++glibc_floor_ran_constructors;
  _init();
  size_t n = (size_t)(__init_array_end - __init_array_start);
  for (size_t i = 0; i < n; ++i) (*__init_array_start[i])(argc, argv, envp);
}

FLOOR_LOCAL int __libc_start_main(MainFn main, int argc, char** argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void* stack_end) {
  // crt1.o of glibc >= 2.34 passes init == NULL; an older libc would then
  // run no C++ static constructor at all.
  if (init == NULL) init = (void (*)(void))RunConstructors;
  return floor_libc_start_main(main, argc, argv, init, fini, rtld_fini, stack_end);
}

// ---- libpthread (merged into libc in 2.34) --------------------------------

int floor_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int floor_pthread_join(pthread_t, void**);
int floor_pthread_detach(pthread_t);
int floor_pthread_once(pthread_once_t*, void (*)(void));
int floor_pthread_key_create(pthread_key_t*, void (*)(void*));
int floor_pthread_key_delete(pthread_key_t);
void* floor_pthread_getspecific(pthread_key_t);
// Like glibc's own declaration: the value is stored, never read.
int floor_pthread_setspecific(pthread_key_t, const void*) __attribute__((access(none, 2)));
int floor_pthread_mutex_trylock(pthread_mutex_t*);
FLOOR_SYMVER(floor_pthread_create, pthread_create, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_join, pthread_join, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_detach, pthread_detach, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_once, pthread_once, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_key_create, pthread_key_create, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_key_delete, pthread_key_delete, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_getspecific, pthread_getspecific, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_setspecific, pthread_setspecific, GLIBC_2.2.5);
FLOOR_SYMVER(floor_pthread_mutex_trylock, pthread_mutex_trylock, GLIBC_2.2.5);

FLOOR_LOCAL int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*),
                   void* arg) {
  return floor_pthread_create(t, attr, fn, arg);
}
FLOOR_LOCAL int pthread_join(pthread_t t, void** ret) { return floor_pthread_join(t, ret); }
FLOOR_LOCAL int pthread_detach(pthread_t t) { return floor_pthread_detach(t); }
FLOOR_LOCAL int pthread_once(pthread_once_t* once, void (*fn)(void)) {
  return floor_pthread_once(once, fn);
}
FLOOR_LOCAL int pthread_key_create(pthread_key_t* key, void (*dtor)(void*)) {
  return floor_pthread_key_create(key, dtor);
}
// libstdc++'s gthr tests this name's address to learn whether threads exist.
int __pthread_key_create(pthread_key_t* key, void (*dtor)(void*));
FLOOR_LOCAL int __pthread_key_create(pthread_key_t* key, void (*dtor)(void*)) {
  return floor_pthread_key_create(key, dtor);
}
FLOOR_LOCAL int pthread_key_delete(pthread_key_t key) { return floor_pthread_key_delete(key); }
FLOOR_LOCAL void* pthread_getspecific(pthread_key_t key) { return floor_pthread_getspecific(key); }
FLOOR_LOCAL int pthread_setspecific(pthread_key_t key, const void* v) {
  return floor_pthread_setspecific(key, v);
}
FLOOR_LOCAL int pthread_mutex_trylock(pthread_mutex_t* m) { return floor_pthread_mutex_trylock(m); }

// std::condition_variable waits on the steady clock through this (2.30).
// The condition variable itself waits on CLOCK_REALTIME, so the remaining
// time is carried over: a wall-clock jump during a wait stretches or
// shortens it, which libstdc++'s callers re-check against the steady clock.
FLOOR_LOCAL int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                           clockid_t clock, const struct timespec* abstime) {
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, abstime);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  struct timespec now, wall;
  clock_gettime(CLOCK_MONOTONIC, &now);
  clock_gettime(CLOCK_REALTIME, &wall);
  long long left_ns = (long long)(abstime->tv_sec - now.tv_sec) * 1000000000LL +
                      (abstime->tv_nsec - now.tv_nsec);
  if (left_ns < 0) left_ns = 0;
  long long until_ns = (long long)wall.tv_nsec + left_ns % 1000000000LL;
  struct timespec until = {wall.tv_sec + (time_t)(left_ns / 1000000000LL) +
                               (time_t)(until_ns / 1000000000LL),
                           (long)(until_ns % 1000000000LL)};
  return pthread_cond_timedwait(cond, mutex, &until);
}

// Read by libstdc++ to skip atomics in a single-threaded process (2.32).
// Always "not single-threaded" is always correct, only slightly slower.
FLOOR_LOCAL char __libc_single_threaded = 0;

// ---- libdl (merged into libc in 2.34): the dlopen of CUDA, NVML, NCCL ------

void* floor_dlopen(const char*, int);
void* floor_dlsym(void*, const char*);
char* floor_dlerror(void);
int floor_dlinfo(void*, int, void*);
int floor_dlclose(void*);
FLOOR_SYMVER(floor_dlopen, dlopen, GLIBC_2.2.5);
FLOOR_SYMVER(floor_dlsym, dlsym, GLIBC_2.2.5);
FLOOR_SYMVER(floor_dlerror, dlerror, GLIBC_2.2.5);
FLOOR_SYMVER(floor_dlinfo, dlinfo, GLIBC_2.3.3);
FLOOR_SYMVER(floor_dlclose, dlclose, GLIBC_2.2.5);

FLOOR_LOCAL void* dlopen(const char* file, int mode) { return floor_dlopen(file, mode); }
FLOOR_LOCAL void* dlsym(void* handle, const char* name) { return floor_dlsym(handle, name); }
FLOOR_LOCAL char* dlerror(void) { return floor_dlerror(); }
FLOOR_LOCAL int dlinfo(void* handle, int request, void* arg) {
  return floor_dlinfo(handle, request, arg);
}
FLOOR_LOCAL int dlclose(void* handle) { return floor_dlclose(handle); }

// ---- the stat family (real functions since 2.33) --------------------------

enum { kStatVersion = 1 };  // _STAT_VER_LINUX on x86_64
int floor_xstat(int, const char*, struct stat*);
int floor_lxstat(int, const char*, struct stat*);
int floor_fxstat(int, int, struct stat*);
int floor_fxstatat(int, int, const char*, struct stat*, int);
FLOOR_SYMVER(floor_xstat, __xstat, GLIBC_2.2.5);
FLOOR_SYMVER(floor_lxstat, __lxstat, GLIBC_2.2.5);
FLOOR_SYMVER(floor_fxstat, __fxstat, GLIBC_2.2.5);
FLOOR_SYMVER(floor_fxstatat, __fxstatat, GLIBC_2.4);

FLOOR_LOCAL int stat(const char* path, struct stat* st) {
  return floor_xstat(kStatVersion, path, st);
}
FLOOR_LOCAL int lstat(const char* path, struct stat* st) {
  return floor_lxstat(kStatVersion, path, st);
}
FLOOR_LOCAL int fstat(int fd, struct stat* st) { return floor_fxstat(kStatVersion, fd, st); }
FLOOR_LOCAL int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  return floor_fxstatat(kStatVersion, dirfd, path, st, flags);
}
// On x86_64 struct stat64 is struct stat; libstdc++ calls the 64 names.
FLOOR_LOCAL int stat64(const char* path, struct stat64* st) {
  return floor_xstat(kStatVersion, path, (struct stat*)st);
}
FLOOR_LOCAL int lstat64(const char* path, struct stat64* st) {
  return floor_lxstat(kStatVersion, path, (struct stat*)st);
}
FLOOR_LOCAL int fstat64(int fd, struct stat64* st) {
  return floor_fxstat(kStatVersion, fd, (struct stat*)st);
}
FLOOR_LOCAL int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return floor_fxstatat(kStatVersion, dirfd, path, (struct stat*)st, flags);
}

// ---- no older version at all ----------------------------------------------

// libgcc's unwinder (GCC 12) finds a frame's unwind tables with this (2.35)
// and gives up, so every C++ exception would terminate, if it fails. The
// unwinder reads dlfo_eh_frame: the PT_GNU_EH_FRAME segment of the object
// that contains the address, found here the pre-2.35 way.
struct FindObject {
  uintptr_t address;
  struct dl_find_object* out;
};

static int FindObjectIn(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct FindObject* f = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  const void* eh_frame = NULL;
  int contains = 0;
  for (size_t i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_GNU_EH_FRAME) eh_frame = (const void*)start;
    if (ph->p_type != PT_LOAD) continue;
    if (start < lo) lo = start;
    if (start + ph->p_memsz > hi) hi = start + ph->p_memsz;
    if (f->address >= start && f->address < start + ph->p_memsz) contains = 1;
  }
  if (!contains) return 0;
  f->out->dlfo_flags = 0;
  f->out->dlfo_map_start = (void*)lo;
  f->out->dlfo_map_end = (void*)hi;
  f->out->dlfo_link_map = NULL;  // no caller in the agent reads it
  f->out->dlfo_eh_frame = (void*)eh_frame;
  return 1;
}

FLOOR_LOCAL int _dl_find_object(void* address, struct dl_find_object* out) {
  struct FindObject f = {(uintptr_t)address, out};
  return dl_iterate_phdr(FindObjectIn, &f) ? 0 : -1;
}

// Debian 12's static libstdc++ calls this (2.36) from std::random_device.
// The agent never draws random numbers; this only has to be correct.
FLOOR_LOCAL uint32_t arc4random(void) {
  uint32_t v = 0;
  unsigned char* p = (unsigned char*)&v;
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = getrandom(p + got, sizeof v - got, 0);
    if (n > 0) {
      got += (size_t)n;
    } else if (n < 0 && errno != EINTR) {
      abort();  // no entropy source at all: nothing sane to return
    }
  }
  return v;
}
// clang-format on
