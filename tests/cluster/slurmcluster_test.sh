#!/usr/bin/env bash
# A real Slurm on the simulated cluster (slurmcluster.sh): 4 nodes come up
# idle; steps run inside their node's namespaces (hostname, address, netns);
# sbcast to the node-local path writes one copy per node; drain, a stopped
# slurmd, scancel and resume do what they do on a real cluster; down leaves
# no daemon of ours. ctest label "cluster"; $1 is the build dir (unused).
# Exit 77 = skip (not root, no ip netns, Slurm or munge not installed).
set -u

here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
slc=$here/slurmcluster.sh
# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"

for p in slurmctld slurmd srun sbcast munged; do
  if ! PATH=$PATH:/usr/sbin command -v "$p" >/dev/null; then
    echo "skip: $p is not installed (scripts/install-deps.sh)"; exit 77
  fi
done
cluster_test_start su slurmcluster
cluster_test_cleanup() { "$slc" down >/dev/null 2>&1; }

indent() { sed 's/^/  | /'; }
# check "description" WANT GOT
check_eq() {
  if [ "$3" = "$2" ]; then ok "$1"; else not_ok "$1"; echo "  | expected:"; indent <<<"$2"; echo "  | got:"; indent <<<"$3"; fi
}
node_state() { timeout 20 sinfo -h -n "$1" -o '%T'; }
state_is() { [ "$(node_state "$1")" = "$2" ]; }
not_responding() { case $(node_state "$1") in *'*') return 0 ;; *) return 1 ;; esac; }
is_down() { case $(node_state "$1") in down*) return 0 ;; *) return 1 ;; esac; }
job_running() { [ "$(timeout 20 squeue -h -j "$1" -o '%T')" = RUNNING ]; }
queue_empty() { [ -z "$(timeout 20 squeue -h)" ]; }

start=$SECONDS
if ! "$slc" up 4 --base auto >"$dir/up.out" 2>&1; then
  echo "not ok - slurmcluster.sh up 4 failed"; indent <"$dir/up.out"; exit 1
fi
ok "up 4 ($((SECONDS - start)) s)"
if grep -qx "SLURM_CONF=$dir/slurm/slurm.conf" "$dir/up.out" "$dir/slurm/env"; then
  ok "up prints the env and writes it to DIR/slurm/env"
else
  not_ok "env"; indent <"$dir/up.out"
fi
set -a
# shellcheck disable=SC1091
. "$dir/slurm/env"
set +a
L=$SLURMCLUSTER_LOCAL
cd "$dir" || exit 1

check_eq "sinfo: 4 idle nodes named as in the inventory" "$(printf 'node%s idle\n' 1 2 3 4)" \
  "$(timeout 20 sinfo -h -N -o '%N %T' | sort)"
check_eq "inventory names the same nodes" "$(printf 'node%s\n' 1 2 3 4)" \
  "$(sed -n 's/^name = "\(node[0-9]*\)"$/\1/p' "$dir/inventory.toml")"

check_eq "srun -N4 hostname: each node's name" "$(printf 'node%s\n' 1 2 3 4)" \
  "$(timeout 60 srun -N4 --ntasks-per-node=1 hostname 2>&1 | sort)"

# Each step runs in its node's network namespace: its address, its netns.
want=""
for i in 1 2 3 4; do
  want+="node$i $("$sc" addr "node$i") $(ip netns exec "$prefix-node$i" readlink /proc/self/ns/net)"$'\n'
done
# shellcheck disable=SC2016  # expanded by the step's shell
got=$(timeout 60 srun -N4 --ntasks-per-node=1 sh -c \
  'echo "$(hostname) $(ip -4 -o addr show eth0 | awk "{print \$4}" | cut -d/ -f1) $(readlink /proc/self/ns/net)"' 2>&1 | sort)
check_eq "srun -N4: each step in its node's netns, with its address" "${want%$'\n'}" "$got"
check_eq "srun -w node3 -N1: node3's address" "$("$sc" addr node3)" \
  "$(timeout 60 srun -w node3 -N1 ip -4 -o addr show eth0 2>&1 | awk '{print $4}' | cut -d/ -f1)"

# Node-local disks: a marker per node first, then sbcast.
timeout 60 srun -N4 --ntasks-per-node=1 sh -c "hostname >$L/marker" >/dev/null 2>&1
got="" want=""
for i in 1 2 3 4; do
  want+="node$i"$'\n'
  got+="$(cat "$dir/node$i/local/marker" 2>&1)"$'\n'
done
check_eq "each node wrote its marker into its own DIR/nodeI/local" "$want" "$got"
if [ ! -e "$L/marker" ]; then ok "the host's $L has no marker"; else not_ok "the host's $L/marker exists"; fi

head -c 4096 /dev/urandom >"$dir/payload"
sum=$(md5sum <"$dir/payload" | cut -d' ' -f1)
got=$(timeout 60 salloc -N4 sh -c "sbcast -f $dir/payload $L/payload && srun --ntasks-per-node=1 sh -c 'echo \$(hostname) \$(cat $L/marker) \$(md5sum <$L/payload | cut -d\" \" -f1)'" 2>/dev/null | sort)
check_eq "salloc + sbcast + srun: every node reads its own copy" \
  "$(for i in 1 2 3 4; do echo "node$i node$i $sum"; done)" "$got"
