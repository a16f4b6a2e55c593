# shellcheck shell=bash disable=SC2034  # FL_* are the caller's
# The six single faults of tests/cluster/faults_test.sh and bench/faulty.sh,
# shared by both: the cluster they run on, how each fault is made and
# undone, and one timed run. Source it after setting `sc` (simcluster.sh)
# and `CC` (the clustercheck binary); SIMCLUSTER_DIR/_PREFIX name the
# cluster as for simcluster.sh itself.
#
# The cluster is the healthy one of tests/cluster/healthy_test.sh: 8 nodes,
# data (eth0, MTU 9000) and mgmt (eth1, MTU 1500, ssh and so the
# inventory's addresses), docker0 on every node, strict host keys with a
# known_hosts of the inventory's addresses only, [defaults] gpus = 0, all
# stages, [stages.mpi] iters = 5 and message_size = "64K".
#
#   fl_up OUTDIR              simcluster up; writes OUTDIR/faults.toml
#   fl_cases                  the fault names, in the order they are run
#   fl_describe CASE          one line: what the fault is
#   fl_cause CASE             the nodes of its cause, space-separated
#   fl_inject CASE / fl_undo CASE   make it / take it back (explicitly)
#   fl_healed                 0 when every node looks as `up` made it
#                             (FL_UNHEALED says what differs)
#   fl_heal CASE OUTDIR       fl_undo, then fl_healed; when something is
#                             left, down + up (the addresses may change:
#                             faults.toml is written again)
#   fl_run NAME TOML DB OUTDIR    `timeout 900 clustercheck run TOML --db DB`;
#                             sets FL_RC, FL_WALL (s, 0.1), FL_RUN (its run
#                             id, "" when none was stored); OUTDIR/NAME.out,
#                             .err, and .json (`report RUN --json`, whose
#                             exit status is FL_REPORT_RC)
#   fl_bad_verdicts JSON      jq filter output: the verdicts whose severity
#                             is not pass or skip, one compact JSON a line
#   fl_expand_nodes           stdin: text; stdout: every node name it holds
#                             (node4, node[5-6], node[2,5]), one a line, sorted
#   fl_stage_seconds ERRFILE  "stage=seconds ..." from the run's progress lines

: "${sc:?set sc (simcluster.sh) before sourcing faultlib.sh}"
: "${CC:?set CC (clustercheck) before sourcing faultlib.sh}"

FL_NODES=8
FL_SIM_OPTS=(--nics 2 --mtu-data 9000 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 --base auto)
FL_TIMEOUT_S=${FL_TIMEOUT_S:-900}
FL_MTU=9000

fl_cases() { echo link-down prefix-30 dup-addr ephemeral-drop one-way mtu-1500; }

fl_describe() {
  case $1 in
    link-down) echo "node4: ip link set eth0 down (its data link)" ;;
    prefix-30) echo "node4: its data address with /30 instead of /24" ;;
    dup-addr) echo "node6: node5's data address instead of its own" ;;
    ephemeral-drop) echo "node4: iptables -A INPUT -p tcp --dport <ephemeral range> -j DROP" ;;
    one-way) echo "node5: iptables -A INPUT -s <node2 data> -p tcp --syn -j DROP (node2->node5 fails, node5->node2 works)" ;;
    mtu-1500) echo "node4: eth0 MTU 1500 on the MTU $FL_MTU data network" ;;
    *) echo "unknown fault $1" >&2; return 2 ;;
  esac
}

fl_cause() {
  case $1 in
    link-down | prefix-30 | ephemeral-drop | mtu-1500) echo node4 ;;
    dup-addr) echo node5 node6 ;;
    one-way) echo node2 node5 ;;
    *) return 2 ;;
  esac
}

fl_addr() { "$sc" addr "$1" data; }
fl_on() { "$sc" exec "$@"; }

fl_up() {
  local out=$1
  "$sc" up "$FL_NODES" "${FL_SIM_OPTS[@]}" >"$out/up.log" 2>&1 || { cat "$out/up.log" >&2; return 1; }
  cp "${SIMCLUSTER_DIR:?}/inventory.toml" "$out/faults.toml"
  cat >>"$out/faults.toml" <<'TOML'

[stages.mpi]
iters = 5
message_size = "64K"
TOML
}

# The ephemeral range of node4's namespace, as "LO:HI".
fl_ephemeral_range() {
  fl_on node4 cat /proc/sys/net/ipv4/ip_local_port_range | awk '{ print $1 ":" $2 }'
}

fl_inject() {
  local d4 d5 d6 d2
  case $1 in
    link-down) "$sc" fault node4 link-down eth0 ;;
    prefix-30)
      d4=$(fl_addr node4)
      fl_on node4 ip addr del "$d4/24" dev eth0 && fl_on node4 ip addr add "$d4/30" dev eth0 ;;
    dup-addr)
      d5=$(fl_addr node5) d6=$(fl_addr node6)
      fl_on node6 ip addr del "$d6/24" dev eth0 && fl_on node6 ip addr add "$d5/24" dev eth0 ;;
    ephemeral-drop)
      "$sc" fault node4 iptables -A INPUT -p tcp --dport "$(fl_ephemeral_range)" -j DROP ;;
    one-way)
      d2=$(fl_addr node2)
      "$sc" fault node5 iptables -A INPUT -s "$d2" -p tcp --syn -j DROP ;;
    mtu-1500) "$sc" fault node4 mtu eth0 1500 ;;
    *) return 2 ;;
  esac
}

