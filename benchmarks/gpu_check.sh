#!/usr/bin/env bash
# The one GPU check of this project: run it on a machine with a CUDA GPU and CuPy, from the
# repository root. It needs no network and ends within 8 minutes (every step has a timeout;
# the timeouts add up to 433 s).
#
#   bash benchmarks/gpu_check.sh OUTDIR     # logs and tables go to OUTDIR (default: $OUT,
#                                           # else /tmp/gpu_check)
#   GPU_CHECK_FORCE=1 bash benchmarks/gpu_check.sh OUTDIR   # every step, without a GPU
#   GPU_CHECK_DRY_RUN=1 bash benchmarks/gpu_check.sh OUTDIR # on the CPU, in a minute: the
#       kernel step on the fake CuPy (benchmarks/gpu_kernels.py --dry-run), the other steps
#       listed with their scripts checked to exist (tests/static/test_gpu_check_dry_run.py)
#
# Steps: environment report; install the project (no dependencies fetched); the generated GPU
# kernels (benchmarks/gpu_kernels.py: the loop, fused, softmax, LayerNorm, BatchNorm + ReLU
# (forward and backward, alone and as a converted Conv -> BatchNorm -> ReLU's program selects
# them) and cuDNN kernels
# checked against NumPy first, then timed against plain CuPy, with the conv-block and
# Transformer training steps; into gpu_kernels.md); the GPU tests
# (`pytest -m gpu`: every op's values and gradients on CuPy, every op as a static program on
# CuPy, a CNN training step, the training stack, a control-flow program, bfloat16); the GPU
# rows of benchmarks/eager_overhead.py and benchmarks/executor_overhead.py, with the CPU
# rows of the same machine beside them; benchmarks/cuda_graph.py (converted programs called
# as they are vs captured as CUDA graphs and replayed); the GPU rows of benchmarks/fusion.py
# (plain CuPy vs static unfused vs fused: one generated ElementwiseKernel per run);
# benchmarks/gpu_conv.py (convolutions through cuDNN vs the im2col + GEMM path, forward and
# forward + backward, values compared; into bench_fusion.md);
# benchmarks/amp_gpu.py (float32 vs float16 matmuls and a converted MLP under auto_cast: do
# float16 matmuls reach the tensor cores). Missing Python packages (gast, or another CuPy)
# can be carried as wheels in .whl/ (docs/gpu.md says how); they are installed into
# /tmp/site.
#
# Files written (at most 8, for the device tool's limits): env.txt (with the install log),
# gpu_kernels.md, pytest_gpu.log, bench_eager.md, bench_executor.md, bench_fusion.md,
# bench_amp.md, summary.txt.
set -u
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/gpu_check}}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
declare -a RESULTS=()
status=0

DRY=${GPU_CHECK_DRY_RUN:-}

step() {  # step NAME TIMEOUT_S LOGFILE COMMAND...
    local name=$1 limit=$2 log=$3
    shift 3
    if [ -n "$DRY" ]; then  # (listed, not run: its script must exist)
        local script
        for script in "$@"; do
            case $script in
                *.py) [ -f "$script" ] || { echo "missing $script" >>"$log"; status=1; } ;;
            esac
        done
        RESULTS+=("$name: dry run, not run ($*)")
        echo "== $name: dry run, not run"
        return 0
    fi
    local t0=$SECONDS
    timeout "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    RESULTS+=("$name: rc=$rc in $((SECONDS - t0)) s")
    [ "$rc" -eq 0 ] || status=1
    echo "== $name: rc=$rc in $((SECONDS - t0)) s"
    return "$rc"
}

# ---- environment ----------------------------------------------------------------------------
{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true
    "$PY" -V
} >"$OUT/env.txt" 2>&1

# ---- install: carried wheels first, then the project itself without fetching anything -------
INSTALL_LOG="$OUT/env.txt"
if [ -n "$DRY" ]; then
    :  # (nothing installed: the repository root is on PYTHONPATH)
