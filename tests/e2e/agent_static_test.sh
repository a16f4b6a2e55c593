#!/usr/bin/env bash
# The agent is pushed to every node, whatever its distribution: only parts
# of the C library (glibc: libc, libm, libpthread, libdl, the loader, the
# vDSO) may be dynamic, and only in versions glibc 2.28 (RHEL/Rocky 8) has.
# No libstdc++/libgcc_s (nodes may have older ones), and no CUDA, NVML or
# NCCL: those are dlopened at run time, so a GPU-less node still runs it.
set -u
BUILD=${1:?build dir}
AGENT=$BUILD/clustercheck-agent
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$AGENT" ] || fail "$AGENT is missing"
command -v ldd >/dev/null || { echo "SKIP: ldd missing"; exit 77; }
libs=$(ldd "$AGENT") || fail "ldd $AGENT failed: $libs"
echo "$libs"
bad=$(echo "$libs" | awk '{print $1}' |
  grep -Ev '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|/lib64/ld-linux-x86-64\.so\.2|/lib/ld-linux-aarch64\.so\.1)$')
[ -z "$bad" ] || fail "the agent links more than the C library: $bad"
echo "$libs" | grep -q 'libc\.so\.6' || fail "ldd shows no libc at all: is this a dynamic ELF?"
# Nodes run older distributions than the build machine: the newest glibc
# symbol version the agent (or the shim's own check) needs must stay at 2.28,
# RHEL/Rocky 8's glibc (agent/glibc_floor/glibc_floor.c pins them).
FLOOR=2.28
if command -v objdump >/dev/null; then
  for bin in "$AGENT" "$BUILD/glibc_floor_check"; do
    [ -x "$bin" ] || continue
    newest=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
    echo "newest glibc symbol version $(basename "$bin") needs: $newest"
    if [ "$(printf '%s\n%s\n' "$newest" $FLOOR | sort -V | tail -1)" != $FLOOR ]; then
      echo "the symbols above the floor:"
      { echo "$FLOOR (floor)"
        objdump -T "$bin" | sed -n 's/.*[( ]GLIBC_\([0-9.]*\))\{0,1\} \{1,\}\([^ ]*\)$/\1 \2/p'
      } | sort -V | sed -n '/(floor)/,$p' | tail -n +2
      fail "$(basename "$bin") needs glibc $newest; nodes with glibc $FLOOR (RHEL/Rocky 8) could not run it: pin the newer symbols in agent/glibc_floor/glibc_floor.c"
    fi
  done
fi
# The pinned replacements work: constructors, exceptions, threads, waits,
# stat and dlopen, in a program linked like the agent.
if [ -x "$BUILD/glibc_floor_check" ]; then
  "$BUILD/glibc_floor_check" || fail "glibc_floor_check failed"
fi
# The pushed agent carries no debug info (it goes to every node each run).
if command -v readelf >/dev/null; then
  readelf -S "$AGENT" | grep -q '\.debug_info' && fail "the agent is not stripped"
fi
size=$(stat -c %s "$AGENT")
echo "agent: $size bytes"
[ "$size" -lt 8000000 ] || fail "the agent is $size bytes; expected a stripped binary under 8 MB"
echo PASS