fl_undo() {
  local d4 d5 d6 d2
  case $1 in
    link-down) "$sc" fault node4 link-up eth0 ;;
    prefix-30)
      d4=$(fl_addr node4)
      fl_on node4 ip addr del "$d4/30" dev eth0 && fl_on node4 ip addr add "$d4/24" dev eth0 ;;
    dup-addr)
      d5=$(fl_addr node5) d6=$(fl_addr node6)
      fl_on node6 ip addr del "$d5/24" dev eth0 && fl_on node6 ip addr add "$d6/24" dev eth0 ;;
    ephemeral-drop)
      "$sc" fault node4 iptables -D INPUT -p tcp --dport "$(fl_ephemeral_range)" -j DROP ;;
    one-way)
      d2=$(fl_addr node2)
      "$sc" fault node5 iptables -D INPUT -s "$d2" -p tcp --syn -j DROP ;;
    mtu-1500) "$sc" fault node4 mtu eth0 "$FL_MTU" ;;
    *) return 2 ;;
  esac
}

# Every node: eth0 up with carrier and MTU 9000, its own data address as
# /24 and nothing else on eth0, an empty INPUT chain. Then every node's
# neighbour cache is flushed (a duplicate address leaves other nodes'
# ARP entries pointing at the wrong MAC).
fl_healed() {
  local i want got
  FL_UNHEALED=
  for ((i = 1; i <= FL_NODES; i++)); do
    want="UP $FL_MTU $(fl_addr "node$i")/24 -P INPUT ACCEPT"
    # shellcheck disable=SC2016  # the node's sh expands them
    got=$(fl_on "node$i" sh -c '
      l=$(ip -o link show eth0)
      case $l in *LOWER_UP*) s=UP ;; *) s=DOWN ;; esac
      m=$(echo "$l" | sed -n "s/.* mtu \([0-9]*\).*/\1/p")
      a=$(ip -4 -o addr show dev eth0 | awk "{ print \$4 }" | tr "\n" " ")
      r=$(iptables -S INPUT | tr "\n" " ")
      ip neigh flush all >/dev/null 2>&1
      echo "$s $m ${a% } ${r% }"' 2>&1)
    [ "$got" = "$want" ] || FL_UNHEALED="$FL_UNHEALED node$i: '$got' (want '$want');"
  done
  [ -z "$FL_UNHEALED" ]
}

fl_heal() {
  local case=$1 out=$2
  fl_undo "$case" >>"$out/heal.log" 2>&1
  fl_healed && return 0
  echo "faultlib: undoing $case left:$FL_UNHEALED; down + up" >&2
  "$sc" down >>"$out/heal.log" 2>&1
  fl_up "$out" && fl_healed
}

fl_run() {
  local name=$1 toml=$2 db=$3 out=$4 before t0 t1
  before=$(sqlite3 "$db" "select max(id) from runs" 2>/dev/null)
  t0=$EPOCHREALTIME
  timeout -k 30 "$FL_TIMEOUT_S" "$CC" run "$toml" --db "$db" >"$out/$name.out" 2>"$out/$name.err"
  FL_RC=$?
  t1=$EPOCHREALTIME
  FL_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  FL_RUN=$(sqlite3 "$db" "select max(id) from runs" 2>/dev/null)
  [ "$FL_RUN" != "$before" ] || FL_RUN=
  FL_REPORT_RC=
  : >"$out/$name.json"
  if [ -n "$FL_RUN" ]; then
    "$CC" report "$FL_RUN" --db "$db" --json >"$out/$name.json" 2>"$out/$name.report.err"
    FL_REPORT_RC=$?
  fi
}

fl_bad_verdicts() {
  jq -c '.verdicts[]? | select(.severity != "pass" and .severity != "skip")' "$1" 2>/dev/null
}

fl_expand_nodes() {
  grep -oE 'node(\[[0-9,-]+\]|[0-9]+)' | while read -r tok; do
    case $tok in
      *\[*)
        local inner=${tok#node[} part
        inner=${inner%]}
        for part in ${inner//,/ }; do
          if [[ $part == *-* ]]; then seq -f 'node%g' "${part%-*}" "${part#*-}"; else echo "node$part"; fi
        done ;;
      *) echo "$tok" ;;
    esac
  done | sort -u
}

fl_stage_seconds() {
  awk '$NF ~ /^[0-9.]+s$/ && $1 ~ /^(connect|facts|parity|health|nics|ports|mpi|nccl)$/ {
         v[$1] = $NF; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
       END { for (i = 1; i <= n; i++) { s = v[order[i]]; sub(/s$/, "", s); printf "%s%s=%s", (i > 1 ? " " : ""), order[i], s }; print "" }' "$1"
}
