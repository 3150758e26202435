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
want kit && for b in torch jax cupy; do
  timeout 150 $PY -m mscore.cli conformance "$b" --device GPU --report "$OUT/conformance-$b-gpu.json" \
      2>&1 | tail -40 > "$OUT/conformance-$b-gpu.txt"
  echo "conformance $b GPU: exit ${PIPESTATUS[0]}"; tail -4 "$OUT/conformance-$b-gpu.txt"
done
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
