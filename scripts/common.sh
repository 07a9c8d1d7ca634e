# Sourced by the scripts in this folder: the repository root, the CUDA compiler on PATH, and the
# configure-and-build step they share.
KGATE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

# kgate_build PRESET [BUILD ARGUMENTS...]: configure (once) and build (e.g. --target kgate_job).
kgate_build() {
  local preset=${1:-default}
  (cd "$KGATE_ROOT" && cmake --preset "$preset" >/dev/null && cmake --build --preset "$preset" "${@:2}")
}

# kgate_path_without_cuda DIR: PATH without nvcc, to build as on a machine without the CUDA Toolkit:
# CUDA's own folders dropped; a folder that also holds other tools (an nvcc wrapper in
# /usr/local/bin) replaced by a folder of links, made in DIR, to everything in it but nvcc.
kgate_path_without_cuda() {
  local nowhere=$1 without_cuda="" dir mirror tool
  while IFS= read -r dir; do
    [[ -z $dir || $dir == *cuda* ]] && continue
    if [[ -e $dir/nvcc ]]; then
      mirror="$nowhere/path$(( ${#without_cuda} ))"
      mkdir -p "$mirror"
      for tool in "$dir"/*; do [[ $(basename "$tool") == nvcc* ]] || ln -sf "$tool" "$mirror/"; done
      dir=$mirror
    fi
    without_cuda+="${without_cuda:+:}$dir"
  done < <(tr ':' '\n' <<<"$PATH")
  echo "$without_cuda"
}

# kgate_work_dir NAME [DIR]: sets work to DIR, made if missing, or without one to a new temporary
# directory kgate-NAME.XXXXXX, removed when the script exits; an absolute path either way.
kgate_work_dir() {
  if (($# == 2)); then
    work=$2
    mkdir -p "$work"
  else
    work=$(mktemp -d "${TMPDIR:-/tmp}/kgate-$1.XXXXXX")
    trap 'rm -rf "$work"' EXIT
  fi
  work=$(cd "$work" && pwd)
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
