#!/usr/bin/env bash
# The health stage on a 6-node simulated cluster (real SSH), every node's
# GPUs the fake NVML of tests/fakes and its /sys and kernel log a copy of
# tests/fixtures/sysroot-gpu-node (the node's `root`) (issue 15, "Tests"):
#   node1  Xid 79 in its kernel log (GPU fallen off the bus): reboot
#   node2  a pending row remap on GPU 0: reset-gpu
#   node3  GPU 3's PCIe link trained at x8 of x16: drain
#   node4  mlx5_0/1 link_downed moves between the two snapshots: drain
#   node5, node6  healthy: never named
# The run is `--stages health,sleep`: the sleep stage stands in for the pair
# stages, and the test bumps node4's counter while it runs.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
FAKES=$BUILD/fakes
FIXTURE=$here/../fixtures/sysroot-gpu-node

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
[ -e "$FAKES/libnvidia-ml.so.1" ] || { echo "FAIL: no $FAKES/libnvidia-ml.so.1"; exit 1; }
cluster_test_start he health

"$sc" up 6 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }

# ---- each node: a values file for the fake NVML and a sysroot ------------
sed '/^\[\[nodes\]\]/,$d' "$dir/inventory.toml" >"$dir/health.toml"
boot='6,1,1000000,-;Linux version 6.1.0 (debian-kernel@lists.debian.org)
6,2,3100000,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.15
4,3,3500000,-;NVRM: Persistence mode is deprecated and will be removed in a future release.'
for i in 1 2 3 4 5 6; do
  n=node$i d=$dir/gpu/$n r=$dir/root/$n
  mkdir -p "$d" "$(dirname "$r")"
  ln -s "$FAKES/libnvidia-ml.so.1" "$d/libnvidia-ml.so.1"
  printf 'gpu_count = 8\nnvlinks = 18\n' >"$d/fake_gpu.conf"
  cp -r "$FIXTURE" "$r"
  c=$r/sys/class/infiniband/mlx5_0/ports/1/counters
  mkdir -p "$c"
  for k in symbol_error link_downed link_error_recovery port_rcv_errors \
           local_link_integrity_errors excessive_buffer_overrun_errors port_xmit_discards; do
    echo 0 >"$c/$k"
  done
  printf '%s\n' "$boot" >"$r/dev/kmsg"
  rm -f "$r/etc/nccl.conf"  # the fixture's NCCL_IB_DISABLE=1 is a facts warning, not health
  cat >>"$dir/health.toml" <<TOML

[[nodes]]
name = "$n"
address = "$("$sc" addr $n)"
gpus = 8
root = "$r"
library_paths = ["$d"]
env = { CC_FAKE_GPU_CONF = "$d/fake_gpu.conf" }
TOML
done
echo '4,4,95000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=4242, name=python3, GPU has fallen off the bus.' \
  >>"$dir/root/node1/dev/kmsg"
echo 'remapped_pending.0 = 1' >>"$dir/gpu/node2/fake_gpu.conf"
echo 'pcie_width.3 = 8' >>"$dir/gpu/node3/fake_gpu.conf"
cat >>"$dir/health.toml" <<'TOML'

[stages]
run = ["health", "sleep"]

[stages.sleep]
seconds = 6
TOML

# ---- the run; node4's link drops while "the pair stages" run -------------
"$CC" run "$dir/health.toml" --db "$DB" >"$dir/run.out" 2>"$dir/run.err" &
pid=$!
for _ in $(seq 1 600); do
  grep -q '^  health ' "$dir/run.err" 2>/dev/null && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
echo 3 >"$dir/root/node4/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed"
wait $pid
rc=$?
echo "# clustercheck run exited $rc"
sed 's/^/  > /' "$dir/run.out"
if [ $rc -eq 1 ]; then ok "run exits 1 (failures)"; else not_ok "run exits 1, not $rc"; cat "$dir/run.err"; fi

H="run_id=1 and stage='health'"
finding() {  # NODE CHECK -> outcome|action|value|expected
  q "select outcome || '|' || json_extract(evidence,'\$.action') || '|' || value || '|' || expected from node_results where $H and node='$1' and check_name='$2'"
}
expect_finding() {  # description NODE CHECK WANT
  local got
  got=$(finding "$2" "$3")
  if [ "$got" = "$4" ]; then ok "$1"; else not_ok "$1"; echo "  | expected '$4', got '$got'"; fi
}
expect_finding "node1: Xid 79, reboot" node1 xid.79 "fail|reboot|Xid 79|"
expect_finding "node2: GPU 0's pending remap, reset-gpu" node2 gpu0.remap "fail|reset-gpu|pending|none"
expect_finding "node3: GPU 3 at x8 of x16, drain" node3 gpu3.pcie "fail|drain|gen 5 x8|gen 5 x16"
expect_finding "node4: link_downed +3 during the run, drain" node4 "ib.mlx5_0/1.link_downed" \
  "fail|drain|+3|+0"
expect_like "node3's finding names the GPU's bus id" "0000:5d:00.0" \
  "select message from node_results where $H and node='node3' and check_name='gpu3.pcie'"
expect "each odd node fails only its fault" \
  "node1:xid.79|node2:gpu0.remap|node3:gpu3.pcie|node4:ib.mlx5_0/1.link_downed" \
  "select group_concat(node || ':' || check_name, '|') from (select node, check_name from node_results where $H and outcome in ('fail','warn','error','hang') order by node)"
expect "node5 and node6 are never named: every result passes or skips" 0 \
  "select count(*) from node_results where run_id=1 and node in ('node5','node6') and outcome not in ('pass','skip')"
expect "every node's kernel log was read (no skip)" 0 \
  "select count(*) from node_results where $H and check_name='kernel_log' and outcome='skip'"
expect "the down mlx5_1 port (down on every node) accuses nobody" 0 \
  "select count(*) from node_results where $H and check_name like 'ib.mlx5_1/%' and outcome not in ('pass','skip')"
expect_like "node5's counters were compared" "within limits" \
  "select message from node_results where $H and node='node5' and check_name='ib.mlx5_0/1.counters'"

# ---- what people read --------------------------------------------------
v=$(sed -n '/^verdicts/,/^$/p' "$dir/run.out")
for n in node1 node2 node3 node4; do
  if grep -q "$n" <<<"$v"; then ok "the verdicts name $n"; else not_ok "the verdicts name $n"; fi
done
if grep -Eq 'node[56]' <<<"$v"; then not_ok "node5/node6 named in the verdicts"; else ok "node5 and node6 are not in the verdicts"; fi
"$CC" report 1 --db "$DB" --html "$dir/report.html" >/dev/null 2>&1
if grep -q 'id="health"' "$dir/report.html" && grep -q 'GPU topology of node' "$dir/report.html"; then
  ok "the HTML report has the health table and the topology"
else
  not_ok "the HTML report has the health table and the topology"
fi
cluster_test_finish
