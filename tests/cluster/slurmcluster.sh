#!/usr/bin/env bash
# shellcheck disable=SC2015,SC2016  # a && b || die is intended; sh -c scripts take $1
# slurmcluster.sh: a real Slurm on top of the simulated cluster of
# simcluster.sh, for clustercheck's integration tests. One slurmctld in the
# root namespace (on the bridge address .254 of the ssh network), one slurmd
# per node inside the node's network namespace, with the node's hostname (a
# UTS namespace) and its own mount namespace, where DIR/nodeI/local is
# bind-mounted on a fixed node-local path (/var/tmp/clustercheck-local), so
# that `sbcast` to that path writes one file per node, as onto the local
# disks of a real cluster. munged is our own (own key, own socket). Slurm
# node names are the simcluster's (node1..nodeN, as in DIR/inventory.toml).
#
#   slurmcluster.sh up N [simcluster options]   (e.g. --base auto --nics 2)
#   slurmcluster.sh down | status | env
#   slurmcluster.sh fault NODE slurmd-stop|slurmd-start|drain REASON|resume
#
# Needs root, the Debian packages slurmctld slurmd slurm-client munge and
# what simcluster.sh needs. The state lives in DIR/slurm/ (DIR as for
# simcluster.sh: SIMCLUSTER_DIR, or /tmp/simcluster-PREFIX).
set -euo pipefail

# The node-local path of every node (a bind mount of DIR/nodeI/local inside
# the node's slurmd mount namespace). On the host it is an empty directory.
readonly kLocal=${SLURMCLUSTER_LOCAL:-/var/tmp/clustercheck-local}
readonly kPartition=sim
readonly kSlurmdTimeoutS=10   # a stopped slurmd is DOWN after about this long
readonly kMungeWaitS=10
readonly kCtldWaitS=30
readonly kStopWaitS=10
kHere=${BASH_SOURCE[0]}
[[ $kHere == /* ]] || kHere=$PWD/$kHere
kHere=${kHere%/*}
readonly kHere
readonly kSc=$kHere/simcluster.sh

usage() {
  cat <<'EOF'
usage: slurmcluster.sh COMMAND ...
commands:
  up N [simcluster options]  simcluster.sh up N (kept when it is already up with
                          the same options), then munged, slurmctld and one
                          slurmd per node; waits until sinfo shows N idle
                          nodes; prints the env (also in DIR/slurm/env).
                          Keeps a Slurm that is already up and healthy.
  down                    stops our slurmd's (and their jobs), slurmctld and
                          munged, removes DIR/slurm and DIR/node*/local; the
                          simulated cluster stays: simcluster.sh down removes it
  status                  the env and `sinfo -N` (exit 1 when slurmctld is down)
  env                     print the env a caller needs (SLURM_CONF=...)
  fault NODE WHAT         WHAT is one of:
      slurmd-stop         kill the node's slurmd (its jobs live on); Slurm marks
                          the node not responding (idle*) after ~15 s, then
                          DOWN after ~30 s
      slurmd-start        start it again; waits until the node responds
      drain REASON        scontrol update State=DRAIN Reason=REASON
      resume              scontrol update State=RESUME; waits until not drained
                          (and, when its slurmd runs, until it responds)
DIR and PREFIX: --dir/--prefix among the simcluster options of up, or env
SIMCLUSTER_DIR/SIMCLUSTER_PREFIX (as simcluster.sh). Node-local path:
$SLURMCLUSTER_LOCAL (default /var/tmp/clustercheck-local).
EOF
}

die() { echo "slurmcluster: $*" >&2; exit 1; }
log() { echo "slurmcluster: $*" >&2; }
is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }

# ---- options and state ---------------------------------------------------

opt_dir=${SIMCLUSTER_DIR:-}
opt_prefix=${SIMCLUSTER_PREFIX:-}
args=() sc_opts=()

parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --dir) opt_dir=${2:?--dir needs a value}; shift 2 ;;
      --prefix) opt_prefix=${2:?--prefix needs a value}; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      --docker0) sc_opts+=("$1"); shift ;;
      --*) sc_opts+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
      *)
        args+=("$1"); shift
        # "fault NODE drain REASON...": the rest is the reason, as it is.
        if [ "${#args[@]}" -ge 3 ] && [ "${args[0]}" = fault ]; then
          args+=("$@"); break
        fi
        ;;
    esac
  done
}

