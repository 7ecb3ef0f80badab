#!/usr/bin/env bash
# One device call: whole-lesson variants of gemm_ladder (scripts/bench/v/*.cu, each a copy of the
# lesson with one change), built for sm_90 and timed at SIZES in ROUNDS interleaved rounds, each
# round running the cuBLAS anchor first, then every variant (--csv). Not a recording. The variant
# files are scratch (not committed); the tuning notes describe each one's edit.
# Usage: OUT=dir SIZES="2048 4096 8192" ROUNDS=3 bash scripts/bench/gemm_variants.sh
set -u
OUT=${OUT:-/tmp/gv}; SIZES=${SIZES:-"2048 4096 8192"}; ROUNDS=${ROUNDS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd); W=$(mktemp -d); R=$W/res; mkdir -p $R
nvcc -std=c++17 -O3 -arch=sm_90 -o $W/cublas_sgemm $root/anchors/cublas_sgemm.cu -lcublas &
for f in $root/scripts/bench/v/*.cu; do
  n=$(basename $f .cu); nvcc -std=c++17 -O3 -arch=sm_90 -Xptxas -v -o $W/$n $f > $R/build_$n.txt 2>&1 &
done
wait
for r in $(seq 1 $ROUNDS); do for n in $SIZES; do
  $W/cublas_sgemm -n $n > $R/cublas_n${n}_r$r.csv 2>&1
  for f in $root/scripts/bench/v/*.cu; do
    v=$(basename $f .cu); $W/$v --csv -n $n > $R/v_${v}_n${n}_r$r.csv 2> $R/v_${v}_n${n}_r$r.err
    echo "rc=$?" >> $R/v_${v}_n${n}_r$r.err
  done
done; done
python3 $root/scripts/bench/gemm_ladder_summary.py $R "$SIZES" | grep -v ",,,\| 0 *ratio" | tee $OUT/summary.txt
grep -l "GATE\|rc=[^0]" $R/*.err | head; grep -h "Used\|spill" $R/build_*.txt | sort | uniq -c | head -20
cd $R && tar czf $OUT/variants.tgz .
