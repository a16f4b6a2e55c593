#!/usr/bin/env bash
# The facts and parity stages on a 6-node simulated cluster (real SSH) whose
# GPUs, libcuda, NCCL and torch are the fakes of tests/fakes, each node
# answering from its own values file (issue 4, "Done when"):
#   node1  an older driver (535.104.05, CUDA 12.2) than the rest (550.54.15)
#   node2  no libnccl.so.2 anywhere it looks
#   node3  7 GPUs where the inventory says 8
#   node4  torch 2.9.0+cu130, built for CUDA 13.0, which its 550 driver
#          (CUDA 12.4) cannot run: torch.cuda.is_available() is false
#   node5, node6  like the majority
# The verdict must name each odd node with the field, its value and what
# the majority has, in `run`'s output, in `report --json` and in the DB;
# node5 and node6 pass everything; `run` exits 1.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
FAKES=$BUILD/fakes
FAKE_PYTHON=$here/../fakes/fake_python.sh

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
for lib in libnvidia-ml.so.1 libcuda.so.1 libnccl.so.2; do
  [ -e "$FAKES/$lib" ] || { echo "FAIL: no $FAKES/$lib (tests/fakes not built)"; exit 1; }
done
cluster_test_start pa parity

# expect_in "description" FILE FIXED-STRING: FILE has a line with it.
expect_in() {
  if grep -qF -- "$3" "$2"; then ok "$1"; else not_ok "$1"; echo "  | no '$3' in $2"; fi
}

"$sc" up 6 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }

# node2 has no NCCL. The nodes share this host's files, and the agent also
# searches the standard places after the node's folder, so a libnccl.so.2
# installed here (a CUDA toolkit's) is covered, in node2's mount namespace
# only (its sshd's, which its sessions inherit), by an empty file: dlopen
# then fails there as on a node without NCCL.
: >"$dir/empty"
hide_nccl() {
  local pid f hidden=""
  pid=$(cat "$dir/node2/sshd.pid") || return 1
  for f in $( (ldconfig -p 2>/dev/null | sed -n 's/.*libnccl\.so\.2 .*=> //p'
               ls /usr/lib/x86_64-linux-gnu/libnccl.so.2 /usr/local/cuda/lib64/libnccl.so.2 \
                  /usr/local/nccl/lib/libnccl.so.2 /opt/nccl/lib/libnccl.so.2 \
                  /usr/lib64/libnccl.so.2 2>/dev/null) | xargs -r -n1 realpath | sort -u); do
    nsenter -t "$pid" -m mount --bind "$dir/empty" "$f" || return 1
    nsenter -t "$pid" -m test ! -s "$f" || return 1
    hidden="$hidden $f"
  done
  echo "# hidden from node2:${hidden:- nothing (no NCCL on this host)}"
}
hide_nccl || { echo "FAIL: cannot hide this host's NCCL from node2"; exit 1; }

# ---- the nodes: one folder each, named by the inventory ----------------
majority='driver_version = 550.54.15
nvml_version = 12.550.54.15
gpu_count = 8
gpu_name = NVIDIA H100 80GB HBM3
vbios = 96.00.89.00.01
nvlinks = 18
cuda_driver_version = 12.4
nccl_version = 2.21.5
torch_version = 2.3.1+cu121
torch_cuda = 12.1
torch_cuda_available = true
torch_device_count = 8
torch_nccl = 2.20.5
torch_cudnn = 8902'
declare -A odd=(
  [node1]='driver_version = 535.104.05
nvml_version = 12.535.104.05
cuda_driver_version = 12.2'
  [node2]=''  # no libnccl.so.2 in its folder: see below
  [node3]='gpu_count = 7
torch_device_count = 7'
  [node4]='torch_version = 2.9.0+cu130
torch_cuda = 13.0
torch_cuda_available = false
torch_device_count = 0
torch_nccl = 2.27.7
torch_cudnn = 91200
torch_stderr = UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12040).'
)
# The inventory: simcluster's [ssh] settings, then our own [[nodes]].
sed '/^\[\[nodes\]\]/,$d' "$dir/inventory.toml" >"$dir/parity.toml"
for i in 1 2 3 4 5 6; do
  n=node$i d=$dir/gpu/node$i
  mkdir -p "$d"
  # Later keys win in a values file: the odd node's lines go last.
  printf '%s\n%s\n' "$majority" "${odd[$n]:-}" >"$d/fake_gpu.conf"
  ln -s "$FAKES/libnvidia-ml.so.1" "$d/libnvidia-ml.so.1"
  ln -s "$FAKES/libcuda.so.1" "$d/libcuda.so.1"
  [ $n = node2 ] || ln -s "$FAKES/libnccl.so.2" "$d/libnccl.so.2"
  ln -s "$FAKE_PYTHON" "$d/python3"
  # UUIDs differ per node, as on real machines (and must not be judged).
  echo "uuid_prefix = GPU-$(printf '%08x' $i)-1111-4222-8333-4444444444" >>"$d/fake_gpu.conf"
  cat >>"$dir/parity.toml" <<TOML

