#!/usr/bin/env bash
# shellcheck disable=SC2015,SC2016,SC2094  # a && b || die is intended; sh -c scripts take $1
# simcluster.sh: a simulated cluster on one machine, for clustercheck's
# integration tests. Each node is a network namespace with its own hostname
# (a UTS namespace around its sshd), one veth NIC per network on a bridge in
# the root namespace, and an sshd with its own host key. The controller runs
# in the root namespace and reaches every node through the bridges, which
# carry the host address .254 of each network.
#
#   simcluster.sh up N [--nics K] [--dir DIR] [--prefix P] [--mtu-data M]
#                      [--base B|auto] [--ssh-nic I] [--docker0]
#                      [--known-hosts all|inventory] [--gpus G]
#   simcluster.sh down | status | addr NODE [NIC] | exec NODE CMD...
#   simcluster.sh fault NODE|all WHAT [ARGS...]      (see usage below)
#
# Needs root, iproute2, openssh-server/-client, util-linux; iptables for the
# iptables fault, iputils-ping for ping. Only 10.<B+k>.0.0/24 addresses inside
# the namespaces (plus .254 on the bridges) and loopback are used; a cluster
# of more than 253 nodes has /23 networks instead (see ip_of).
set -euo pipefail
# With pipefail, "cmd | grep -q" fails when grep exits at its first match and
# cmd then dies of SIGPIPE: pipelines here grep into /dev/null instead.

