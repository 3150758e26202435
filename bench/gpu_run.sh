#!/usr/bin/env bash
# One GPU pass in at most ~8 minutes on one lent CUDA machine whose image already has torch,
# jax, cupy and the test dependencies (no network): installs mscore and the plugins without
# dependencies, runs the conformance kit on CUDA for torch, jax and cupy at once, the CuPy
# MLP micro bench, and the three models of the mixed-precision benches (ResNet-18-like batch
# 128; decoder width 256 / 4 layers / seq 256 / batch 32; decoder width 1024 / 8 layers /
# seq 1024 / batch 16 / vocab 32000) for torch and jax at O0 / O2 / bf16 in PYNATIVE, with
# GRAPH_MODE rows for torch, then prints a summary table (ratios mscore/native, GRAPH_MODE
# speed-ups over native eager, O2-over-O0 speed-ups of both sides, first-call times).
#
# Everything goes to $OUT (default bench/results/gpu-<UTC time>, or bench/results/dry-run-<UTC
# time> with --dry-run; git ignores bench/results/): env.txt, run.log (this script's output),
# one log and one JSON per section, summary.md and summary.json. docs/gpu-results.md reports
# a pass's figures. Every section is bounded by
# `timeout` and by the pass's deadline (GPU_RUN_BUDGET seconds from the start, default 470);
# a section that fails or runs out of time is recorded and the pass goes on.
#
#   bash bench/gpu_run.sh                    # everything, in priority order
#   bash bench/gpu_run.sh kit models         # sections: install kit micro models graph jax
#   bash bench/gpu_run.sh --dry-run          # CPU, tiny shapes, no install: the script itself
set -uo pipefail
cd "$(dirname "$0")/.."
DRY=""
ARGS=()
for a in "$@"; do
  if [ "$a" = "--dry-run" ]; then DRY=1; else ARGS+=("$a"); fi
