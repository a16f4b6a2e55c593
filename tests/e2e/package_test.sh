#!/usr/bin/env bash
# `make package`'s .deb installs and runs on a controller: unpacked into a
# scratch root (dpkg-deb -x; the machine's dpkg database is not touched),
# the controller there answers --version, finds the agent it pushes in
# <root>/usr/lib/clustercheck (orchestrator/run/install_layout.h), not in the
# build tree, and does a local run. The package's Depends come from what
# the binaries load (dpkg-shlibdeps).
set -u
BUILD=${1:?build dir}
BUILD=$(cd "$BUILD" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
for tool in cpack dpkg-deb dpkg-shlibdeps sqlite3; do
  command -v $tool >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done
[ -x "$BUILD/clustercheck" ] && [ -x "$BUILD/clustercheck-agent" ] || fail "build the programs first"
TMP=$(mktemp -d)
trap 'pkill -f "$TMP/root/" 2>/dev/null; rm -rf "$TMP"' EXIT

# 1. The package, built into the scratch dir so a concurrent `make package`
# in the same build dir is left alone.
(cd "$BUILD" && cpack -G DEB -B "$TMP/pkg") >"$TMP/cpack.log" 2>&1 ||
  { cat "$TMP/cpack.log"; fail "cpack failed"; }
deb=$(ls "$TMP"/pkg/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { cat "$TMP/cpack.log"; fail "cpack made no .deb"; }
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"
dpkg-deb -c "$deb" >"$TMP/contents"
for f in usr/bin/clustercheck usr/lib/clustercheck/clustercheck-agent \
  usr/share/clustercheck/inventories/example.toml usr/share/man/man1/clustercheck.1.gz; do
  grep -q " \./$f\$" "$TMP/contents" || { cat "$TMP/contents"; fail "the package lacks /$f"; }
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
# What the controller loads, by the package that ships it.
for lib in libc6 libssh libsqlite3 libtomlplusplus libssl; do
  echo "$depends" | grep -q "$lib" || fail "Depends lacks $lib"
done

# 2. Unpacked into a scratch root: --version, the man page, a local run.
dpkg-deb -x "$deb" "$TMP/root" || fail "dpkg-deb -x failed"
CC="$TMP/root/usr/bin/clustercheck"
version=$("$CC" --version) || fail "--version exited $?"
echo "clustercheck --version: $version"
[ "$version" = "$(dpkg-deb -f "$deb" Version)" ] || fail "--version says '$version', the package $(dpkg-deb -f "$deb" Version)"
zcat "$TMP/root/usr/share/man/man1/clustercheck.1.gz" | grep -q '^\.TH CLUSTERCHECK' ||
  fail "the man page has no .TH header"
zcat "$TMP/root/usr/share/man/man1/clustercheck.1.gz" | grep -q 'history' ||
  fail "the man page does not list the subcommands"

cat >"$TMP/local.toml" <<TOML
name = "package-test"
transport = "local"
[[nodes]]
name = "localhost"
[stages]
run = ["facts", "parity"]
TOML
# No clustercheck-agent on PATH or beside the build tree can stand in: the
# controller looks beside itself and in <root>/usr/lib/clustercheck only.
(cd "$TMP" && PATH=/usr/bin:/bin "$CC" run "$TMP/local.toml" --db "$TMP/cc.db") >"$TMP/run.out" 2>&1
rc=$?
cat "$TMP/run.out"
[ $rc -le 1 ] || fail "the installed controller's run exited $rc"
grep -q "stored as run 1" "$TMP/run.out" || fail "no 'stored as run 1'"
[ "$(sqlite3 "$TMP/cc.db" "select count(*) from node_results where run_id=1 and stage='facts' and outcome='pass'")" -ge 1 ] ||
  fail "no facts result from the installed agent"

# 3. The mpi stage runs the installed clustercheck-mpi-probe (two local
# "nodes"), where the package has it and Open MPI's mpirun is here.
if grep -q ' \./usr/lib/clustercheck/clustercheck-mpi-probe$' "$TMP/contents" &&
  mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  cat >"$TMP/mpi.toml" <<TOML
name = "package-mpi"
transport = "local"
[[nodes]]
name = "n1"
address = "127.0.0.11"
[[nodes]]
name = "n2"
address = "127.0.0.12"
[stages]
run = ["facts", "mpi"]
[stages.mpi]
timeout_s = 60
iters = 3
message_size = "64K"
TOML
  "$CC" run "$TMP/mpi.toml" --db "$TMP/cc.db" >"$TMP/mpi.out" 2>&1
  rc=$?
  [ $rc -le 1 ] || { cat "$TMP/mpi.out"; fail "the mpi run exited $rc"; }
  mpi_pass=$(sqlite3 "$TMP/cc.db" "select count(*) from node_results where run_id=2 and stage='mpi' and outcome='pass'")
  [ "$mpi_pass" -ge 2 ] || { cat "$TMP/mpi.out"; sqlite3 "$TMP/cc.db" "select node, outcome, message from node_results where run_id=2 and stage='mpi'"; fail "the installed mpi probe did not pass"; }
  sqlite3 "$TMP/cc.db" "select meta from runs where id=2" |
    grep -q "\"$TMP/root/usr/lib/clustercheck/clustercheck-mpi-probe\"" ||
    fail "the mpirun argv does not name the installed probe"
  echo "ok - the mpi stage ran the installed probe ($mpi_pass passes)"
fi

# 4. Without its agent, the installed controller names where it looked.
mv "$TMP/root/usr/lib/clustercheck/clustercheck-agent" "$TMP/agent.away"
"$CC" run "$TMP/local.toml" --db "$TMP/cc.db" >"$TMP/noagent.out" 2>&1
grep -q "$TMP/root/usr/lib/clustercheck/clustercheck-agent not found (.*reinstall" "$TMP/noagent.out" ||
  { cat "$TMP/noagent.out"; fail "a missing agent is not reported at its installed path"; }
echo PASS