readonly kSshd=/usr/sbin/sshd
readonly kSftpServer=/usr/lib/openssh/sftp-server
# How long up waits for the sshds to answer: this much, plus a second per
# kNodesPerWaitS nodes (hundreds of sshds start slowly on a busy small machine).
readonly kPortWaitS=10 kNodesPerWaitS=4
# Nodes of one /24 network (.254 is the bridge's); past it a network is a /23.
readonly kNodesPer24=253 kMaxNodes=500
kHere=${BASH_SOURCE[0]}
[[ $kHere == /* ]] || kHere=$PWD/$kHere
kHere=${kHere%/*}
readonly kHere

usage() {
  cat <<'EOF'
usage: simcluster.sh [OPTIONS] COMMAND ...
commands:
  up N                    create nodes node1..nodeN, N <= 500 (idempotent, see README)
  down                    remove namespaces, bridges, veths, sshds, files
  status                  list nodes and whether their sshd answers (exit 1 if not)
  addr NODE [NIC]         print a node's address on NIC (default: the ssh NIC)
  exec NODE CMD...        run CMD inside the node (its netns and hostname)
  fault NODE|all WHAT     WHAT is one of:
      sshd-stop | sshd-start | revoke-key | restore-key | new-hostkey
      link-down [NIC] | link-up [NIC] | mtu NIC VALUE | iptables ARGS...
      decoy-bridge | hang-agent | unhang-agent
      talking-shell [TEXT] | quiet-shell
options (anywhere before a fault's WHAT; env SIMCLUSTER_DIR/_PREFIX too):
  --dir DIR        state directory (default /tmp/simcluster-PREFIX)
  --prefix P       name prefix, [a-z][a-z0-9]{0,7} (default cc)
  --nics K         networks per node, 1..8 (default 1): data, mgmt, net2...
  --mtu-data M     MTU of the data network (default 9000)
  --base B|auto    network k is 10.(B+k).0.0/24, /23 past 253 nodes
                   (default 42; auto = first free)
  --ssh-nic I      NIC index whose address goes into the inventory (default 0)
  --agent-dir shared|home   inventory agent_dir: DIR/agent, one directory for
                   all nodes (default), or ~/.cache/clustercheck, which is
                   per node (each node's ~ is DIR/nodeI/home)
  --docker0        every node gets a docker0 bridge with 172.17.0.1/16 (the
                   decoy of a Docker host), made with the node
  --known-hosts all|inventory   known_hosts holds every node address on every
                   network (all, default) or only the inventory's addresses
                   (inventory: as on a site whose known_hosts came from ssh)
  --gpus G         the inventory's [defaults] gpus = G (default: none)
NIC is eth0..eth7, an index 0..7, or data|mgmt.
EOF
}

die() { echo "simcluster: $*" >&2; exit 1; }
log() { echo "simcluster: $*" >&2; }

# ---- options and state ---------------------------------------------------

opt_dir=${SIMCLUSTER_DIR:-}
opt_prefix=${SIMCLUSTER_PREFIX:-}
opt_nics="" opt_mtu="" opt_base="" opt_ssh_nic="" opt_agent_dir=shared
opt_docker0=0 opt_known_hosts=all opt_gpus=""
args=()

parse_args() {
  local raw=0
  while [ $# -gt 0 ]; do
    if [ "$raw" = 1 ]; then args+=("$1"); shift; continue; fi
    case $1 in
      --dir) opt_dir=${2:?--dir needs a value}; shift 2 ;;
      --prefix) opt_prefix=${2:?--prefix needs a value}; shift 2 ;;
      --nics) opt_nics=${2:?--nics needs a value}; shift 2 ;;
      --mtu-data) opt_mtu=${2:?--mtu-data needs a value}; shift 2 ;;
      --base) opt_base=${2:?--base needs a value}; shift 2 ;;
      --ssh-nic) opt_ssh_nic=${2:?--ssh-nic needs a value}; shift 2 ;;
      --agent-dir) opt_agent_dir=${2:?--agent-dir needs a value}; shift 2 ;;
      --docker0) opt_docker0=1; shift ;;
      --known-hosts) opt_known_hosts=${2:?--known-hosts needs a value}; shift 2 ;;
      --gpus) opt_gpus=${2:?--gpus needs a value}; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      *)
        args+=("$1"); shift
        # After "fault NODE WHAT" everything belongs to WHAT (iptables -A ...).
        if [ "${#args[@]}" -ge 3 ] && [ "${args[0]}" = fault ]; then raw=1; fi
        ;;
    esac
  done
}

is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }

# Resolves DIR and PREFIX, and loads DIR/state when it exists. Sets P, DIR,
# N, K, MTU, BASE, SSH_NIC, DOCKER0 (N=0 when there is no state).
load_config() {
  P=${opt_prefix:-cc}
  DIR=${opt_dir:-/tmp/simcluster-$P}
  [[ $DIR == /* ]] || DIR=$PWD/$DIR
  DIR=${DIR%/}
  case $DIR in *[\"\\\ \'\$]*) die "--dir must not contain quotes, spaces, \\ or \$: $DIR" ;; esac
  N=0 K=1 MTU=9000 BASE=42 SSH_NIC=0 DOCKER0=0
  if [ -f "$DIR/state" ]; then
    local key val
    # Read, not sourced: only known keys with plain values count.
    while IFS='=' read -r key val; do
      [[ $val =~ ^[a-z0-9]+$ ]] || continue
      case $key in
        SC_PREFIX)
          if [ -n "$opt_prefix" ] && [ "$val" != "$opt_prefix" ]; then
            die "$DIR holds cluster prefix '$val', not '$opt_prefix'"
          fi
          P=$val ;;
        SC_N) N=$val ;;
        SC_K) K=$val ;;
        SC_MTU) MTU=$val ;;
        SC_BASE) BASE=$val ;;
        SC_SSH_NIC) SSH_NIC=$val ;;
        SC_DOCKER0) DOCKER0=$val ;;
      esac
    done <"$DIR/state"
  fi
  [[ $P =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "--prefix must match [a-z][a-z0-9]{0,7} (interface names are 15 chars at most): $P"
}

ns_of() { echo "$P-node$1"; }
bridge_of() { echo "$P-br$1"; }
hostveth_of() { echo "$P-$1-$2"; }      # node i, nic k: "cc-3-0"
# Node i's address on network k: 10.(B+k).0.i for the first 253 nodes, then
# 10.(B+k).1.(i-253); the bridge is 10.(B+k).0.254 (bridge_ip). Up to 253
# nodes the network is the /24 every test was written for; past it a /23
# (net_bits), which holds 507 addresses besides the bridge.
ip_of() {
  if [ "$1" -le "$kNodesPer24" ]; then
    echo "10.$((BASE + $2)).0.$1"
  else
    echo "10.$((BASE + $2)).1.$(($1 - kNodesPer24))"
  fi
}
bridge_ip() { echo "10.$((BASE + $1)).0.254"; }
net_bits() { if [ "$N" -le "$kNodesPer24" ]; then echo 24; else echo 23; fi; }
mtu_of() { if [ "$1" = 0 ]; then echo "$MTU"; else echo 1500; fi; }
net_name() { case $1 in 0) echo data ;; 1) echo mgmt ;; *) echo "net$1" ;; esac; }

# "node3" or "3" -> 3, checked against N.
node_index() {
  local i=${1#node}
  is_uint "$i" && [ "$i" -ge 1 ] && [ "$i" -le "$N" ] ||
    die "no node '$1' in the cluster at $DIR (nodes: node1..node$N)"
  echo $((10#$i))
}

# "eth1" / "1" / "mgmt" -> 1, checked against K.
nic_index() {
  local k
  case $1 in data) k=0 ;; mgmt) k=1 ;; eth*) k=${1#eth} ;; *) k=$1 ;; esac
  is_uint "$k" && [ "$k" -lt "$K" ] ||
    die "no NIC '$1' (this cluster has eth0..eth$((K - 1)))"
  echo $((10#$k))
}

require_root() {
  [ "$(id -u)" = 0 ] || die "must run as root (network namespaces, bridges)"
  command -v ip >/dev/null || die "ip (iproute2) is not installed"
}

require_cluster() {
  [ "$N" -gt 0 ] || die "no cluster at $DIR (run: simcluster.sh up N --dir $DIR)"
}

# One lock for every cluster on this machine: address allocation and link
# names must not race between parallel test runs.
take_lock() {
  local lockdir=/run/lock
  [ -d "$lockdir" ] || lockdir=/tmp
  exec 9>"$lockdir/simcluster.lock"
  flock -w 60 9 || die "could not take $lockdir/simcluster.lock within 60 s"
}

# ---- sshd -----------------------------------------------------------------

sshd_pid() {   # pid of node i's listening sshd, or nothing
  local d=$DIR/node$1 pid
  [ -f "$d/sshd.pid" ] || return 0
  pid=$(cat "$d/sshd.pid" 2>/dev/null) || return 0
  is_uint "$pid" || return 0
  # Only ours: the pid file may be stale and the pid reused.
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -F -- "$d/sshd_config" >/dev/null; then
    echo "$pid"
  fi
}

# Writes node i's sshd_config; with "hang" the agent never starts (see
# force_command.sh).
write_sshd_config() {
  local i=$1 mode=${2:-normal} d=$DIR/node$1
  {
    echo "# simcluster node$i ($mode); written by simcluster.sh"
    echo "Port 22"
    echo "ListenAddress 0.0.0.0"
    echo "HostKey $d/ssh_host_ed25519_key"
    echo "PidFile $d/sshd.pid"
    echo "AuthorizedKeysFile $d/authorized_keys"
    echo "PermitRootLogin prohibit-password"
    echo "PubkeyAuthentication yes"
    echo "PasswordAuthentication no"
    echo "KbdInteractiveAuthentication no"
    echo "UsePAM no"
    echo "StrictModes no"
    echo "UseDNS no"
    echo "PrintMotd no"
    echo "X11Forwarding no"
    echo "MaxStartups 200"
    echo "MaxSessions 100"
    echo "LogLevel ERROR"
    if [ "$mode" = talk ]; then
      # As Debian ships it: the external sftp-server, which sshd starts
      # through the login shell, so a talking ~/.bashrc garbles SFTP.
      echo "Subsystem sftp $kSftpServer"
    elif [ "$mode" = hang ]; then
      # ForceCommand also catches subsystems, so sftp must be a program the
      # wrapper can exec (internal-sftp is not one).
      echo "Subsystem sftp $kSftpServer"
      echo "ForceCommand $d/force_command.sh"
    else
      echo "Subsystem sftp internal-sftp"
    fi
  } >"$d/sshd_config"
}

write_force_command() {
  local f=$DIR/node$1/force_command.sh
  cat >"$f" <<'EOF'
#!/bin/sh
# hang-agent fault: a command whose program is the clustercheck agent
# (optionally after "exec", "env" and VAR=value words) sleeps instead of
# running; everything else (uploads, sftp, shells) runs as usual.
cmd=${SSH_ORIGINAL_COMMAND-}
[ -n "$cmd" ] || exec "${SHELL:-/bin/sh}" -l
if printf '%s\n' "$cmd" | grep -Eq "^ *(exec +)?(env +)?([A-Za-z_][A-Za-z0-9_]*=('[^']*'|[^ ]*) +)*'?([^ ']*/)?(agent-[^ /']*|clustercheck-agent)'?( |$)"; then
  exec sleep 3600
fi
# /bin/sh, not $SHELL: sshd already ran the login shell (and its rc files) once.
exec /bin/sh -c "$cmd"
EOF
  chmod 0755 "$f"
}

start_sshd() {   # starts node i's sshd in the background (no wait)
  local i=$1 d=$DIR/node$1
  rm -f "$d/sshd.pid"
  # setsid: no terminal signals; stdio away from the caller (ctest waits for
  # its pipes to close).
  node_command "$i" "$kSshd" -D -f "$d/sshd_config" -E "$d/sshd.log"
  setsid "${node_cmd[@]}" </dev/null >>"$d/sshd.log" 2>&1 &
}

# Whether pid runs (a zombie does not: our PID 1 may reap slowly).
alive() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

stop_sshd() {   # stops node i's listener; open sessions live on (like systemctl stop)
  local pid
  pid=$(sshd_pid "$1")
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    alive "$pid" || break
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DIR/node$1/sshd.pid"
}

# Whether an SSH banner comes back from ip:22 within a second.
ssh_answers() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/22" || exit 1
    IFS= read -r -t 1 line <&3 || exit 1
    # Our own banner: hanging up before it makes sshd log an error.
    printf "SSH-2.0-simcluster-probe\r\n" >&3
    [[ $line == SSH-* ]]' "$1" 2>/dev/null
}

# Waits until each listed node answers over its ssh NIC; fails naming those
# that do not, with the tail of their sshd log.
wait_sshd() {
  local wait_s=$((kPortWaitS + $# / kNodesPerWaitS))
  local deadline=$((SECONDS + wait_s)) pending=("$@") left i
  while [ "${#pending[@]}" -gt 0 ]; do
    left=()
    for i in "${pending[@]}"; do
      ssh_answers "$(ip_of "$i" "$SSH_NIC")" || left+=("$i")
    done
    pending=("${left[@]+"${left[@]}"}")
    [ "${#pending[@]}" -eq 0 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      for i in "${pending[@]}"; do
        log "node$i: sshd does not answer on $(ip_of "$i" "$SSH_NIC"):22 after ${wait_s} s; log:"
        tail -n 5 "$DIR/node$i/sshd.log" >&2 2>/dev/null || true
      done
      return 1
    fi
    sleep 0.1
  done
}

restart_sshd() {
  stop_sshd "$1"
  start_sshd "$1"
  wait_sshd "$1" || die "node$1: sshd did not come back"
}

# ---- up / down --------------------------------------------------------------

# Whether 10.b.0.0/<net_bits> is free in the root namespace (no address, no
# route other than the default one reaches into it).
net_free() {
  local bits
  bits=$(net_bits)
  [ -z "$(ip -4 -o addr show to "10.$1.0.0/$bits" 2>/dev/null)" ] &&
    ! ip -4 route show match "10.$1.0.1" 2>/dev/null | grep -v '^default' >/dev/null &&
    { [ "$bits" = 24 ] || ! ip -4 route show match "10.$1.1.1" 2>/dev/null | grep -v '^default' >/dev/null; }
}

choose_base() {
  local b k ok
  if [ "$opt_base" = auto ]; then
    for ((b = 42; b + K - 1 <= 250; b++)); do
      ok=1
      for ((k = 0; k < K; k++)); do net_free $((b + k)) || { ok=0; break; }; done
      [ "$ok" = 1 ] && { BASE=$b; return 0; }
    done
    die "no free run of $K networks in 10.42-250.0.0/$(net_bits)"
  fi
  BASE=${opt_base:-42}
  is_uint "$BASE" && [ $((BASE + K - 1)) -le 254 ] || die "bad --base: $BASE"
  for ((k = 0; k < K; k++)); do
    net_free $((BASE + k)) || die "10.$((BASE + k)).0.0/$(net_bits) is already in use on this machine ($(ip -4 -o addr show to "10.$((BASE + k)).0.0/$(net_bits)" | awk '{print $2}' | head -1)); another simulated cluster? use --base auto or its down"
  done
}

# With br_netfilter, bridged frames traverse the host's FORWARD chain; a DROP
# policy there (Docker sets one) would cut the nodes off from each other.
allow_bridge_forwarding() {
  local br=$1
  [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" = 1 ] || return 0
  command -v iptables >/dev/null || return 0
  iptables -S FORWARD 2>/dev/null | grep -x -- '-P FORWARD ACCEPT' >/dev/null && return 0
  iptables -I FORWARD -i "$br" -o "$br" -m comment --comment "simcluster-$P" -j ACCEPT
}

cluster_healthy() {   # same shape as asked and every sshd answers
  local i k
  [ "$N" = "$want_n" ] && [ "$K" = "$want_k" ] && [ "$MTU" = "$want_mtu" ] &&
    [ "$SSH_NIC" = "$want_ssh_nic" ] && [ "$DOCKER0" = "$opt_docker0" ] || return 1
  if [ -n "$opt_base" ] && [ "$opt_base" != auto ] && [ "$opt_base" != "$BASE" ]; then return 1; fi
  for ((i = 1; i <= N; i++)); do
    [ -e "/run/netns/$(ns_of "$i")" ] || return 1
    for ((k = 0; k < K; k++)); do
      ip link show "$(hostveth_of "$i" "$k")" >/dev/null 2>&1 || return 1
    done
    if [ "$DOCKER0" = 1 ]; then ip -n "$(ns_of "$i")" link show docker0 >/dev/null 2>&1 || return 1; fi
    [ -n "$(sshd_pid "$i")" ] && ssh_answers "$(ip_of "$i" "$SSH_NIC")" || return 1
  done
}

cmd_up() {
  [ "${#args[@]}" -eq 2 ] || die "usage: simcluster.sh up N [options]"
  want_n=${args[1]} want_k=${opt_nics:-1} want_mtu=${opt_mtu:-9000} want_ssh_nic=${opt_ssh_nic:-0}
  is_uint "$want_n" && [ "$want_n" -ge 1 ] && [ "$want_n" -le "$kMaxNodes" ] || die "N must be 1..$kMaxNodes: $want_n"
  is_uint "$want_k" && [ "$want_k" -ge 1 ] && [ "$want_k" -le 8 ] || die "--nics must be 1..8: $want_k"
  is_uint "$want_mtu" && [ "$want_mtu" -ge 576 ] && [ "$want_mtu" -le 65535 ] || die "bad --mtu-data: $want_mtu"
  is_uint "$want_ssh_nic" && [ "$want_ssh_nic" -lt "$want_k" ] || die "--ssh-nic must be below --nics: $want_ssh_nic"
  case $opt_agent_dir in shared|home) ;; *) die "--agent-dir must be shared or home: $opt_agent_dir" ;; esac
  case $opt_known_hosts in all|inventory) ;; *) die "--known-hosts must be all or inventory: $opt_known_hosts" ;; esac
  [ -z "$opt_gpus" ] || { is_uint "$opt_gpus" && [ "$opt_gpus" -le 1024 ]; } || die "--gpus must be 0..1024: $opt_gpus"
  [ -x "$kSshd" ] || die "$kSshd is missing (install openssh-server)"
  command -v ssh-keygen >/dev/null || die "ssh-keygen is missing (install openssh-client)"
  command -v unshare >/dev/null || die "unshare is missing (install util-linux)"
  if grep -q '^root:!' /etc/shadow 2>/dev/null; then
    log "warning: root's password is locked ('!' in /etc/shadow); sshd with UsePAM no refuses locked accounts even for keys"
  fi
  take_lock
  if [ "$N" -gt 0 ] && cluster_healthy; then
    write_known_hosts
    write_inventory
    log "cluster '$P' with $N nodes is already up ($DIR); kept as it is"
    return 0
  fi
  [ "$N" -gt 0 ] && log "cluster at $DIR differs from the request or is unhealthy; recreating"
  do_down quiet
  N=$want_n K=$want_k MTU=$want_mtu SSH_NIC=$want_ssh_nic DOCKER0=$opt_docker0
  choose_base
  ip netns add "$P-probe" 2>/dev/null && ip netns del "$P-probe" ||
    die "cannot create network namespaces here (ip netns add failed)"

  # The kernel's ARP table is shared by all namespaces and its default hard
  # limit (gc_thresh3 1024) overflows once every node talks to every other
  # (N*(N-1)*K entries, plus other clusters already up): "neighbor table
  # overflow" in dmesg, then "No route to host" and filtered probes at 64
  # nodes. Raise the limits, never lower them.
  local need=$((4 * N * N * K + 1024)) cur
  cur=$(sysctl -n net.ipv4.neigh.default.gc_thresh3 2>/dev/null || echo 0)
  if [ "$cur" -lt "$need" ]; then
    sysctl -qw net.ipv4.neigh.default.gc_thresh3="$need" \
      net.ipv4.neigh.default.gc_thresh2="$((need / 2))" \
      net.ipv4.neigh.default.gc_thresh1="$((need / 4))" >/dev/null 2>&1 ||
      log "warning: could not raise the ARP table limits to $need (sysctl)"
  fi

  local i homes=()
  for ((i = 1; i <= N; i++)); do homes+=("$DIR/node$i/home"); done
  mkdir -p "$DIR" /run/sshd "${homes[@]}"
  chmod 0755 /run/sshd
  chmod 0700 "${homes[@]}"
  touch "$DIR/.simcluster"
  # Written first so that down finds everything even after a failed up.
  printf 'SC_PREFIX=%s\nSC_N=%s\nSC_K=%s\nSC_MTU=%s\nSC_BASE=%s\nSC_SSH_NIC=%s\nSC_DOCKER0=%s\n' \
    "$P" "$N" "$K" "$MTU" "$BASE" "$SSH_NIC" "$DOCKER0" >"$DIR/state"

  local k br hv ns pids=()
  ssh-keygen -q -t ed25519 -N '' -C "simcluster-$P-client" -f "$DIR/id_ed25519" &
  pids+=($!)
  for ((i = 1; i <= N; i++)); do
    ssh-keygen -q -t ed25519 -N '' -C "node$i" -f "$DIR/node$i/ssh_host_ed25519_key" &
    pids+=($!)
  done

  # One ip process for the root namespace, one per node: forks are what an
  # up costs on a busy machine.
  {
    for ((k = 0; k < K; k++)); do
      br=$(bridge_of "$k")
      echo "link add $br mtu $(mtu_of "$k") type bridge"
      echo "addr add $(bridge_ip "$k")/$(net_bits) dev $br"
      echo "link set $br up"
    done
    for ((i = 1; i <= N; i++)); do
      ns=$(ns_of "$i")
      echo "netns add $ns"
      for ((k = 0; k < K; k++)); do
        hv=$(hostveth_of "$i" "$k")
        echo "link add $hv mtu $(mtu_of "$k") type veth peer name eth$k mtu $(mtu_of "$k") netns $ns"
        echo "link set $hv master $(bridge_of "$k") up"
      done
    done
  } | ip -batch - || die "creating bridges, namespaces and veths failed (see above)"
  for ((k = 0; k < K; k++)); do allow_bridge_forwarding "$(bridge_of "$k")"; done
  for ((i = 1; i <= N; i++)); do
    {
      echo "link set lo up"
      for ((k = 0; k < K; k++)); do
        echo "addr add $(ip_of "$i" "$k")/$(net_bits) dev eth$k"
        echo "link set eth$k up"
      done
      if [ "$DOCKER0" = 1 ]; then   # what decoy-bridge makes, from the start
        echo "link add docker0 type bridge"
        echo "addr add 172.17.0.1/16 dev docker0"
        echo "link set docker0 up"
      fi
    } | ip -n "$(ns_of "$i")" -batch - || die "node$i: configuring its NICs failed"
  done

  for pid in "${pids[@]}"; do wait "$pid" || die "ssh-keygen failed"; done
  : >"$DIR/ssh_config"
  mkdir -p "$DIR/agent"
  chmod 0700 "$DIR/agent"
  for ((i = 1; i <= N; i++)); do
    cp "$DIR/id_ed25519.pub" "$DIR/node$i/authorized_keys"
    write_force_command "$i"
    write_sshd_config "$i"
  done
  write_known_hosts
  "$kSshd" -t -f "$DIR/node1/sshd_config" || die "sshd rejects the generated config $DIR/node1/sshd_config"
  for ((i = 1; i <= N; i++)); do start_sshd "$i"; done
  write_inventory
  wait_sshd $(seq 1 "$N") || die "up failed; run: simcluster.sh down --dir $DIR"
  log "cluster '$P' up: $N nodes, $K network(s) 10.$BASE.0.0/$(net_bits)..., inventory $DIR/inventory.toml"
}

# known_hosts: every node address on every network, or (--known-hosts
# inventory) only the address the inventory names, as a site's file that
# grew from ssh to the nodes' names: a tool that ssh-es to another address
# of a node then meets "Host key verification failed" under strict checking.
write_known_hosts() {
  local i k key
  : >"$DIR/known_hosts"
  for ((i = 1; i <= N; i++)); do
    key=$(cut -d' ' -f1,2 "$DIR/node$i/ssh_host_ed25519_key.pub")
    for ((k = 0; k < K; k++)); do
      if [ "$opt_known_hosts" = inventory ] && [ "$k" != "$SSH_NIC" ]; then continue; fi
      echo "$(ip_of "$i" "$k") $key" >>"$DIR/known_hosts"
    done
  done
}

write_inventory() {
  local i
  {
    echo "# Simulated cluster '$P', written by tests/cluster/simcluster.sh up."
    if [ "$opt_agent_dir" = home ]; then
      echo "# Each node's ~ is its own ($DIR/nodeI/home), so every node gets a push."
    else
      echo "# The nodes share this machine's filesystem, so agent_dir is one"
      echo "# directory for all of them: the first push wins, the others find it."
    fi
    echo 'name = "sim"'
    echo 'transport = "ssh"'
    echo
    echo '[ssh]'
    echo 'user = "root"'
    echo 'port = 22'
    echo "identity = \"$DIR/id_ed25519\""
    echo "known_hosts = \"$DIR/known_hosts\""
    echo "config_file = \"$DIR/ssh_config\""
    echo 'host_key_policy = "strict"'
    if [ "$opt_agent_dir" = home ]; then
      echo 'agent_dir = "~/.cache/clustercheck"'
    else
      echo "agent_dir = \"$DIR/agent\""
    fi
    if [ -n "$opt_gpus" ]; then
      echo
      echo '[defaults]'
      echo "gpus = $opt_gpus"
    fi
    for ((i = 1; i <= N; i++)); do
      echo
      echo '[[nodes]]'
      echo "name = \"node$i\""
      echo "address = \"$(ip_of "$i" "$SSH_NIC")\""
    done
  } >"$DIR/inventory.toml"
}

kill_netns_processes() {
  local ns=$1 pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 20); do
    [ -n "$(ip netns pids "$ns" 2>/dev/null)" ] || return 0
    sleep 0.1
  done
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}

