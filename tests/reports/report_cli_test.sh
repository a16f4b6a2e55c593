#!/bin/bash
# The report commands on a sample database (runs 1 and 2: one link
# regressed, one node recovered; run 3: faults in every stage): JUnit that
# parses with the expected failures, JSON with the verdicts, history, diff
# saying exactly what changed, and run --dry-run / --rerun-failed plans.
set -u
BUILD=${1:?build dir}
CC="$BUILD/clustercheck"
TESTS="$BUILD/clustercheck_tests"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
DB="$TMP/cc.db"

CLUSTERCHECK_WRITE_SAMPLE_DB="$DB" "$TESTS" \
  --gtest_filter=SampleRuns.WriteTheSampleDatabaseWhenAsked >"$TMP/gtest.out" 2>&1 \
  || { cat "$TMP/gtest.out"; fail "could not write the sample database"; }

# JUnit: valid XML, a suite per stage, the failing testcases counted.
"$CC" report --db "$DB" 3 --junit "$TMP/junit.xml" >/dev/null || fail "report --junit exited $?"
command -v xmllint >/dev/null || { echo "SKIP: xmllint missing (libxml2-utils)"; exit 77; }
xmllint --noout "$TMP/junit.xml" || fail "JUnit does not parse"
count() { xmllint --xpath "$1" "$TMP/junit.xml"; }
[ "$(count 'count(//testsuite)')" = 7 ] || fail "expected 7 suites, got $(count 'count(//testsuite)')"
# 43 node checks (the two ports verdict rows are evidence, not checks) + 16
# pairs that did not pass.
[ "$(count 'count(//testcase)')" = 59 ] || fail "expected 59 testcases, got $(count 'count(//testcase)')"
[ "$(count 'count(//failure)')" = 21 ] || fail "expected 21 failures, got $(count 'count(//failure)')"
[ "$(count 'count(//failure[@type="hang"])')" = 2 ] || fail "expected 2 hangs"
[ "$(count 'string(/testsuites/@failures)')" = 21 ] || fail "testsuites@failures is wrong"
[ "$(count 'count(//testsuite[@name="ports"]/testcase/failure)')" = 5 ] || fail "ports failures"
count 'string(//testcase[@classname="connect.agent"][@name="gpu07"]/failure/@message)' \
  | grep -q "host-key-mismatch" || fail "gpu07's failure message lacks the reason"

# JSON: the run plus verdicts and the node table.
"$CC" report --db "$DB" 3 --json >"$TMP/report.json" || fail "report --json exited $?"
grep -q '"kind": "port-blocked"' "$TMP/report.json" || fail "JSON lacks the port-blocked verdict"
grep -q '"node_table"' "$TMP/report.json" || fail "JSON lacks the node table"

# Terminal: verdict first, then the verdicts.
"$CC" report --db "$DB" 3 >"$TMP/report.txt" || fail "report exited $?"
head -1 "$TMP/report.txt" | grep -q '^FAIL: ' || fail "first line is not the verdict"
grep -q 'port-blocked .*gpu03' "$TMP/report.txt" || fail "terminal lacks gpu03's blocked port"

# History lists the three runs with verdict counts.
"$CC" history --db "$DB" >"$TMP/history.txt" || fail "history exited $?"
[ "$(grep -cE '^[123] ' "$TMP/history.txt")" = 3 ] || { cat "$TMP/history.txt"; fail "history lacks runs"; }

# diff: exactly one link regressed and one node recovered; exit 1.
"$CC" diff --db "$DB" 1 2 >"$TMP/diff.txt"
rc=$?
cat "$TMP/diff.txt"
[ $rc -eq 1 ] || fail "diff with a regression exited $rc, not 1"
[ "$(head -1 "$TMP/diff.txt")" = "run 1 -> run 2: 1 regressed, 1 recovered, 0 slower, 0 faster, 0 nodes added, 0 nodes removed" ] \
  || fail "diff does not lead with the counts"
grep -qx '  nccl allreduce gpu01 <-> gpu03: pass -> fail (NCCL WARN NET/IB : Got completion from peer with error 12)' \
  "$TMP/diff.txt" || fail "diff does not name the regressed link"
grep -qx '  gpu02 parity/driver: fail -> pass (535.104.05 -> 550.54.15)' "$TMP/diff.txt" \
  || fail "diff does not name the recovered node"
"$CC" diff --db "$DB" 2 2 >/dev/null || fail "diff of a run with itself exited $?"

# run --dry-run prints the plan and contacts nothing; --rerun-failed
# narrows it to what failed.
cat >"$TMP/pod.toml" <<TOML
name = "pod-a"
transport = "local"
[[nodes]]
name = "gpu[01-04]"
[stages]
run = ["facts", "parity"]
TOML
"$CC" run "$TMP/pod.toml" --db "$DB" --dry-run >"$TMP/plan.txt" || fail "dry run exited $?"
grep -q '^plan for pod-a: 4 nodes' "$TMP/plan.txt" || { cat "$TMP/plan.txt"; fail "plan header"; }
[ "$(sqlite3 "$DB" 'select count(*) from runs')" = 3 ] || fail "a dry run stored a run"
"$CC" run "$TMP/pod.toml" --db "$DB" --dry-run --rerun-failed 2 >"$TMP/rerun.txt" \
  || fail "rerun dry run exited $?"
grep -q '^plan for pod-a: 2 nodes' "$TMP/rerun.txt" || { cat "$TMP/rerun.txt"; fail "rerun plan"; }
"$CC" run "$TMP/pod.toml" --db "$DB" --rerun-failed 99 2>"$TMP/rerun.err"
[ $? -eq 2 ] || fail "rerun of a missing run did not exit 2"
echo ok