done
SECTIONS=" ${ARGS[*]:-install kit micro models graph jax} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
OUT=${OUT:-bench/results/$([ -n "$DRY" ] && echo dry-run || echo gpu)-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
BUDGET=${GPU_RUN_BUDGET:-470}
START=$SECONDS
# left WANT: a timeout of at most WANT seconds that ends before the pass's deadline (0: none)
left() {
  local rest=$((BUDGET - (SECONDS - START)))
  if [ "$rest" -le 5 ]; then echo 0; elif [ "$1" -lt "$rest" ]; then echo "$1"; else echo "$rest"; fi
}
STATUS="$OUT/sections.txt"
: > "$STATUS"
# section NAME WANT CMD...: run CMD under `timeout`, log to $OUT/NAME.txt, record the outcome
section() {
  local name=$1 wanted=$2; shift 2
  local t; t=$(left "$wanted")
  if [ "$t" = 0 ]; then
    echo "$name skipped (out of time)" | tee -a "$STATUS"; return
  fi
  local t0=$SECONDS
  timeout "$t" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  local how="exit $rc"; [ $rc = 124 ] && how="timed out after ${t}s"
  echo "$name: $how in $((SECONDS - t0))s" | tee -a "$STATUS"
  grep -E "ratio|speedup|first call|FAILED|Error|passed|failed" "$OUT/$name.txt" | tail -12
}

if [ -n "$DRY" ]; then
  DEVICE=CPU; KIT_DEVICE=CPU; CLOCK="--clock cpu --threads 1"
  RESNET="--width 2 --batch 2"
  GPT_SMALL="--width 16 --seq 8 --batch 2 --vocab 32 --heads 2 --layers 2"
  GPT_LARGE="--width 32 --seq 16 --batch 2 --vocab 64 --heads 2 --layers 2"
  STEPS="--rounds 2 --steps 1 --warmup 1"
  KIT_ARGS=(--quick -k "test_contract or test_transfer")
  CUPY_STEPS="--steps 2 --rounds 1"
else
  DEVICE=GPU; KIT_DEVICE=GPU; CLOCK="--clock wall --threads 0"
  RESNET="--width 64 --batch 128"
  GPT_SMALL="--width 256 --seq 256 --batch 32 --vocab 1024 --heads 4 --layers 4"
  GPT_LARGE="--width 1024 --seq 1024 --batch 16 --vocab 32000 --heads 16 --layers 8"
  STEPS="--rounds 5 --steps 5 --warmup 3"
  KIT_ARGS=(--quick)
  CUPY_STEPS="--steps 10 --rounds 5"
fi

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  git rev-parse HEAD 2>/dev/null
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
  $PY -c "import jax; print('jax', jax.__version__, jax.devices())" 2>&1 | tail -1
  $PY -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

if want install && [ -z "$DRY" ] && [ -z "${GPU_RUN_NO_INSTALL:-}" ]; then
  section install 120 $PY -m pip install -q --no-deps --no-build-isolation --no-index -e . \
      -e plugins/torch_backend -e plugins/jax_backend -e plugins/cupy_backend
fi

# The conformance kit on CUDA, the three backends at once (jax allocates GPU memory as it
# needs it, so the others fit beside it); each against its own declarations. torch's
# GRAPH_MODE cases run eagerly here (MSCORE_TORCH_COMPILE=never): an inductor compile per
# case would not fit the pass; the GRAPH_MODE rows below check the compiled step's losses.
if want kit; then
  t=$(left 150)
  KIT_PIDS=()
  for b in torch jax cupy; do
    MSCORE_TORCH_COMPILE=never XLA_PYTHON_CLIENT_PREALLOCATE=false OMP_NUM_THREADS=4 \
      timeout "$t" \
      $PY -m mscore.cli conformance "$b" --device "$KIT_DEVICE" "${KIT_ARGS[@]}" --no-matrix \
      --report "$OUT/conformance-$b.json" --markdown "$OUT/conformance-$b.md" \
      > "$OUT/conformance-$b.txt" 2>&1 &
    KIT_PIDS+=($!)
  done
  i=0
  for b in torch jax cupy; do
    wait "${KIT_PIDS[$i]}"; rc=$?; i=$((i + 1))
    how="exit $rc"; [ $rc = 124 ] && how="timed out after ${t}s"
    echo "conformance-$b: $how" | tee -a "$STATUS"
    grep -E "^(FAILED|ERROR) |did not run|declares| passed| failed|not installed|cannot" \
      "$OUT/conformance-$b.txt" | tail -6
  done
fi

want micro && section cupy_mlp 45 $PY bench/cupy_vs_native.py $CUPY_STEPS
# The CuPy backend's one-kernel ops on the device (skipped without one), and its kernels per
# step against the hand-written step.
want micro && section cupy_kernels 40 $PY -m pytest -q -p no:cacheprovider \
    tests/test_cupy_kernels.py
want micro && section cupy_count 20 $PY bench/cupy_vs_native.py --count

# The models, PYNATIVE, torch first (the GPU targets), each level against native eager.
if want models; then
  section resnet-torch 80 $PY bench/resnet.py --backend torch --device $DEVICE $CLOCK \
      $RESNET $STEPS --json "$OUT/resnet-torch.json"
  section gpt-small-torch 70 $PY bench/gpt.py --backend torch --device $DEVICE $CLOCK \
      $GPT_SMALL $STEPS --json "$OUT/gpt-small-torch.json"
fi
# GRAPH_MODE rows for torch (torch.compile with CUDA graphs; the first call compiles).
if want graph; then
  section resnet-torch-graph 110 $PY bench/resnet.py --backend torch --device $DEVICE \
      $CLOCK $RESNET $STEPS --levels O2,bf16 --mode graph --json "$OUT/resnet-torch-graph.json"
  section gpt-small-torch-graph 90 $PY bench/gpt.py --backend torch --device $DEVICE \
      $CLOCK $GPT_SMALL $STEPS --levels O2,bf16 --mode graph \
      --json "$OUT/gpt-small-torch-graph.json"
fi
if want models; then
  section gpt-large-torch 60 $PY bench/gpt.py --backend torch --device $DEVICE $CLOCK \
      $GPT_LARGE $STEPS --json "$OUT/gpt-large-torch.json"
fi
if want jax; then
  export XLA_PYTHON_CLIENT_PREALLOCATE=false
  section resnet-jax 75 $PY bench/resnet.py --backend jax --device $DEVICE $CLOCK $RESNET \
      $STEPS --json "$OUT/resnet-jax.json"
  section gpt-small-jax 60 $PY bench/gpt.py --backend jax --device $DEVICE $CLOCK \
      $GPT_SMALL $STEPS --json "$OUT/gpt-small-jax.json"
  section gpt-large-jax 60 $PY bench/gpt.py --backend jax --device $DEVICE $CLOCK \
      $GPT_LARGE $STEPS --levels O0,O2 --json "$OUT/gpt-large-jax.json"
fi

echo "== summary ($((SECONDS - START)) s)"
$PY bench/gpu_summary.py "$OUT" | tee "$OUT/summary.md"