our_links() {   # bridges and host veths of prefix P in the root namespace
  ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
    grep -E "^$P-(br[0-9]+|[0-9]+-[0-9]+)\$" || true
}

do_down() {
  local quiet=${1:-} ns l rule i f
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$P-(node[0-9]+|probe)\$"); do
    kill_netns_processes "$ns"
  done
  # Deleting the host veths first is synchronous; netns teardown is not.
  for l in $(our_links); do ip link del "$l" 2>/dev/null || true; done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$P-(node[0-9]+|probe)\$"); do
    ip netns del "$ns" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    [ -z "$(our_links)" ] && break
    for l in $(our_links); do ip link del "$l" 2>/dev/null || true; done
    sleep 0.1
  done
  if command -v iptables >/dev/null; then
    iptables -S FORWARD 2>/dev/null | { grep -E -- "--comment \"?simcluster-$P\"? " || true; } |
      sed 's/^-A //' | while read -r rule; do
        eval "iptables -D $rule" 2>/dev/null || true
      done
  fi
  # sshds whose namespace vanished under them (should not happen).
  for ((i = 1; i <= N; i++)); do stop_sshd "$i"; done
  if [ -f "$DIR/.simcluster" ]; then
    for f in "$DIR"/node[0-9]*; do [ -d "$f" ] && rm -rf -- "$f"; done
    rm -rf -- "$DIR/agent"
    rm -f -- "$DIR"/id_ed25519 "$DIR"/id_ed25519.pub "$DIR"/known_hosts \
      "$DIR"/known_hosts.old "$DIR"/inventory.toml "$DIR"/ssh_config \
      "$DIR"/state "$DIR"/.simcluster
    rmdir -- "$DIR" 2>/dev/null || true
  fi
  [ -n "$quiet" ] || log "cluster '$P' is down"
  if [ -n "$(our_links)" ]; then log "warning: links left: $(our_links | tr '\n' ' ')"; fi
  return 0
}

