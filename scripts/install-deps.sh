#!/bin/sh
# Installs the Debian packages clustercheck needs to build and test.
# Idempotent and silent when everything is already there; run as root
# (or with sudo available). Used by `make run`, `make test` and CI.
set -eu

PACKAGES="build-essential cmake ninja-build pkg-config git
libssh-dev libssl-dev libtomlplusplus-dev libsqlite3-dev nlohmann-json3-dev
libcli11-dev libgtest-dev libgmock-dev help2man dpkg-dev
openssh-server openssh-client iproute2 iptables iputils-ping procps psmisc pdsh nmap
libopenmpi-dev openmpi-bin sqlite3 chromium libxml2-utils ccache time bc"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages:$missing; run as root or install sudo" >&2
    exit 1
  fi
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
