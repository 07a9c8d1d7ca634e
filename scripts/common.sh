# Sourced by the scripts in this folder: the repository root, the CUDA compiler on PATH, and the
# configure-and-build step they share.
KGATE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

# kgate_build PRESET: configure (once) and build.
kgate_build() {
  local preset=${1:-default}
  (cd "$KGATE_ROOT" && cmake --preset "$preset" >/dev/null && cmake --build --preset "$preset")
}

# True when the driver sees at least one GPU.
kgate_has_gpu() {
  command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# The GPUs this job may use, one per line: the entries of CUDA_VISIBLE_DEVICES when it is set
# (indices or UUIDs), else the indices nvidia-smi lists, which are CUDA's device numbers under
# CUDA_DEVICE_ORDER=PCI_BUS_ID.
kgate_visible_gpus() {
  if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
    tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | sed '/^$/d'
  else
    nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9][0-9]*\):.*/\1/p'
  fi
}
