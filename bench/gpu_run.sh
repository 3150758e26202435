#!/usr/bin/env bash
# One pass over everything that needs a GPU, for a lent CUDA machine whose image already has
# torch, jax, cupy and the test dependencies (no network): installs mscore and the plugins
# without dependencies, runs the conformance kit on every backend on CUDA, the 20-step
# MLP/CNN comparison, and the bench scripts. Logs and JSON reports go to $OUT (or ./gpu-out).
# Arguments pick sections (default: all, in this order), to split the pass over several calls
# of a time-limited machine:  kit check micro counts models
#   bash bench/gpu_run.sh                # everything
#   bash bench/gpu_run.sh counts models  # issue 17's benches only
set -uo pipefail
SECTIONS=" ${*:-kit check micro counts models} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $PY -c "import torch, jax, cupy; print('torch', torch.__version__, 'jax', jax.__version__, 'cupy', cupy.__version__)"
} 2>&1 | tee "$OUT/env.txt"
# GPU_RUN_NO_INSTALL=1: mscore is importable already (a dry run from a checkout on PYTHONPATH).
[ -n "${GPU_RUN_NO_INSTALL:-}" ] || $PY -m pip install -q --no-deps --no-build-isolation --no-index -e . -e plugins/torch_backend \
    -e plugins/jax_backend -e plugins/cupy_backend 2>&1 | tail -3
$PY -m mscore.cli backends 2>&1 | tee "$OUT/backends.txt"
# The conformance kit on CUDA for torch, jax and cupy, the three at once (jax allocates GPU
# memory as it needs it, so the others fit beside it): the quick sample by default (every
# test, dtype and capability check; GPU_RUN_KIT_FULL=1 runs the whole kit), each device
# against its own declarations. JSON reports, Markdown tolerance tables and full logs in $OUT.
if want kit; then
  KIT_BACKENDS=(torch jax cupy)
  KIT_ARGS=(--quick); [ -n "${GPU_RUN_KIT_FULL:-}" ] && KIT_ARGS=()
  KIT_PIDS=()
  for b in "${KIT_BACKENDS[@]}"; do
    XLA_PYTHON_CLIENT_PREALLOCATE=false OMP_NUM_THREADS=4 timeout "${GPU_RUN_KIT_TIMEOUT:-330}" \
      $PY -m mscore.cli conformance "$b" --device GPU "${KIT_ARGS[@]}" --no-matrix \
      --report "$OUT/conformance-$b-gpu.json" --markdown "$OUT/conformance-$b-gpu.md" \
      > "$OUT/conformance-$b-gpu.txt" 2>&1 &
    KIT_PIDS+=($!)
  done
  for i in "${!KIT_BACKENDS[@]}"; do
    b=${KIT_BACKENDS[$i]}; wait "${KIT_PIDS[$i]}"; status=$?
    echo "conformance $b GPU: exit $status$([ $status = 124 ] && echo ' (timed out)')"
    grep -E "^(FAILED|ERROR) $b/|did not run|tests failed|declares|no test of the kit| (passed|failed)" \
      "$OUT/conformance-$b-gpu.txt" | tail -15
  done
fi
want check && timeout 120 $PY bench/gpu_check.py 2>&1 | tee "$OUT/gpu_check.txt" | tail -20
want micro && for s in torch_vs_native jax_vs_native cupy_vs_native dispatch_overhead; do
  timeout 90 $PY "bench/$s.py" --device GPU > "$OUT/$s.txt" 2>&1 || timeout 90 $PY "bench/$s.py" > "$OUT/$s.txt" 2>&1
  echo "== $s"; tail -15 "$OUT/$s.txt"
done
# Backend calls (kernels on CuPy) per train step, then the realistic models: mscore vs native
# torch and jax at O0 / O2 (float16, dynamic loss scale) / bf16, with TFLOP/s and the O2/O0
# speedup. Without a GPU (a dry run) they run on the CPU at toy sizes.
want counts && for b in numpy cupy torch; do
  timeout 120 $PY bench/count_calls.py --backend "$b" > "$OUT/count_calls-$b.txt" 2>&1
  echo "== count_calls $b: exit $?"; tail -4 "$OUT/count_calls-$b.txt"
done
TOY_resnet="--width 4 --batch 8 --rounds 1 --steps 1 --warmup 1"
TOY_gpt="--width 32 --seq 16 --batch 4 --vocab 64 --rounds 1 --steps 1 --warmup 1"
want models && for s in resnet gpt; do
  toy="TOY_$s"
  timeout 400 $PY "bench/$s.py" --device GPU --threads 0 --rounds 5 --steps 10 --warmup 3 \
      > "$OUT/$s.txt" 2>&1 || timeout 300 $PY "bench/$s.py" ${!toy} > "$OUT/$s.txt" 2>&1
  echo "== $s: exit $?"; tail -24 "$OUT/$s.txt"
done