# P, DIR, S (DIR/slurm), N (0 without a simulated cluster), as simcluster.sh.
load_config() {
  P=${opt_prefix:-cc}
  DIR=${opt_dir:-/tmp/simcluster-$P}
  [[ $DIR == /* ]] || DIR=$PWD/$DIR
  DIR=${DIR%/}
  S=$DIR/slurm
  N=0
  if [ -f "$DIR/state" ]; then
    local key val
    while IFS='=' read -r key val; do
      [[ $val =~ ^[a-z0-9]+$ ]] || continue
      case $key in
        SC_PREFIX) P=$val ;;
        SC_N) N=$val ;;
      esac
    done <"$DIR/state"
  fi
  [[ $P =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "bad prefix: $P"
}

# The simcluster's exported flags go to simcluster.sh as options, so that a
# prefix given to us by env reaches it too.
sc_run() { SIMCLUSTER_DIR=$DIR SIMCLUSTER_PREFIX=$P "$kSc" "$@"; }

ns_of() { echo "$P-node$1"; }

# addr[i] = node i's address in DIR/inventory.toml (its ssh NIC).
declare -a addr
load_addresses() {
  local name="" key val i
  [ -f "$DIR/inventory.toml" ] || die "no $DIR/inventory.toml (is the simulated cluster up?)"
  while IFS= read -r line; do
    [[ $line =~ ^([a-z]+)\ =\ \"([^\"]*)\"$ ]] || continue
    key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
    case $key in
      name) name=$val ;;
      address)
        i=${name#node}
        if [[ $name == node* ]] && is_uint "$i"; then addr[i]=$val; fi
        ;;
    esac
  done <"$DIR/inventory.toml"
  for ((i = 1; i <= N; i++)); do
    [ -n "${addr[i]:-}" ] || die "node$i has no address in $DIR/inventory.toml"
  done
  # The bridge (host) address of the ssh network: .254 of the nodes' /24.
  ctl_addr=${addr[1]%.*}.254
}

state_get() {   # key of S/state, or empty
  [ -f "$S/state" ] || return 0
  sed -n "s/^$1=\([a-z0-9/._-]*\)\$/\1/p" "$S/state" | head -n 1
}

require_root() {
  [ "$(id -u)" = 0 ] || die "must run as root (namespaces, mounts, daemons)"
}

require_slurm() {
  local p
  for p in slurmctld slurmd sinfo srun scontrol munged munge unmunge ss; do
    PATH=$PATH:/usr/sbin:/sbin command -v "$p" >/dev/null ||
      die "$p is missing (apt-get install slurmctld slurmd slurm-client munge iproute2; scripts/install-deps.sh)"
  done
}

# ---- processes ---------------------------------------------------------------

# Whether pid runs (a zombie does not). No forks: down checks many pids.
alive() {
  local line
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
  line=${line##*) }
  [ -n "$line" ] && [ "${line%% *}" != Z ]
}

# our_pid PIDFILE MARK: the pid in PIDFILE when it runs and its command line
# holds MARK (our conf or socket path; a stale pid may have been reused).
our_pid() {
  local pid="" args=()
  { read -r pid <"$1"; } 2>/dev/null || return 0
  is_uint "$pid" && alive "$pid" || return 0
  { mapfile -d '' args <"/proc/$pid/cmdline"; } 2>/dev/null || return 0
  case " ${args[*]-} " in *"$2"*) echo "$pid" ;; esac
}

# still_starting PIDFILE: the process we just started there has not exited.
# Its command line cannot tell yet: right after `&` the child may still be the
# forked shell that has not exec'd the daemon (seen on a loaded CI machine).
still_starting() {
  local pid=""
  { read -r pid <"$1"; } 2>/dev/null || return 1
  is_uint "$pid" && alive "$pid"
}

stop_pid() { stop_pids "$1"; }

stop_pids() {   # TERM, then KILL what still runs after kStopWaitS
  local pid t left=("$@")
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for ((t = 0; t < kStopWaitS * 10 + 20; t++)); do
    if [ "$t" = $((kStopWaitS * 10)) ]; then kill -KILL "${left[@]}" 2>/dev/null || true; fi
    local still=()
    for pid in "${left[@]}"; do alive "$pid" && still+=("$pid"); done
    [ "${#still[@]}" -gt 0 ] || return 0
    left=("${still[@]}")
    sleep 0.1
  done
}

munged_pid() { our_pid "$S/munge/munged.run.pid" "$S/munge/munge.socket"; }
ctld_pid() { our_pid "$S/ctld/slurmctld.run.pid" "$S/slurm.conf"; }
slurmd_pid() { our_pid "$S/node$1/slurmd.run.pid" "$S/slurm.conf"; }

tail_logs() {   # tail_logs [NODE_INDEX...]: slurmctld's log and these slurmd logs
  local i f
  for f in "$S/ctld/slurmctld.log" "$S/ctld/slurmctld.out"; do
    [ -s "$f" ] || continue
    log "--- tail of $f:"
    tail -n 15 "$f" >&2
  done
  for i in "$@"; do
    for f in "$S/node$i/slurmd.log" "$S/node$i/slurmd.out"; do
      [ -s "$f" ] || continue
      log "--- tail of $f:"
      tail -n 10 "$f" >&2
    done
  done
}

# Slurm's client commands against our cluster (our conf, bounded time).
sl() { SLURM_CONF=$S/slurm.conf timeout 30 "$@"; }

# node_states: "nodeI STATE" lines, STATE as sinfo's %T (idle, idle*, down*,
# drained, alloc...; * = not responding).
node_states() { sl sinfo -h -N -o '%N %T' 2>/dev/null | sort -u; }

# ---- munge -------------------------------------------------------------------

start_munged() {
  local m=$S/munge deadline
  mkdir -p "$m"
  chmod 0755 "$m"   # the socket's directory must be searchable by all
  if [ ! -s "$m/munge.key" ]; then
    (umask 077; head -c 1024 /dev/urandom >"$m/munge.key")
  fi
  chmod 0400 "$m/munge.key"
  setsid munged --foreground --force --socket="$m/munge.socket" \
    --key-file="$m/munge.key" --pid-file="$m/munged.pid" \
    --seed-file="$m/munged.seed" --log-file="$m/munged.log" \
    </dev/null >>"$m/munged.out" 2>&1 8>&- &
  echo $! >"$m/munged.run.pid"
  deadline=$((SECONDS + kMungeWaitS))
  until munge -S "$m/munge.socket" -n 2>/dev/null | unmunge -S "$m/munge.socket" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ] || ! still_starting "$m/munged.run.pid"; then
      tail -n 10 "$m/munged.out" >&2 2>/dev/null || true
      die "munged does not answer on $m/munge.socket within ${kMungeWaitS} s"
    fi
    sleep 0.1
  done
}

# ---- configuration -------------------------------------------------------------

port_used() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }

# SlurmctldPort (and SlurmdPort = +1, only used inside the namespaces): a
# function of the prefix in 20000..29999, below the ephemeral range, moved on
# past ports that something listens on.
choose_port() {
  local h p t
  h=$(printf '%s' "$P" | cksum | cut -d' ' -f1)
  p=$((20000 + (h % 5000) * 2))
  for ((t = 0; t < 5000; t++)); do
    if ! port_used "$p" && ! port_used $((p + 1)); then echo "$p"; return 0; fi
    p=$((p + 2))
    [ "$p" -lt 30000 ] || p=20000
  done
  die "no free pair of TCP ports in 20000..29999"
}

write_config() {
  local port=$1 i ctl_host
  ctl_host=$(hostname -s 2>/dev/null || hostname)
  ctl_host=${ctl_host:-localhost}
  mkdir -p "$S/ctld"
  for ((i = 1; i <= N; i++)); do mkdir -p "$S/node$i/spool"; done
  {
    echo "# Slurm for the simulated cluster '$P'; written by tests/cluster/slurmcluster.sh up."
    echo "ClusterName=$P"
    # slurmctld runs in the root namespace, so its host name is this
    # machine's; the nodes reach it on the ssh network's bridge address.
    echo "SlurmctldHost=$ctl_host($ctl_addr)"
    echo "SlurmctldPort=$port"
    echo "SlurmdPort=$((port + 1))"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$S/munge/munge.socket"
    echo "StateSaveLocation=$S/ctld"
    echo "SlurmctldPidFile=$S/ctld/slurmctld.pid"
    echo "SlurmctldLogFile=$S/ctld/slurmctld.log"
    echo "SlurmdSpoolDir=$S/%n/spool"
    echo "SlurmdPidFile=$S/%n/slurmd.pid"
    echo "SlurmdLogFile=$S/%n/slurmd.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SelectType=select/linear"
    echo "MpiDefault=none"
    echo "SwitchType=switch/none"
    # The nodes are namespaces on one machine: take what the config says.
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=$kSlurmdTimeoutS"
    echo "SlurmctldTimeout=30"
    echo "MessageTimeout=10"
    echo "InactiveLimit=0"
    echo "KillWait=5"
    echo "MinJobAge=60"
    echo "SchedulerParameters=sched_interval=5"
    for ((i = 1; i <= N; i++)); do
      echo "NodeName=node$i NodeHostname=node$i NodeAddr=${addr[i]} CPUs=1 State=UNKNOWN"
    done
    echo "PartitionName=$kPartition Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$S/slurm.conf"
  # slurmd needs it beside slurm.conf; `ip netns exec` mounts a fresh /sys,
  # so no cgroup file system exists inside the nodes: nothing to constrain.
  cat >"$S/cgroup.conf" <<'EOF'
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
CgroupAutomount=no
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainSwapSpace=no
ConstrainDevices=no
EOF
  # srun --mpi=pmix (the [slurm] steps launch of MPI programs): PMIx makes
  # each step's client directory under /tmp by default, and /tmp is one
  # directory for every simulated node, so the second node's step fails on
  # "File exists". The node-local path is each node's own, as /tmp is on a
  # real cluster.
  echo "PMIxCliTmpDirBase=$kLocal" >"$S/mpi.conf"
  # An empty plugstack.conf beside slurm.conf: not the host's /etc/slurm one.
  : >"$S/plugstack.conf"
  echo "PlugStackConfig=$S/plugstack.conf" >>"$S/slurm.conf"
  {
    echo "SLURM_CONF=$S/slurm.conf"
    echo "SLURMCLUSTER_LOCAL=$kLocal"
  } >"$S/env"
  printf 'SL_N=%s\nSL_PORT=%s\n' "$N" "$port" >"$S/state"
}

# ---- daemons ---------------------------------------------------------------------

start_ctld() {
  local deadline
  setsid slurmctld -D -i -f "$S/slurm.conf" </dev/null >>"$S/ctld/slurmctld.out" 2>&1 8>&- &
  echo $! >"$S/ctld/slurmctld.run.pid"
  deadline=$((SECONDS + kCtldWaitS))
  until sl scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ] || ! still_starting "$S/ctld/slurmctld.run.pid"; then
      tail_logs
      die "slurmctld does not answer on $ctl_addr:$(state_get SL_PORT) within ${kCtldWaitS} s"
    fi
    sleep 0.2
  done
}

# Node i's slurmd: in its network namespace, a UTS namespace with hostname
# nodeI and a mount namespace where DIR/nodeI/local covers kLocal. Its steps
# (slurmstepd and the tasks) inherit all three. The wrapper records the
# mount namespace, so that down finds the steps of a stopped slurmd too.
start_slurmd() {
  local i=$1 d=$S/node$1
  mkdir -p "$d/spool" "$DIR/node$i/local"
  rm -f "$d/slurmd.run.pid"
  setsid ip netns exec "$(ns_of "$i")" unshare --uts --mount --propagation slave sh -c '
    hostname "$1" || exit 1
    mount --bind "$2" "$3" || exit 1
    readlink /proc/self/ns/mnt >>"$4" || exit 1
    shift 4
    exec "$@"' sh "node$i" "$DIR/node$i/local" "$kLocal" "$d/mntns" \
    slurmd -D -f "$S/slurm.conf" -N "node$i" </dev/null >>"$d/slurmd.out" 2>&1 8>&- &
  echo $! >"$d/slurmd.run.pid"
}

stop_slurmd() {
  local pid
  pid=$(slurmd_pid "$1")
  [ -z "$pid" ] || stop_pid "$pid"
  rm -f "$S/node$1/slurmd.run.pid"
}

# wait_nodes SECONDS PRED NODE_INDEX...: until PRED STATE holds for each
# node's sinfo state; on timeout prints the states and log tails, returns 1.
wait_nodes() {
  local limit=$1 pred=$2 deadline states i st left
  shift 2
  deadline=$((SECONDS + limit))
  while :; do
    states=$(node_states) || states=""
    left=()
    for i in "$@"; do
      st=$(awk -v n="node$i" '$1 == n {print $2}' <<<"$states")
      "$pred" "$st" || left+=("$i")
    done
    [ "${#left[@]}" -eq 0 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "after ${limit} s, not $pred: $(for i in "${left[@]}"; do printf 'node%s(%s) ' "$i" "$(awk -v n="node$i" '$1 == n {print $2}' <<<"$states")"; done)"
      tail_logs "${left[@]}"
      return 1
    fi
    sleep 0.5
  done
}
is_idle() { [ "$1" = idle ]; }
is_responding() { [ -n "$1" ] && [[ $1 != *'*' ]] && [[ $1 != down* ]]; }
is_not_drained() { [ -n "$1" ] && [[ $1 != drain* ]]; }

# Whether everything we started runs and every node responds.
slurm_healthy() {
  local i states
  [ "$(state_get SL_N)" = "$N" ] && [ -n "$(munged_pid)" ] && [ -n "$(ctld_pid)" ] || return 1
  for ((i = 1; i <= N; i++)); do [ -n "$(slurmd_pid "$i")" ] || return 1; done
  states=$(node_states) || return 1
  [ "$(awk '$2 !~ /\*$/ && $2 !~ /^down/' <<<"$states" | wc -l)" = "$N" ]
}

# One lock for every Slurm of ours on this machine: port choice and start.
# The daemons are started with fd 8 closed, or they would hold it forever.
take_lock() {
  local lockdir=/run/lock
  [ -d "$lockdir" ] || lockdir=/tmp
  exec 8>"$lockdir/slurmcluster.lock"
  flock -w 120 8 || die "could not take $lockdir/slurmcluster.lock within 120 s"
}

cmd_up() {
  [ "${#args[@]}" -eq 2 ] || die "usage: slurmcluster.sh up N [simcluster options]"
  local want=${args[1]} i port
  is_uint "$want" && [ "$want" -ge 1 ] && [ "$want" -le 500 ] || die "N must be 1..500 (simcluster.sh's most): $want"
  require_slurm
  sc_run up "$want" "${sc_opts[@]+"${sc_opts[@]}"}" || die "simcluster.sh up $want failed"
  load_config
  [ "$N" = "$want" ] || die "simcluster.sh up $want left $N nodes"
  load_addresses
  take_lock
  if slurm_healthy; then
    log "Slurm of cluster '$P' with $N nodes is already up; kept as it is"
    cmd_env
    return 0
  fi
  [ -d "$S" ] && log "Slurm at $S is not (all) up; restarting it"
  slurm_down quiet
  mkdir -p "$S" "$kLocal"
  port=$(choose_port)
  write_config "$port"
  start_munged
  start_ctld
  for ((i = 1; i <= N; i++)); do start_slurmd "$i"; done
  if ! wait_nodes $((30 + N)) is_idle $(seq 1 "$N"); then
    die "up failed: not every node is idle; run: slurmcluster.sh down (then simcluster.sh down)"
  fi
  log "Slurm of cluster '$P' up: $N nodes, slurmctld on $ctl_addr:$port, slurmd port $((port + 1)), node-local $kLocal"
  cmd_env
}

# Kills every process in the mount namespaces our slurmds were started in
# (slurmd, slurmstepd, tasks); one pass over /proc.
kill_node_namespaces() {
  local f ids=() pids
  for f in "$S"/node*/mntns; do
    [ -f "$f" ] || continue
    mapfile -t -O "${#ids[@]}" ids <"$f"
  done
  [ "${#ids[@]}" -gt 0 ] || return 0
  local mine want
  # Never our own mount namespace (or init's), whatever the files say.
  mine=$(readlink /proc/self/ns/mnt /proc/1/ns/mnt 2>/dev/null || true)
  want=$(printf '%s\n' "${ids[@]}" | { grep -vxF -- "$mine" || true; } | sort -u | paste -sd' ')
  [ -n "$want" ] || return 0
  for _ in 1 2 3; do
    # find fails on processes that vanish meanwhile (or that it may not read).
    pids=$({ find /proc/[0-9]*/ns/mnt -maxdepth 0 -printf '%h %l\n' 2>/dev/null || true; } |
      awk -v want="$want" 'BEGIN {n = split(want, w, " "); for (j = 1; j <= n; j++) ok[w[j]] = 1}
        $2 in ok {split($1, a, "/"); print a[3]}')
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    sleep 0.5
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

slurm_down() {
  local quiet=${1:-} f pid
  [ -d "$S" ] || { [ -n "$quiet" ] || log "no Slurm at $S"; return 0; }
  # slurmctld first: stopping after its slurmds it takes ~10 s (32 nodes).
  pid=$(ctld_pid)
  [ -z "$pid" ] || stop_pid "$pid"
  local pids=()
  for f in "$S"/node*; do
    [ -d "$f" ] || continue
    pid=$(our_pid "$f/slurmd.run.pid" "$S/slurm.conf")
    [ -z "$pid" ] || pids+=("$pid")
  done
  stop_pids "${pids[@]+"${pids[@]}"}"
  kill_node_namespaces
  pid=$(munged_pid)
  [ -z "$pid" ] || stop_pid "$pid"
  local dirs=("$S")
  for f in "$DIR"/node[0-9]*/local; do [ -d "$f" ] && dirs+=("$f"); done
  rm -rf -- "${dirs[@]}"
  # kLocal stays: other clusters' slurmds may have it as a mount point.
  [ -n "$quiet" ] || log "Slurm of cluster '$P' is down (the simulated cluster stays; simcluster.sh down removes it)"
  return 0
}

cmd_down() { take_lock; slurm_down; }

cmd_env() {
  [ -f "$S/env" ] || die "no Slurm at $S (run: slurmcluster.sh up N)"
  cat "$S/env"
}

cmd_status() {
  cmd_env
  [ -n "$(ctld_pid)" ] || { echo "slurmctld is not running"; return 1; }
  echo "slurmctld: $ctl_addr:$(state_get SL_PORT) (pid $(ctld_pid)); munged pid $(munged_pid)"
  sl sinfo -N -o '%N %T %E' || return 1
}

cmd_fault() {
  [ "${#args[@]}" -ge 3 ] || die "usage: slurmcluster.sh fault NODE WHAT [ARGS...]"
  [ -f "$S/state" ] || die "no Slurm at $S (run: slurmcluster.sh up N)"
  local node=${args[1]} what=${args[2]} i
  i=${node#node}
  is_uint "$i" && [ "$i" -ge 1 ] && [ "$i" -le "$N" ] || die "no node '$node' (nodes: node1..node$N)"
  i=$((10#$i))
  case $what in
    slurmd-stop) stop_slurmd "$i" ;;
    slurmd-start)
      if [ -z "$(slurmd_pid "$i")" ]; then start_slurmd "$i"; fi
      wait_nodes $((20 + kSlurmdTimeoutS)) is_responding "$i" || die "node$i does not respond after slurmd-start"
      ;;
    drain)
      [ "${#args[@]}" -ge 4 ] || die "usage: fault NODE drain REASON"
      sl scontrol update NodeName="node$i" State=DRAIN Reason="${args[*]:3}" || die "scontrol update (drain) failed"
      ;;
    resume)
      sl scontrol update NodeName="node$i" State=RESUME || die "scontrol update (resume) failed"
      wait_nodes 20 is_not_drained "$i" || die "node$i is still drained"
      # The controller pings a resumed node before it counts as responding.
      if [ -n "$(slurmd_pid "$i")" ]; then
        wait_nodes 20 is_responding "$i" || die "node$i does not respond after resume"
      fi
      ;;
    *) die "unknown fault '$what' (see slurmcluster.sh --help)" ;;
  esac
}

main() {
  parse_args "$@"
  [ "${#args[@]}" -ge 1 ] || { usage >&2; exit 2; }
  load_config
  case ${args[0]} in
    up) require_root; cmd_up ;;
    down) require_root; cmd_down ;;
    env) cmd_env ;;
    status) load_addresses; cmd_status ;;
    fault) require_root; load_addresses; cmd_fault ;;
    help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
