#!/usr/bin/env bash
# The Python package as a user installs it (docs/python.md): `pip install .` from the repository's
# root into a fresh virtual environment, timed; then the `kgate` command line found on the
# environment's PATH, `import kgate`, and the project's version (project(kgate VERSION ...) in the
# root CMakeLists.txt) said alike by `kgate --version`, kgate.__version__ and the package's metadata.
# With the CUDA Toolkit the engine (kgate._engine) must be built and load, and kgate.device() names
# the GPU or, without one, raises kgate.EngineUnavailable with the device probe's reason.
# --without-cuda installs as on a machine without the toolkit (no nvcc on PATH, CUDA's folders
# ignored) and checks that the package has the command line, no engine, and that kgate.device()
# raises EngineUnavailable saying no CUDA compiler was found when it was built.
# Usage: tests/python_package.sh [--without-cuda] [--wheels DIR] [WORK_DIR]
#   --wheels DIR  install offline, the build requirements (scikit-build-core, nanobind and theirs)
#                 taken from DIR: pip install --no-index --find-links DIR . (as on a GPU machine
#                 without network)
#   WORK_DIR      where the virtual environment goes (default: a temporary directory, removed afterwards)
# The build runs CMAKE_BUILD_PARALLEL_LEVEL jobs (default 2).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
fail() {
  echo "python_package: $*" >&2
  exit 1
}
usage="usage: tests/python_package.sh [--without-cuda] [--wheels DIR] [WORK_DIR]"
cuda=yes
pip_sources=()
while (($#)); do
  case $1 in
    --without-cuda) cuda=no ;;
    --wheels) (($# >= 2)) || { echo "$usage" >&2; exit 2; }; pip_sources=(--no-index --find-links "$(cd "$2" && pwd)"); shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
kgate_work_dir python "$@"
venv=$work/venv
rm -rf "$venv"
python3 -m venv "$venv"

# Without CUDA: no nvcc on PATH, and CMake told to ignore /usr/local/cuda/bin, where the package's
# build would otherwise find the toolkit (python/tools_only_without_cuda.cmake).
install_env=(env CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}")
if [[ $cuda == no ]]; then
  mkdir -p "$work/no-cuda"
  install_env=(env -u CUDACXX -u CUDA_PATH -u CUDA_HOME "${install_env[@]:1}"
               PATH="$(kgate_path_without_cuda "$work/no-cuda")"
               CMAKE_ARGS="${CMAKE_ARGS:+$CMAKE_ARGS }-DCMAKE_IGNORE_PATH=/usr/local/cuda/bin")
fi
log=$work/install.log
start=$(date +%s)
if ! (cd "$KGATE_ROOT" && "${install_env[@]}" "$venv/bin/pip" install -v --no-cache-dir "${pip_sources[@]}" . >"$log" 2>&1); then
  tail -n 40 "$log" >&2
  fail "pip install . failed (log: $log)"
fi
seconds=$(($(date +%s) - start))
steps=$(grep -c '^  \[[0-9]*/[0-9]*\]' "$log" || true)
echo "python_package: pip install . (CUDA: $cuda) took ${seconds} s on $(nproc) cores, $steps build steps"

version=$(sed -n 's/^ *project(kgate VERSION \([0-9.]*\) .*/\1/p' "$KGATE_ROOT/CMakeLists.txt" | head -n 1)
[[ -n $version ]] || fail "no project(kgate VERSION ...) in CMakeLists.txt"
# The command line as the environment's users meet it: on PATH once the environment is active.
found=$(PATH="$venv/bin:$PATH" command -v kgate)
[[ $found == "$venv/bin/kgate" ]] || fail "kgate on the environment's PATH is '$found', not $venv/bin/kgate"
said=$("$venv/bin/kgate" --version)
[[ $said == "kgate $version "* ]] || fail "the environment's kgate says '$said', not $version"
"$venv/bin/kgate" compare --help >/dev/null || fail "kgate compare --help failed"

(cd "$work" && "$venv/bin/python" - "$version" "$cuda" <<'EOF') || fail "the kgate package's checks failed"
import importlib.metadata
import sys

import kgate

version, cuda = sys.argv[1:]
assert kgate.__version__ == version, f"kgate.__version__ is {kgate.__version__!r}, not {version!r}"
metadata = importlib.metadata.version("kgate")
assert metadata == version, f"the package's metadata says {metadata!r}, not {version!r}"
assert kgate._build.ENGINE_BUILT == (cuda == "yes"), f"ENGINE_BUILT is {kgate._build.ENGINE_BUILT} with CUDA {cuda}"
try:
    print(f"python_package: kgate.device() is {kgate.device()!r}")
except kgate.EngineUnavailable as error:
    expected = "no usable GPU: " if cuda == "yes" else "kgate's measurement engine is not installed: no CUDA compiler"
    assert str(error).startswith(expected), f"EngineUnavailable says {str(error)!r}, not {expected!r}..."
    print(f"python_package: kgate.device() raises kgate.EngineUnavailable: {error}")
if cuda == "yes":
    import kgate._engine  # noqa: F401  (built, and loads: its CUDA libraries are found)
print(f"python_package: kgate {kgate.__version__} imports; `kgate --version` and the metadata agree")
EOF

# A Python suite as a user writes one (docs/python.md), synthetic: its command line (listing, filter,
# shards, --help, a bad flag, a journey step that names no variant) needs no GPU; timing needs one and
# says so; pytest --kgate makes a test of each variant x test shape and skips them without a GPU.
suite_dir=$work/synthetic-suite
mkdir -p "$suite_dir"
cat >"$suite_dir/suite.py" <<'EOF'
import kgate


def make_inputs(shape, generator):
    return {"x": kgate.random_tensor((shape["n"],), shape.torch_dtype, generator)}


def make_outputs(shape):
    import torch
    return {"out": torch.empty(shape["n"], dtype=shape.torch_dtype, device="cuda")}


scale = kgate.Family("synthetic_scale", inputs=make_inputs, outputs=make_outputs, reference=lambda x: {"out": 2 * x},
                     test_shapes=[kgate.Shape(n=1000, dtype="fp32")],
                     bench_shapes=[kgate.Shape(n=n, dtype="bf16") for n in (1024, 4096)],
                     min_bytes=lambda s: 4 * s["n"], flops=lambda s: s["n"])


@scale.variant(name="torch")
def torch_scale(x, out):
    out.copy_(x * 2)


@scale.variant(name="inplace", follows="torch", description="a journey step")
def inplace_scale(x, out):
    out.copy_(x).mul_(2)


if __name__ == "__main__":
    kgate.main(suite="synthetic")
EOF
suite=("$venv/bin/python" "$suite_dir/suite.py")
expect_exit() {  # expect_exit STATUS WORDS COMMAND...: the command exits STATUS, its output holds WORDS
  local status=$1 words=$2 out got=0
  shift 2
  out=$("$@" 2>&1) || got=$?
  ((got == status)) || fail "'${*: -1}' exited $got, not $status: $out"
  [[ $out == *"$words"* ]] || fail "'${*: -1}' did not say '$words': $out"
}
if [[ $cuda == yes ]]; then
  listed=$("${suite[@]}" --benchmark_list_tests)
  [[ $listed == "synthetic_scale/torch/n:1024/bf16
synthetic_scale/torch/n:4096/bf16
synthetic_scale/inplace/n:1024/bf16
synthetic_scale/inplace/n:4096/bf16" ]] || fail "the synthetic suite lists: $listed"
  [[ $("${suite[@]}" --benchmark_list_tests --benchmark_filter='inplace/n:4096') == synthetic_scale/inplace/n:4096/bf16 ]] ||
    fail "--benchmark_filter did not select one benchmark"
  sharded=$( ("${suite[@]}" --benchmark_list_tests --kgate_shard=0/2; "${suite[@]}" --benchmark_list_tests --kgate_shard=1/2) | sort)
  [[ $sharded == "$(sort <<<"$listed")" ]] || fail "two shards do not list the suite once: $sharded"
  expect_exit 0 "--kgate_out" "${suite[@]}" --help
  expect_exit 2 "unknown or malformed argument '--benchmark_nonsense'" "${suite[@]}" --benchmark_nonsense
  expect_exit 2 "unknown flag --kgate_bogus" "${suite[@]}" --kgate_bogus=1
  sed 's/follows="torch"/follows="eager"/' "$suite_dir/suite.py" >"$suite_dir/bad_follows_suite.py"
  expect_exit 2 "follows 'eager', which is not a variant of synthetic_scale" "$venv/bin/python" "$suite_dir/bad_follows_suite.py" --benchmark_list_tests
  rm "$suite_dir/bad_follows_suite.py"
  if ! "$venv/bin/python" -c "import kgate; kgate.device()" 2>/dev/null; then
    expect_exit 1 "no usable GPU" "${suite[@]}" --kgate_out="$work/never.json"
    [[ ! -e $work/never.json ]] || fail "a suite without a GPU wrote results"
    "$venv/bin/pip" install -q "${pip_sources[@]}" pytest >"$work/pytest-install.log" 2>&1 ||
      fail "pip install pytest failed ($(tail -n 3 "$work/pytest-install.log"))"
    expect_exit 0 "2 skipped" "$venv/bin/pytest" -p no:cacheprovider --kgate -rs "$suite_dir"
    expect_exit 1 "no usable GPU" env KGATE_REQUIRE_GPU=1 "$venv/bin/pytest" -p no:cacheprovider --kgate "$suite_dir"
  fi
else
  expect_exit 2 "kgate's measurement engine is not installed" "${suite[@]}" --benchmark_list_tests
fi
echo "python_package: a Python suite lists, filters, shards and refuses bad flags; without a GPU it says so"