[[nodes]]
name = "$n"
address = "$("$sc" addr $n)"
gpus = 8
library_paths = ["$d"]
python = "$d/python3"
env = { CC_FAKE_GPU_CONF = "$d/fake_gpu.conf" }
TOML
done
cat >>"$dir/parity.toml" <<'TOML'

[stages]
run = ["facts", "parity"]
TOML

"$CC" run "$dir/parity.toml" --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
echo "# clustercheck run exited $rc"
sed 's/^/  > /' "$dir/run.out"
if [ $rc -eq 1 ]; then ok "run exits 1 (failures)"; else not_ok "run exits 1, not $rc"; cat "$dir/run.err"; fi

# ---- the facts each node reported came from its own values ------------
# The SQL for one fact of one node: fact gpu.count node3.
fact() { echo "select json_extract(facts, '\$.$1') from nodes where run_id=1 and node='$2'"; }
expect "node1's NVML says 535.104.05" 535.104.05 "$(fact gpu.driver_version node1)"
expect "node5's NVML says 550.54.15 from node5's folder" \
  "550.54.15|$dir/gpu/node5/libnvidia-ml.so.1: loaded" \
  "select json_extract(facts,'\$.gpu.driver_version'), json_extract(facts,'\$.gpu.searched[0]') from nodes where run_id=1 and node='node5'"
expect "node3's NVML counts 7 GPUs" 7 "$(fact gpu.count node3)"
expect "node6's GPU 2 has node6's UUID" GPU-00000006-1111-4222-8333-444444444402 \
  "$(fact 'gpu.gpus[2].uuid' node6)"
expect "node2 found no NCCL" absent "$(fact nccl.status node2)"
expect "node2's search starts in its own folder (and nothing loaded)" "0"   "select count(*) from nodes, json_each(json_extract(facts,'\$.nccl.searched')) where run_id=1 and node='node2' and value like '%: loaded'"
expect "node2's search starts in its own folder" "$dir/gpu/node2/libnccl.so.2: no such file" \
  "$(fact 'nccl.searched[0]' node2)"
expect "node5's NCCL is 2.21.5" 2.21.5 "$(fact nccl.version node5)"
expect "node5's libcuda says CUDA 12.4" 12.4 "$(fact cuda.driver_api_version node5)"
expect "node4's torch reports CUDA 13.0, not available, 0 devices" "13.0|0|0" \
  "select json_extract(facts,'\$.torch.cuda'), json_extract(facts,'\$.torch.cuda_available'), json_extract(facts,'\$.torch.device_count') from nodes where run_id=1 and node='node4'"
expect "node5's torch: version, CUDA, available, devices, NCCL" "2.3.1+cu121|12.1|1|8|2.20.5" \
  "select json_extract(facts,'\$.torch.version'), json_extract(facts,'\$.torch.cuda'), json_extract(facts,'\$.torch.cuda_available'), json_extract(facts,'\$.torch.device_count'), json_extract(facts,'\$.torch.nccl') from nodes where run_id=1 and node='node5'"

# ---- the verdict in the DB: field, value, what the majority has ---------
P="run_id=1 and stage='parity'"
row() { q "select outcome || '|' || value || '|' || expected || '|' || message from node_results where $P and node='$1' and check_name='$2'"; }
expect_row() {  # description NODE CHECK EXPECTED-ROW
  local got
  got=$(row "$2" "$3")
  if [ "$got" = "$4" ]; then ok "$1"; else not_ok "$1"; echo "  | expected '$4'"; echo "  | got      '$got'"; fi
}
expect_row "node1 fails driver: 535.104.05, the cluster has 550.54.15" node1 driver \
  "fail|535.104.05|550.54.15|driver 535.104.05 differs from the cluster (550.54.15 on node[2-6])"
