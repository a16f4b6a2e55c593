#!/bin/bash
# The HTML report of a run with faults in every stage, rendered by headless
# Chromium: the page is self-contained (no network fetch), the DOM has a
# heatmap per pair check and the verdicts, and the screenshot is a real
# picture. Set KEEP_SCREENSHOT=path to keep the PNG (docs/report-example.png).
set -u
BUILD=${1:?build dir}
CC="$BUILD/clustercheck"
TESTS="$BUILD/clustercheck_tests"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "SKIP: chromium not installed (scripts/install-deps.sh)"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

CLUSTERCHECK_WRITE_SAMPLE_DB="$TMP/cc.db" "$TESTS" \
  --gtest_filter=SampleRuns.WriteTheSampleDatabaseWhenAsked >"$TMP/gtest.out" 2>&1 \
  || { cat "$TMP/gtest.out"; fail "could not write the sample database"; }
[ -s "$TMP/cc.db" ] || fail "no sample database"

"$CC" report --db "$TMP/cc.db" 3 --html "$TMP/page.html" >"$TMP/report.txt" \
  || fail "report --html exited $?"
[ -s "$TMP/page.html" ] || fail "no page written"

# Self-contained: nothing that makes a browser fetch.
if grep -Eio '<(script|link|img|iframe|object|embed|source|video|audio)[^>]*(src|href)=' "$TMP/page.html"; then
  fail "page references external resources"
fi
if grep -Eio '(src|href|xlink:href)=["'"'"']?(https?:)?//' "$TMP/page.html" \
    || grep -Eio 'url\(["'"'"']?(https?:)?//' "$TMP/page.html" || grep -Eio '@import' "$TMP/page.html"; then
  fail "page has a network reference"
fi
grep -qi '<script' "$TMP/page.html" && fail "page has a script"

PROFILE=$(mktemp -d -p "$TMP")
run_chromium() {
  timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --user-data-dir="$PROFILE" "$@" 2>>"$TMP/chromium.err"
}
run_chromium --dump-dom "file://$TMP/page.html" >"$TMP/dom.html" \
  || { tail -20 "$TMP/chromium.err"; fail "chromium --dump-dom failed"; }
n_svg=$(grep -o '<svg class="heatmap"' "$TMP/dom.html" | wc -l)
# Pair checks of the sample: nics ping/ib0, ports tcp/22 and tcp/29500,
# nccl allreduce, mpi pingpong.
[ "$n_svg" -eq 5 ] || fail "expected 5 heatmaps in the DOM, found $n_svg"
for text in "gpu03 drops tcp/29500 from every peer" \
            "look at OUTPUT on gpu01 and INPUT on gpu02" \
            "this also explains 7 failing pair results" \
            "gpu06 cannot be reached over SSH" \
            "presented a host key that does not match" \
            "driver: gpu04 has 535.104.05" \
            "check the cable and switch port of gpu05" \
            "nccl allreduce gpu02" \
            "mpi pingpong fails between gpu01 and gpu04"; do
  grep -qF "$text" "$TMP/dom.html" || fail "verdict text missing from the DOM: $text"
done
grep -q 'linearGradient' "$TMP/dom.html" || fail "no busbw colour scale"
grep -q '3f1c9a7e5b2d4c6f8a0e1d3b5c7a9f2e4d6b8a0c1e3f5a7b9d2c4e6f8a1b3c5d' "$TMP/dom.html" \
  || fail "inventory sha256 missing from the metadata"

run_chromium --hide-scrollbars --screenshot="$TMP/out.png" --window-size=1400,2000 \
  "file://$TMP/page.html" >/dev/null || { tail -20 "$TMP/chromium.err"; fail "screenshot failed"; }
[ -s "$TMP/out.png" ] || fail "no screenshot"
head -c 8 "$TMP/out.png" | od -An -tx1 | grep -q "89 50 4e 47" || fail "screenshot is not a PNG"
size=$(stat -c %s "$TMP/out.png")
# A blank 1400x2000 page compresses to a few KB; the report is far richer.
[ "$size" -gt 40000 ] || fail "screenshot suspiciously small ($size bytes)"
if [ -n "${KEEP_SCREENSHOT:-}" ]; then cp "$TMP/out.png" "$KEEP_SCREENSHOT"; fi
echo "ok: $n_svg heatmaps, screenshot $size bytes"
