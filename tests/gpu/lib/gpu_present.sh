# Sourced by tests/gpu/*.sh. gpu_present: whether this machine can run a GPU
# check: nvidia-smi that lists a GPU, /dev/nvidia0, and libcuda.so.1 where
# the loader finds it. Without one of them it prints "SKIP: ..." with the
# reason and returns 1; the scripts then exit 77, which ctest counts as
# skipped (label gpu), so the checks are listed everywhere and run where a
# GPU is.
gpu_present() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "SKIP: no GPU here (no nvidia-smi)"; return 1
  fi
  if [ ! -e /dev/nvidia0 ]; then
    echo "SKIP: no GPU here (no /dev/nvidia0)"; return 1
  fi
  # ldconfig's cache, else dlopen as the agent does (LD_LIBRARY_PATH too).
  if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' &&
     ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' >/dev/null 2>&1; then
    echo "SKIP: no GPU here (no libcuda.so.1)"; return 1
  fi
  if ! timeout 20 nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no GPU here (nvidia-smi -L fails)"; return 1
  fi
}
