#!/bin/bash
# The errors a newcomer meets first, each as one line with its cause and its
# fix (issue 18):
#   1. an inventory path that does not exist;
#   2. a TOML typo (file:line:column);
#   3. an ssh inventory with no identity, no ssh-agent and no key in ~/.ssh;
#   4. host_key_policy = "strict" with an unknown host: the ssh-keyscan line
#      (orchestrator/transport/ssh_transport_test.cc runs that line against a real
#      sshd; here the error reaches the summary of a run);
#   5. `make run` as a user who is not root and has no sudo, with packages
#      missing (scripts/install-deps.sh, run as `nobody`).
set -u
BUILD=${1:?build dir}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CC="$BUILD/clustercheck"
TMP=$(mktemp -d)
chmod 0755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }
DB="$TMP/cc.db"

# one_line_error TEXT WANT_RC PATTERN FILE: FILE has exactly one line, it
# matches PATTERN, and the command exited WANT_RC (in $rc).
one_line_error() {
  local text=$1 want_rc=$2 pat=$3 f=$4
  if [ "$rc" = "$want_rc" ] && [ "$(wc -l <"$f")" = 1 ] && grep -Eq -- "$pat" "$f"; then
    ok "$text: $(cat "$f")"
  else
    not_ok "$text (exit $rc, want $want_rc; /$pat/)"; sed 's/^/  | /' "$f"
  fi
}

# 1. A missing inventory: where to start instead.
"$CC" run "$TMP/pod-a.toml" --db "$DB" >/dev/null 2>"$TMP/1.err"
rc=$?
one_line_error "a missing inventory" 2 \
  "^clustercheck: $TMP/pod-a.toml: cannot read inventory: No such file or directory; to describe a cluster, copy inventories/example.toml" \
  "$TMP/1.err"

# 2. A TOML typo: file, line and column.
printf 'name = "x"\ntransport = "local"\n[[nodes]]\nname = "a\n' >"$TMP/typo.toml"
"$CC" run "$TMP/typo.toml" --db "$DB" >/dev/null 2>"$TMP/2.err"
rc=$?
one_line_error "a TOML typo" 2 "^clustercheck: $TMP/typo.toml:4:[0-9]+: TOML syntax error" "$TMP/2.err"

# 3. No identity, no agent, no key: refused before any node is contacted.
mkdir -p "$TMP/home/.ssh"
cat >"$TMP/ssh.toml" <<'TOML'
name = "newcomer"
[ssh]
connect_timeout_s = 1
[[nodes]]
name = "gpu001"
address = "192.0.2.1"
TOML
start=$(date +%s)
env -u SSH_AUTH_SOCK HOME="$TMP/home" "$CC" run "$TMP/ssh.toml" --db "$DB" >/dev/null 2>"$TMP/3.err"
rc=$?
one_line_error "no ssh identity and no agent" 2 \
  "^clustercheck: no ssh identity: no ssh-agent \(SSH_AUTH_SOCK is unset\), no key in $TMP/home/.ssh .*fix: ssh-keygen -t ed25519" \
  "$TMP/3.err"
[ $(($(date +%s) - start)) -le 2 ] && ok "... at once, without contacting the node" ||
  not_ok "no-identity took $(($(date +%s) - start)) s"
# A key in ~/.ssh is enough to get past it (the node is then unreachable).
touch "$TMP/home/.ssh/id_ed25519"
env -u SSH_AUTH_SOCK HOME="$TMP/home" "$CC" run "$TMP/ssh.toml" --db "$DB" >/dev/null 2>"$TMP/3b.err"
grep -q "no ssh identity" "$TMP/3b.err" && not_ok "a key in ~/.ssh still reported as no identity" ||
  ok "a key in ~/.ssh is enough"

# 4. Strict host keys and an unknown host, against this machine's own sshd
#    when one can be started (root, openssh-server).
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null; then
  port=$((20000 + $$ % 20000))
  ssh-keygen -q -t ed25519 -N '' -f "$TMP/hostkey"
  ssh-keygen -q -t ed25519 -N '' -f "$TMP/client"
  cp "$TMP/client.pub" "$TMP/authorized_keys"
  mkdir -p /run/sshd
  /usr/sbin/sshd -D -f /dev/null -o Port=$port -o ListenAddress=127.0.0.1 \
    -o HostKey="$TMP/hostkey" -o AuthorizedKeysFile="$TMP/authorized_keys" \
    -o PidFile=none -o StrictModes=no -o UsePAM=no -o PermitRootLogin=prohibit-password \
    -E "$TMP/sshd.log" &
  sshd_pid=$!
  trap 'kill $sshd_pid 2>/dev/null; rm -rf "$TMP"' EXIT
  for _ in $(seq 50); do ss -Hltn "sport = :$port" | grep -q LISTEN && break; sleep 0.1; done
  : >"$TMP/known_hosts"
  cat >"$TMP/strict.toml" <<TOML
name = "strict"
[ssh]
user = "root"
port = $port
identity = "$TMP/client"
known_hosts = "$TMP/known_hosts"
config_file = "/dev/null"
host_key_policy = "strict"
[[nodes]]
name = "node1"
address = "127.0.0.1"
[stages]
run = ["facts"]
TOML
  "$CC" run "$TMP/strict.toml" --db "$DB" >"$TMP/4.out" 2>"$TMP/4.err"
  rc=$?
  want="ssh-keyscan -H -p $port 127.0.0.1 >> $TMP/known_hosts"
  if grep -qF -- "$want" "$TMP/4.out" && grep -q 'accept-new' "$TMP/4.out"; then
    ok "strict + unknown host: the summary shows '$want' and accept-new"
  else
    not_ok "strict + unknown host: no '$want' in the summary"; sed 's/^/  | /' "$TMP/4.out" "$TMP/4.err"
  fi
  kill $sshd_pid 2>/dev/null
else
  echo "# skipped 4: needs root and openssh-server (the unit test covers it)"
fi

# 5. `make run` (its deps step) as a user without root and without sudo.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  CLUSTERCHECK_DEPS="bash cc-no-such-package" CLUSTERCHECK_SUDO=cc-no-sudo \
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
    sh "$SRC/scripts/install-deps.sh" >/dev/null 2>"$TMP/5.err"
  rc=$?
  one_line_error "make run as nobody without sudo" 1 \
    "^install-deps: packages missing \(cc-no-such-package\) and nobody is not root and has no sudo; fix: as root run: apt-get install -y cc-no-such-package" \
    "$TMP/5.err"
else
  echo "# skipped 5: needs root to become nobody"
fi

[ "$failures" = 0 ] && echo PASS || { echo "FAIL: $failures checks"; exit 1; }