got=""
for i in 1 2 3 4; do got+="$(md5sum <"$dir/node$i/local/payload" 2>&1 | cut -d' ' -f1) "; done
check_eq "sbcast wrote one file per node (DIR/nodeI/local/payload)" "$sum $sum $sum $sum " "$got"
if [ ! -e "$L/payload" ]; then ok "sbcast wrote nothing to the host's $L"; else not_ok "the host's $L/payload exists"; fi

# Faults.
"$slc" fault node2 drain "bad cable" || not_ok "fault node2 drain failed"
check_eq "sinfo: node2 drained, reason 'bad cable'" "drained bad cable" "$(timeout 20 sinfo -h -n node2 -o '%T %E')"
if timeout 20 scontrol show node node2 | grep -q 'State=IDLE+DRAIN ' &&
  timeout 20 scontrol show node node2 | grep -q 'Reason=bad cable \['; then
  ok "scontrol show node: IDLE+DRAIN, Reason=bad cable"
else
  not_ok "scontrol show node node2"; timeout 20 scontrol show node node2 | indent
fi

stop_at=$SECONDS
"$slc" fault node3 slurmd-stop || not_ok "fault node3 slurmd-stop failed"

# While node3 times out: scancel of a running job on node1.
tag=$((RANDOM + 400000))
job=$(timeout 20 sbatch --parsable -N1 -w node1 -o /dev/null --wrap "exec sleep $tag" 2>&1)
if t=$(wait_for 30 job_running "$job"); then ok "sbatch job $job runs on node1 (${t} s)"; else
  not_ok "sbatch job '$job' does not run"; timeout 20 squeue | indent
fi
sleep 1   # the batch script's exec
if pgrep -fx "sleep $tag" >/dev/null; then ok "its task runs"; else not_ok "no 'sleep $tag' process"; fi
timeout 20 scancel "$job" || not_ok "scancel $job failed"
if t=$(wait_for 30 queue_empty); then ok "scancel: squeue empty after ${t} s"; else
  not_ok "squeue not empty 30 s after scancel"; timeout 20 squeue | indent
fi
task_gone() { ! pgrep -fx "sleep $tag"; }
if wait_for 10 task_gone >/dev/null; then ok "scancel killed the task"; else not_ok "'sleep $tag' still runs"; fi

if wait_for 60 not_responding node3 >/dev/null; then
  ok "slurmd-stop: node3 not responding ($(node_state node3)) after $((SECONDS - stop_at)) s"
else
  not_ok "node3 still '$(node_state node3)' 60 s after slurmd-stop"
fi
if wait_for 60 is_down node3 >/dev/null; then
  ok "slurmd-stop: node3 DOWN after $((SECONDS - stop_at)) s"
else
  not_ok "node3 is '$(node_state node3)', not down, $((SECONDS - stop_at)) s after slurmd-stop"
fi
check_eq "the other nodes' states" "node1 idle
node2 drained
node4 idle" "$(timeout 20 sinfo -h -N -n node1,node2,node4 -o '%N %T' | sort)"

"$slc" fault node3 slurmd-start || not_ok "fault node3 slurmd-start failed"
"$slc" fault node2 resume || not_ok "fault node2 resume failed"
if wait_for 30 state_is node3 idle >/dev/null && wait_for 30 state_is node2 idle >/dev/null; then
  ok "slurmd-start node3 and resume node2: both idle"
else
  not_ok "after slurmd-start/resume: $(timeout 20 sinfo -h -N -o '%N %T' | tr '\n' ' ')"
fi
check_eq "srun -N4 hostname works again" "$(printf 'node%s\n' 1 2 3 4)" \
  "$(timeout 60 srun -N4 --ntasks-per-node=1 hostname 2>&1 | sort)"

pid_before=$(cat "$dir/slurm/ctld/slurmctld.run.pid" 2>/dev/null)
if "$slc" up 4 --base auto >"$dir/up2.out" 2>&1 && grep -q 'already up; kept' "$dir/up2.out" &&
  [ "$(cat "$dir/slurm/ctld/slurmctld.run.pid" 2>/dev/null)" = "$pid_before" ]; then
  ok "a second up keeps the running Slurm"
else
  not_ok "second up"; indent <"$dir/up2.out"
fi

# A running step when down comes: down kills it with the rest.
timeout 20 sbatch -N1 -w node4 -o /dev/null --wrap "exec sleep $tag" >/dev/null 2>&1
wait_for 30 pgrep -fx "sleep $tag" >/dev/null
"$slc" down >"$dir/down.out" 2>&1 || { not_ok "down failed ($?)"; indent <"$dir/down.out"; }
left=$(pgrep -af -- "$dir/slurm|sleep $tag" || true)
if [ -z "$left" ]; then ok "down: no slurmd, slurmctld, munged or job of ours left"; else
  not_ok "down left processes"; indent <<<"$left"
fi
if [ ! -e "$dir/slurm" ] && ! ls -d "$dir"/node*/local >/dev/null 2>&1; then
  ok "down removed DIR/slurm and DIR/nodeI/local"
else
  not_ok "down left files: $(find "$dir/slurm" "$dir"/node*/local -maxdepth 0 2>/dev/null | tr '\n' ' ')"
fi
echo "# $((SECONDS - start)) s"
cluster_test_finish