cmd_down() {
  take_lock
  do_down
}

# ---- status, addr, exec -----------------------------------------------------

cmd_status() {
  require_cluster
  local i k addrs pid state bad=0
  echo "cluster '$P' at $DIR: $N nodes, $K network(s), data MTU $MTU, ssh over eth$SSH_NIC"
  for ((i = 1; i <= N; i++)); do
    addrs=""
    for ((k = 0; k < K; k++)); do addrs+="${addrs:+,}$(ip_of "$i" "$k")"; done
    pid=$(sshd_pid "$i")
    if ! [ -e "/run/netns/$(ns_of "$i")" ]; then
      state="namespace missing"; bad=1
    elif ssh_answers "$(ip_of "$i" "$SSH_NIC")"; then
      state="sshd answers (pid ${pid:-?})"
    else
      state="sshd does not answer${pid:+ (pid $pid)}"; bad=1
    fi
    printf 'node%-4s %-12s %-28s %s\n' "$i" "$(ns_of "$i")" "$addrs" "$state"
  done
  return "$bad"
}

cmd_addr() {
  require_cluster
  [ "${#args[@]}" -ge 2 ] || die "usage: simcluster.sh addr NODE [NIC]"
  local i k=$SSH_NIC
  i=$(node_index "${args[1]}")
  [ "${#args[@]}" -ge 3 ] && k=$(nic_index "${args[2]}")
  ip_of "$i" "$k"
}

