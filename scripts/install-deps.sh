#!/bin/sh
# Installs the Debian packages clustercheck needs to build and test.
# Idempotent and silent when everything is already there; run as root
# (or with sudo available). Used by `make run`, `make test` and CI.
set -eu

# CLUSTERCHECK_DEPS replaces the list and CLUSTERCHECK_SUDO names the sudo
# program (tests/e2e/first_run_errors_test.sh uses both).
PACKAGES=${CLUSTERCHECK_DEPS:-"build-essential cmake ninja-build pkg-config git
libssh-dev libssl-dev libtomlplusplus-dev libsqlite3-dev nlohmann-json3-dev
libcli11-dev libgtest-dev libgmock-dev help2man dpkg-dev
openssh-server openssh-client iproute2 iptables iputils-ping procps psmisc pdsh nmap
libopenmpi-dev openmpi-bin slurmctld slurmd slurm-client munge
sqlite3 chromium libxml2-utils ccache time bc clang-format"}

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  sudo_program=${CLUSTERCHECK_SUDO:-sudo}
  if command -v "$sudo_program" >/dev/null 2>&1; then SUDO=$sudo_program; else
    # One line: the cause, then the fix that works without sudo.
    echo "install-deps: packages missing ($(echo $missing)) and $(id -un 2>/dev/null || id -u) is not root and has no sudo; fix: as root run: apt-get install -y$missing  (or su -c '$0'), then make run again" >&2
    exit 1
  fi
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
