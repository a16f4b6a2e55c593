#!/bin/sh
# A fake python for the agent's torch probe (agent/facts_software.cc runs
# `<python> -c <script>`): prints the one JSON line the real probe prints,
# from the node's values file ($CC_FAKE_GPU_CONF, else fake_gpu.conf beside
# the path this was called by, so a per-node symlink finds its node's file).
# Keys: torch_version (absent: torch is not installed), torch_cuda ("none"
# for a CPU wheel), torch_cuda_available, torch_device_count, torch_nccl,
# torch_cudnn, torch_stderr (a warning torch prints, e.g. a too-old driver).
conf=${CC_FAKE_GPU_CONF:-$(dirname "$0")/fake_gpu.conf}
if [ "$1" != "-c" ] || ! printf '%s' "$2" | grep -q 'import torch'; then
  echo "fake python: only the agent's torch probe (-c '...import torch...') is faked" >&2
  exit 2
fi
[ -r "$conf" ] || { echo "fake python: no values file $conf" >&2; exit 1; }
get() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\\(.*[^[:space:]]\\)[[:space:]]*\$/\\1/p" "$conf" | tail -1; }
version=$(get torch_version)
if [ -z "$version" ]; then
  echo '{"import_error": "ModuleNotFoundError: No module named '"'torch'"'"}'
  exit 0
fi
stderr=$(get torch_stderr)
[ -z "$stderr" ] || echo "$stderr" >&2
cuda=$(get torch_cuda)
case $cuda in ""|none|None) cuda=null ;; *) cuda="\"$cuda\"" ;; esac
nccl=$(get torch_nccl)
case $nccl in "") nccl=null ;; *) nccl="\"$nccl\"" ;; esac
available=$(get torch_cuda_available)
count=$(get torch_device_count)
cudnn=$(get torch_cudnn)
printf '{"version": "%s", "cuda": %s, "cuda_available": %s, "device_count": %s, "nccl": %s, "cudnn": %s}\n' \
  "$version" "$cuda" "${available:-false}" "${count:-0}" "$nccl" "${cudnn:-null}"