expect_row "node1 fails cuda_driver: 12.2, the cluster has 12.4" node1 cuda_driver \
  "fail|12.2|12.4|cuda_driver 12.2 differs from the cluster (12.4 on node[2-6])"
expect_row "node2 fails nccl: none, the cluster has 2.21.5" node2 nccl \
  "fail||2.21.5|nccl not reported; the cluster has 2.21.5 on node[1,3-6]"
expect_row "node3 fails gpu_count: 7, the cluster has 8" node3 gpu_count \
  "fail|7|8|gpu_count 7 differs from the cluster (8 on node[1-2,4-6])"
expect_row "node3 fails the inventory's gpus = 8" node3 gpus_expected \
  "fail|7|8|has 7 GPUs, inventory says 8"
expect_row "node4 fails torch_cuda: 13.0, the cluster has 12.1" node4 torch_cuda \
  "fail|13.0|12.1|torch_cuda 13.0 differs from the cluster (12.1 on node[1-3,5-6])"
expect_row "node4 fails torch: 2.9.0+cu130, the cluster has 2.3.1+cu121" node4 torch \
  "fail|2.9.0+cu130|2.3.1+cu121|torch 2.9.0+cu130 differs from the cluster (2.3.1+cu121 on node[1-3,5-6])"
got=$(row node4 driver_for_cuda)
case $got in
  "fail|550.54.15|"*"580.65.06"*"torch 2.9.0+cu130 built for CUDA 13.0"*)
    ok "node4's driver 550.54.15 is too old for torch's CUDA 13.0 (needs 580.65.06)" ;;
  *) not_ok "node4's driver_for_cuda names 550.54.15, CUDA 13.0 and 580.65.06"; echo "  | got '$got'" ;;
esac
expect "node4 fails torch_sees_gpus" fail \
  "select outcome from node_results where $P and node='node4' and check_name='torch_sees_gpus'"
expect "node1's older driver still runs torch's CUDA 12.1" pass \
  "select outcome from node_results where $P and node='node1' and check_name='driver_for_cuda'"
expect "exactly the odd nodes fail (node1-4)" "node1|node2|node3|node4" \
  "select group_concat(node, '|') from (select distinct node from node_results where $P and outcome='fail' order by node)"
expect "each odd node fails only what is odd about it" \
  "node1:cuda_driver,driver|node2:nccl|node3:gpu_count,gpus_expected|node4:cuda_driver_for_cuda,driver_for_cuda,torch,torch_cuda,torch_cuda_available,torch_nccl,torch_sees_gpus" \
  "select group_concat(node || ':' || checks, '|') from (select node, group_concat(check_name, ',') as checks from (select node, check_name from node_results where $P and outcome='fail' order by node, check_name) group by node)"
expect "node5 and node6 pass every check of every stage" 0 \
  "select count(*) from node_results where run_id=1 and node in ('node5','node6') and outcome!='pass'"
expect "node5 and node6 were judged (parity rows exist)" 1 \
  "select count(*) > 20 from node_results where $P and node in ('node5','node6')"

# ---- the verdict people read: run's output and report --json ------------
if head -1 "$dir/run.out" | grep -Eq '^FAIL: .* on node\[1-4\]$'; then
  ok "run's first line: FAIL on node[1-4]"; else not_ok "run's first line: $(head -1 "$dir/run.out")"; fi
expect_in "run names node1's driver and the majority's" "$dir/run.out" \
  "driver: node1 has 535.104.05; expected 550.54.15 (driver 535.104.05 differs from the cluster (550.54.15 on node[2-6]))"
expect_in "run names node2's missing NCCL and the majority's" "$dir/run.out" \
  "nccl: node2 has nothing; expected 2.21.5 (nccl not reported; the cluster has 2.21.5 on node[1,3-6])"
expect_in "run names node3's GPU count and the majority's" "$dir/run.out" \
  "gpu_count: node3 has 7; expected 8 (gpu_count 7 differs from the cluster (8 on node[1-2,4-6]))"
expect_in "run names node4's torch CUDA and the majority's" "$dir/run.out" \
  "torch_cuda: node4 has 13.0; expected 12.1 (torch_cuda 13.0 differs from the cluster (12.1 on node[1-3,5-6]))"
