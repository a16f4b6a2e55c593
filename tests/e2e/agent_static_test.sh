#!/usr/bin/env bash
# The agent is pushed to every node, whatever its distribution: only parts
# of the C library (glibc: libc, libm, the loader, the vDSO) may be dynamic.
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
  grep -Ev '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2|/lib/ld-linux-aarch64\.so\.1)$')
[ -z "$bad" ] || fail "the agent links more than the C library: $bad"
echo "$libs" | grep -q 'libc\.so\.6' || fail "ldd shows no libc at all: is this a dynamic ELF?"
# Nodes run older distributions than the build machine: the newest glibc
# symbol version the agent needs must stay at 2.35 (Ubuntu 22.04).
if command -v objdump >/dev/null; then
  newest=$(objdump -T "$AGENT" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
  echo "newest glibc symbol version needed: $newest"
  [ "$(printf '%s\n2.35\n' "$newest" | sort -V | tail -1)" = 2.35 ] ||
    fail "the agent needs glibc $newest; nodes with glibc 2.35 (Ubuntu 22.04) could not run it"
fi
# The pushed agent carries no debug info (it goes to every node each run).
if command -v readelf >/dev/null; then
  readelf -S "$AGENT" | grep -q '\.debug_info' && fail "the agent is not stripped"
fi
size=$(stat -c %s "$AGENT")
echo "agent: $size bytes"
[ "$size" -lt 8000000 ] || fail "the agent is $size bytes; expected a stripped binary under 8 MB"
echo PASS
