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