elif ls .whl/*.whl >/dev/null 2>&1; then
    step "install carried wheels" 40 "$INSTALL_LOG" "$PY" -m pip install -q --no-index \
        --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
# Not a failure when it cannot build (no `wheel` package): the root on PYTHONPATH serves too.
[ -n "$DRY" ] || timeout 30 "$PY" -m pip install -q --no-deps --no-build-isolation --no-index \
    -e . >>"$INSTALL_LOG" 2>&1 || echo "pip install -e . failed; using the repository root on PYTHONPATH"
"$PY" - >>"$OUT/env.txt" 2>&1 <<'EOF'
import importlib
for name in ("numpy", "cupy", "ml_dtypes", "gast", "pytest"):
    try:
        m = importlib.import_module(name)
        print(f"{name} {getattr(m, '__version__', '?')}")
    except Exception as e:  # noqa: BLE001
        print(f"{name} MISSING ({e!r})")
import runtime as rt
print("runtime.is_compiled_with_cuda():", rt.is_compiled_with_cuda())
if rt.is_compiled_with_cuda():
    import cupy
    print("device:", rt.set_device("gpu"), cupy.cuda.runtime.getDeviceProperties(0)["name"])
EOF
cat "$OUT/env.txt"
if ! grep -q "is_compiled_with_cuda(): True" "$OUT/env.txt" && [ -z "${GPU_CHECK_FORCE:-}" ] \
        && [ -z "$DRY" ]; then
    echo "no usable CuPy + CUDA device here: the GPU tests would all skip" | tee "$OUT/summary.txt"
    exit 2
fi

# ---- the generated kernels: values against NumPy, then timings ------------------------------
log="$OUT/gpu_kernels.md"
: >"$log"
if [ -n "$DRY" ]; then  # (the one step a dry run runs: on the fake CuPy, kernels on the host)
    DRY="" step "gpu kernels (dry run)" 120 "$log" "$PY" benchmarks/gpu_kernels.py --dry-run
else
    step "gpu kernels" 100 "$log" "$PY" benchmarks/gpu_kernels.py --repeat 3 --number 10
fi
cat "$log"

# ---- GPU tests ------------------------------------------------------------------------------
# gast missing (d2s's only dependency) must not stop the runtime's GPU tests from collecting.
OPTS=()
"$PY" -c "import gast" 2>/dev/null || OPTS+=(--continue-on-collection-errors)
# CuPy compiles each new elementwise kernel on first use: workers spread that over the cores.
"$PY" -c "import xdist" 2>/dev/null && OPTS+=(-n 8)
step "pytest -m gpu" 115 "$OUT/pytest_gpu.log" "$PY" -m pytest -m gpu -q -p no:cacheprovider \
    -rfE --durations=10 "${OPTS[@]}"
tail -n 25 "$OUT/pytest_gpu.log" 2>/dev/null

# ---- benchmarks: CPU and GPU rows of the same machine ---------------------------------------
for b in eager executor; do
    log="$OUT/bench_$b.md"
    : >"$log"
    for dev in cpu gpu; do
        echo "## $b overhead, --device $dev" >>"$log"
        step "benchmark $b --device $dev" 12 "$log" "$PY" "benchmarks/${b}_overhead.py" \
            --device "$dev" --repeat 3 --number 50
        echo >>"$log"
    done
    cat "$log"
done

# CUDA graphs: the same converted programs called as they are and captured (into the
# executor's file: the files are at most 8)
log="$OUT/bench_executor.md"
echo "## CUDA graphs (D2S_CUDA_GRAPH=1), --device gpu" >>"$log"
step "benchmark cuda_graph" 15 "$log" "$PY" benchmarks/cuda_graph.py --repeat 3 --number 50
tail -n 4 "$log"

log="$OUT/bench_fusion.md"
echo "## fused chains, --device gpu" >"$log"
step "benchmark fusion --device gpu" 25 "$log" "$PY" benchmarks/fusion.py --device gpu \
    --repeat 3 --number 3
cat "$log"

echo "## convolutions: cuDNN vs im2col + GEMM (D2S_CUDNN=0), --device gpu" >>"$log"
step "benchmark gpu_conv" 40 "$log" "$PY" benchmarks/gpu_conv.py --device gpu --repeat 3 \
    --number 10
tail -n 8 "$log"

log="$OUT/bench_amp.md"
echo "## float16 on the tensor cores, --device gpu" >"$log"
step "benchmark amp_gpu" 20 "$log" "$PY" benchmarks/amp_gpu.py --device gpu --repeat 3 \
    --number 5
cat "$log"

{
    echo "gpu_check finished $(date -u), overall rc=$status"
    printf '%s\n' "${RESULTS[@]}"
    grep -E "^(FAILED|ERROR)|[0-9]+ (passed|failed)" "$OUT/pytest_gpu.log" 2>/dev/null | tail -n 60
    grep -E "\| NO \|$" "$OUT/gpu_kernels.md"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
exit "$status"
