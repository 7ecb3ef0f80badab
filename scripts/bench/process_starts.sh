#!/usr/bin/env bash
# How many CUDA processes a second this machine starts, alone and side by side: a trivial program
# (one cudaFree(0)) and the testing lesson's default run, N=32 times at 1, 4, 8 and 16 at once, and
# 16 at once with the JIT cache disabled. verify's parallel phase starts several hundred such
# processes; on the H200 (2026-12-02) its last 46 s ran them with the GPU mostly idle.
#   bash scripts/bench/process_starts.sh   (needs a GPU; prints one line per measurement)
set -euo pipefail
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '#include <cuda_runtime.h>\nint main() { return cudaFree(0) == cudaSuccess ? 0 : 1; }\n' > "$tmp/ctx.cu"
nvcc -arch=native -o "$tmp/ctx" "$tmp/ctx.cu"
nvcc -std=c++17 -O3 -arch=native -o "$tmp/testing" lessons/testing.cu
nvidia-smi --query-gpu=persistence_mode,compute_mode --format=csv,noheader
for prog in ctx testing; do
  for p in 1 4 8 16; do
    s=$(date +%s.%N)
    seq 32 | xargs -P "$p" -I{} "$tmp/$prog" > /dev/null
    echo "$prog: 32 runs, $p at once: $(python3 -c "print(round($(date +%s.%N) - $s, 2))") s"
  done
  s=$(date +%s.%N)
  seq 32 | CUDA_CACHE_DISABLE=1 xargs -P 16 -I{} "$tmp/$prog" > /dev/null
  echo "$prog: 32 runs, 16 at once, CUDA_CACHE_DISABLE=1: $(python3 -c "print(round($(date +%s.%N) - $s, 2))") s"
done
for p in 1 8; do
  s=$(date +%s.%N)
  seq 8 | xargs -P "$p" -I{} compute-sanitizer --tool memcheck "$tmp/ctx" > /dev/null
  echo "compute-sanitizer memcheck ctx: 8 runs, $p at once: $(python3 -c "print(round($(date +%s.%N) - $s, 2))") s"
done