expect_in "run says node4's driver is too old for its torch" "$dir/run.out" \
  "driver_for_cuda: node4 has 550.54.15; expected >=580.65.06 (driver 550.54.15 is older than 580.65.06, the minimum for CUDA 13.0 (needed by torch 2.9.0+cu130 built for CUDA 13.0))"
# (They appear only inside the majority's hostlists, e.g. node[2-6].)
if grep -E 'node[56]' "$dir/run.out"; then not_ok "run's output names node5 or node6 on their own"
else ok "run's output never names node5 or node6 on their own"; fi
"$CC" report --db "$DB" --json >"$dir/report.json" 2>"$dir/report.err" || not_ok "report --json exited $?"
jq_expect() {  # description EXPECTED JQ-FILTER
  local got
  got=$(jq -r "$3" "$dir/report.json" 2>&1)
  if [ "$got" = "$2" ]; then ok "$1"; else not_ok "$1"; echo "  | expected '$2', got '$got'"; fi
}
# One verdict per odd field: its nodes, their value, the majority's.
# shellcheck disable=SC2016  # $c is jq's variable
V='.verdicts[] | select(.stage == "parity" and .check == $c)'
jv() { jq -r --arg c "$1" "$V | $2" "$dir/report.json" 2>&1; }
jq_verdict() {  # CHECK NODES VALUE-ON-THOSE-NODES MAJORITY
  local got want="$2|$3|$4"
  got=$(jv "$1" '[(.nodes | join(",")), (.evidence.values | to_entries | map(.value) | unique | join(",")), .evidence.majority] | join("|")')
  if [ "$got" = "$want" ]; then ok "report --json: $1 names $2 with $3, majority $4"; else
    not_ok "report --json: $1 verdict"; echo "  | expected '$want', got '$got'"; fi
}
jq_verdict driver node1 535.104.05 550.54.15
jq_verdict cuda_driver node1 12.2 12.4
jq_verdict nccl node2 "" 2.21.5
jq_verdict gpu_count node3 7 8
jq_verdict torch_cuda node4 13.0 12.1
jq_verdict torch node4 2.9.0+cu130 2.3.1+cu121
jq_verdict torch_cuda_available node4 false true
# Rules have no majority: their verdict says what the node needs.
got=$(jv gpus_expected '[(.nodes | join(",")), .evidence.expected, .next_step] | join("|")')
case $got in "node3|8|find the missing GPUs of node3"*) ok "report --json: gpus_expected names node3, expected 8" ;;
  *) not_ok "report --json: gpus_expected"; echo "  | got '$got'" ;; esac
got=$(jv driver_for_cuda '[(.nodes | join(",")), .summary, .next_step] | join("|")')
case $got in "node4|"*"550.54.15"*"580.65.06"*"CUDA 13.0"*"|upgrade the NVIDIA driver on node4 to 580.65.06 or newer"*)
    ok "report --json: driver_for_cuda names node4, its 550.54.15 and the 580.65.06 CUDA 13.0 needs" ;;
  *) not_ok "report --json: driver_for_cuda"; echo "  | got '$got'" ;; esac
jq_expect "report --json: odd fields are odd-version, failed rules incompatible" \
  "driver:odd-version driver_for_cuda:incompatible gpu_count:odd-version gpus_expected:incompatible torch_sees_gpus:incompatible" \
  '[.verdicts[] | select(.check == ("driver", "gpu_count", "driver_for_cuda", "gpus_expected", "torch_sees_gpus")) | "\(.check):\(.kind)"] | sort | join(" ")'
jq_expect "report --json: parity verdicts name only node1-4" "node1,node2,node3,node4" \
  '[.verdicts[] | select(.stage == "parity") | .nodes[]] | unique | join(",")'
jq_expect "report --json: node5 and node6 have no failure" "pass|pass" \
  '[.node_table[] | select(.node == "node5" or .node == "node6") | .worst] | join("|")'
jq_expect "report --json: the node table shows each node's own driver, GPUs, NCCL" \
  "node1 535.104.05 8 x NVIDIA H100 80GB HBM3 2.21.5|node2 550.54.15 8 x NVIDIA H100 80GB HBM3 |node3 550.54.15 7 x NVIDIA H100 80GB HBM3 2.21.5" \
  '[.node_table[] | select(.node <= "node3") | "\(.node) \(.driver) \(.gpus) \(.nccl)"] | join("|")'

cluster_test_finish