cmd_exec() {
  require_cluster
  [ "${#args[@]}" -ge 3 ] || die "usage: simcluster.sh exec NODE CMD..."
  local i
  i=$(node_index "${args[1]}")
  node_command "$i" "${args[@]:2}"
  exec "${node_cmd[@]}"
}

# Sets node_cmd to a command line that runs CMD inside node i: its network
# namespace, a UTS namespace with hostname nodeI, and a mount namespace (made
# by ip netns exec) where DIR/nodeI/home is bind-mounted over root's home, so
# that ssh sessions get their own ~ without root's dotfiles (a slow ~/.bashrc
# would otherwise run in every session).
node_command() {
  local i=$1 home="" root_home="" name
  shift
  while IFS=: read -r name _ _ _ _ root_home _; do
    [ "$name" = root ] && break
  done </etc/passwd
  root_home=${root_home:-/root}
  # The bind would hide DIR or this checkout (and its build dirs) when they
  # live under root's home: then the nodes keep the real home.
  case "$DIR/ $kHere/" in
    "$root_home"/* | *" $root_home"/*) ;;
    *) [ -d "$DIR/node$i/home" ] && home=$DIR/node$i/home ;;
  esac
  node_cmd=(ip netns exec "$(ns_of "$i")" unshare --uts sh -c '
    hostname "$1" || exit 1
    if [ -n "$2" ]; then mount --bind "$2" "$3" || exit 1; fi
    shift 3
    exec "$@"' sh "node$i" "$home" "$root_home" "$@")
}

# ---- faults -------------------------------------------------------------------

fault_one() {   # node index, WHAT, args...
  local i=$1 what=$2 ns d k
  shift 2
  ns=$(ns_of "$i") d=$DIR/node$i
  case $what in
    sshd-stop) stop_sshd "$i" ;;
    sshd-start)
      if [ -z "$(sshd_pid "$i")" ]; then
        start_sshd "$i"
        wait_sshd "$i" || die "node$i: sshd did not start"
      fi
      ;;
    revoke-key) : >"$d/authorized_keys" ;;
    restore-key) cp "$DIR/id_ed25519.pub" "$d/authorized_keys" ;;
    new-hostkey)
      rm -f "$d/ssh_host_ed25519_key" "$d/ssh_host_ed25519_key.pub"
      ssh-keygen -q -t ed25519 -N '' -C "node$i-new" -f "$d/ssh_host_ed25519_key"
      restart_sshd "$i"
      ;;
    link-down|link-up)
      k=$(nic_index "${1:-0}")
      ip -n "$ns" link set "eth$k" "${what#link-}"
      if [ "$what" = link-up ]; then   # return once the carrier is there
        for _ in $(seq 40); do
          ip -n "$ns" link show "eth$k" | grep LOWER_UP >/dev/null && break
          sleep 0.05
        done
      fi
      ;;
    mtu)
      [ $# -eq 2 ] || die "usage: fault NODE mtu NIC VALUE"
      k=$(nic_index "$1")
      is_uint "$2" || die "bad MTU: $2"
      ip -n "$ns" link set "eth$k" mtu "$2"
      ;;
    iptables)
      command -v iptables >/dev/null ||
        die "iptables is not installed (apt-get install iptables; scripts/install-deps.sh lists it)"
      ip netns exec "$ns" iptables "$@"
      ;;
    decoy-bridge)
      if ! ip -n "$ns" link show docker0 >/dev/null 2>&1; then
        ip -n "$ns" link add docker0 type bridge
        ip -n "$ns" addr add 172.17.0.1/16 dev docker0
        ip -n "$ns" link set docker0 up
      fi
      ;;
    hang-agent) write_sshd_config "$i" hang; restart_sshd "$i" ;;
    unhang-agent) write_sshd_config "$i"; restart_sshd "$i" ;;
    talking-shell)   # a ~/.bashrc that prints even for non-interactive shells
      printf 'echo %q\n' "${1:-Welcome to node$i. You have mail.}" >"$d/home/.bashrc"
      write_sshd_config "$i" talk; restart_sshd "$i"
      ;;
    quiet-shell) rm -f "$d/home/.bashrc"; write_sshd_config "$i"; restart_sshd "$i" ;;
    *) die "unknown fault '$what' (see simcluster.sh --help)" ;;
  esac
}

cmd_fault() {
  require_cluster
  [ "${#args[@]}" -ge 3 ] || die "usage: simcluster.sh fault NODE|all WHAT [ARGS...]"
  local node=${args[1]} i
  if [ "$node" = all ]; then
    for ((i = 1; i <= N; i++)); do fault_one "$i" "${args[@]:2}"; done
  else
    fault_one "$(node_index "$node")" "${args[@]:2}"
  fi
}

main() {
  parse_args "$@"
  [ "${#args[@]}" -ge 1 ] || { usage >&2; exit 2; }
  load_config
  case ${args[0]} in
    up) require_root; cmd_up ;;
    down) require_root; cmd_down ;;
    status) cmd_status ;;
    addr) cmd_addr ;;
    exec) require_root; cmd_exec ;;
    fault) require_root; cmd_fault ;;
    help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
