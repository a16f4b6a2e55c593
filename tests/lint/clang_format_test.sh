#!/usr/bin/env bash
# Every C and C++ file of the repository is as clang-format (.clang-format:
# Google style, 100 columns) would write it, so a change never arrives with
# a reformatting of lines it did not touch. Checks every tracked file, which
# covers the changed ones on a clean clone. Fix: make format.
set -u
BUILD=${1:?build dir}
cd "$(dirname "$0")/../.." || exit 1
command -v clang-format >/dev/null || { echo "SKIP: clang-format missing (make deps installs it)"; exit 77; }
git rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
files=$(git ls-files '*.cc' '*.h' '*.c' | grep -v '^tests/fixtures/')
[ -n "$files" ] || { echo "FAIL: no C/C++ files found"; exit 1; }
out=$(echo "$files" | xargs clang-format --dry-run -Werror 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "$out" | grep -E '^[^ ].*: (error|warning):' | head -40
  echo "FAIL: files above are not clang-formatted ($(echo "$out" | grep -cE ': (error|warning):') places); fix: make format"
  exit 1
fi
echo "PASS: $(echo "$files" | wc -l) files formatted"
