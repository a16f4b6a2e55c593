#!/usr/bin/env python3
"""Lists the longest C++ functions of the tree: the measure of the
architecture issue's "no function over ~80 lines". A function is a
definition that starts at column 0 (the code is clang-formatted, so
top-level definitions do) and ends at the next "}" at column 0; its length
counts every line from the signature's first line to that brace.

  scripts/function_lengths.py [--over N] [--top N] [DIR...]
"""
import argparse
import os
import re
import subprocess
import sys

SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(override\s*)?(noexcept\s*)?(->\s*[\w:<>,\s*&]+)?\{\s*$")
NOT_A_FUNCTION = re.compile(r"^(namespace|struct|class|enum|union|extern|#|//|/\*|\}|template\s*<[^>]*>\s*$)")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and not NOT_A_FUNCTION.match(line) and "(" in line:
            # The signature may run over several lines up to the "{".
            j = i
            while j < len(lines) and j < i + 8 and lines[j].strip() \
                    and not lines[j].rstrip().endswith(("{", ";", "}")):
                j += 1
            if j < len(lines) and SIGNATURE_END.search(lines[j]) and "=" not in line.split("(")[0]:
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                name = re.sub(r"\(.*", "", line).split()[-1] if line.split() else line
                yield name.lstrip("*&"), i + 1, k - i + 1
                i = k + 1
                continue
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--over", type=int, default=80)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("dirs", nargs="*", default=["common", "agent", "orchestrator", "reports", "mpi"])
    a = ap.parse_args()
    files = subprocess.run(["git", "ls-files", *a.dirs], capture_output=True, text=True,
                           check=True).stdout.split()
    found = []
    for p in files:
        if p.endswith(".cc") and not p.endswith("_test.cc") and os.path.exists(p):
            found += [(n, length, p, line) for name, line, length in functions(p) for n in [name]]
    found.sort(key=lambda f: -f[1])
    over = [f for f in found if f[1] > a.over]
    print(f"{len(found)} functions in non-test .cc files; {len(over)} over {a.over} lines; "
          f"longest {found[0][1] if found else 0}")
    for name, length, path, line in found[:a.top]:
        print(f"{length:5d}  {name}  {path}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
