#!/usr/bin/env bash
# One device call that profiles a gemm_ladder kernel next to cuBLAS's SGEMM
# kernel at one size (docs/notes/gemm_ladder_tuning.md): launch shape,
# registers, instruction counts, issue slots, every stall reason, and the
# per-instruction stall samples of both (ncu's full set, its source page as
# SASS), plus the lesson kernel's SASS. Everything lands in $OUT/profile.tgz.
# Usage: scripts/bench/gemm_ladder_profile.sh  (OUT, N, KERNEL, SKIP from the
# environment; KERNEL a regex of a kernel's base name, which for a template is
# the name without its arguments (gemm2DRegisterBlocked: steps 4 and 5), SKIP the
# matching launches to pass over first: each step launches its kernel 5 times
# at -iters 1). Not a recording: expected/ is never written.
set -u
OUT=${OUT:-/tmp/glp_out}; N=${N:-4096}; KERNEL=${KERNEL:-^gemmInteriorLoads}; SKIP=${SKIP:-1}
W=${W:-$(mktemp -d)}; R=$W/res; mkdir -p $R
root=$(cd "$(dirname "$0")/../.." && pwd)
cp "$root/lessons/gemm_ladder.cu" "$root/anchors/cublas_sgemm.cu" $W/
cd $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/gpu.txt 2>&1
( nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xptxas -v -o gl90 gemm_ladder.cu > $R/build90.txt 2>&1 ) &
( nvcc -std=c++17 -O3 -arch=sm_90 -o cublas_sgemm cublas_sgemm.cu -lcublas > $R/buildcublas.txt 2>&1 ) &
wait
profile() {  # name, kernel regex, launches to skip, command...
  local name=$1 k=$2 skip=$3; shift 3
  timeout 240 ncu --clock-control none -k regex:"$k" --launch-skip $skip -c 1 --set full \
    --import-source no -o $R/$name "$@" > $R/ncu_$name.log 2>&1
  echo "rc=$?" >> $R/ncu_$name.log
  ncu -i $R/$name.ncu-rep --page raw --csv > $R/raw_$name.csv 2>&1
  ncu -i $R/$name.ncu-rep --page details --print-details all > $R/details_$name.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --csv --print-source sass > $R/source_$name.csv 2>&1
}
profile lesson "$KERNEL" $SKIP ./gl90 -n $N -iters 1
profile cublas "gemm" 1 ./cublas_sgemm -n $N -iters 1
cuobjdump -sass gl90 > $R/lesson.sass 2>&1
rm -f $R/*.ncu-rep.tmp
cd $R && tar czf $OUT/profile.tgz . && ls -la $R
grep -h "Registers Per Thread\|Block Size\|Grid Size\|Issue Slots Busy\|No Eligible\|Eligible Warps\|Active Warps Per\|Duration\|Shared Memory Per Block\|Executed Ipc A" $R/details_*.txt
