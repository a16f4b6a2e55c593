# shellcheck shell=bash
# Shared by the simulated-cluster tests (tests/cluster/*_test.sh): source it
# after setting `sc` (simcluster.sh), then call cluster_test_start.
#
#   cluster_test_start TAG NAME  skip (77) unless root, sqlite3 and ip netns;
#                              a unique SIMCLUSTER_PREFIX (TAG, 2-3 letters,
#                              + pid) and a fresh SIMCLUSTER_DIR in $dir
#                              (/tmp/NAME-test.*); `down` on exit (define
#                              cluster_test_cleanup for more)
#   ok / not_ok TEXT           TAP-like lines; not_ok counts a failure
#   q SQL                      sqlite3 on $DB ($dir/cc.db)
#   expect TEXT WANT SQL       the query prints WANT exactly
#   expect_like TEXT PAT SQL   a line of the query's output matches PAT
#   cluster_test_finish        PASS / FAIL: N checks; returns that status
#   wait_for SECONDS CMD...    until CMD succeeds (every 0.5 s); prints the
#                              seconds it took; 1 when SECONDS passed first

: "${sc:?set sc (simcluster.sh) before sourcing testlib.sh}"

cluster_test_start() {
  local tag=$1 name=$2
  if [ "$(id -u)" != 0 ]; then echo "skip: needs root"; exit 77; fi
  command -v sqlite3 >/dev/null || { echo "skip: no sqlite3"; exit 77; }
  prefix=$tag$(($$ % 100000))
  if ! ip netns add "$prefix-probe" 2>/dev/null; then
    echo "skip: ip netns is not possible here"; exit 77
  fi
  ip netns del "$prefix-probe"
  dir=$(mktemp -d "/tmp/$name-test.XXXXXX")
  DB=$dir/cc.db
  export SIMCLUSTER_DIR=$dir SIMCLUSTER_PREFIX=$prefix
  trap _cluster_test_cleanup EXIT
  trap 'exit 130' INT TERM
}

_cluster_test_cleanup() {
  if declare -F cluster_test_cleanup >/dev/null; then cluster_test_cleanup; fi
  "$sc" down >/dev/null 2>&1
  rm -rf "$dir"
}

failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }
q() { sqlite3 "$DB" "$1"; }
expect() {
  local got
  got=$(q "$3")
  if [ "$got" = "$2" ]; then ok "$1"; else not_ok "$1"; echo "  | expected '$2', got '$got'"; fi
}
expect_like() {
  local got
  got=$(q "$3")
  if grep -q -- "$2" <<<"$got"; then ok "$1"; else not_ok "$1"; echo "  | no '$2' in: $got"; fi
}
cluster_test_finish() {
  if [ "$failures" -eq 0 ]; then echo "PASS"; else echo "FAIL: $failures checks"; fi
  [ "$failures" -eq 0 ]
}

wait_for() {
  local limit=$1 t0=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -lt "$limit" ] || return 1
    sleep 0.5
  done
  echo $((SECONDS - t0))
}
