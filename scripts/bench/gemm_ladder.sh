#!/usr/bin/env bash
# One device call for gemm_ladder's tuning (docs/notes/gemm_ladder_tuning.md):
# builds the lesson (sm_90 native and sm_75 PTX-JIT), the cuBLAS anchor and any
# variants (copies of the lesson edited by sed, VARIANTS below), checks and
# times every step at 1024, 2048, 4096, 8192 interleaved with cuBLAS (ROUNDS
# pairs per size; the lesson checks each step before timing it), profiles the
# key kernels with ncu, runs every Run: line, compute-sanitizer memcheck
# and racecheck on the Sanitize: line, and compares the sm_75 build's result
# lines with the native build's. Everything lands in $OUT/gemm_ladder.tgz plus
# a summary. Usage: scripts/bench/gemm_ladder.sh  (OUT, ROUNDS, SIZES, NCU,
# VARIANTS, VFILES from the environment). VFILES: name=path pairs, whole lesson
# files to time as variants (a path relative to the checkout, e.g. a branch's
# lesson saved with `git show BRANCH:lessons/gemm_ladder.cu > v.cu`, untracked
# files travel with the device call). Variants run in every round at VSIZES,
# interleaved with the lesson and cuBLAS. Not a recording: expected/ is never written.
set -u
OUT=${OUT:-/tmp/gl_out}; ROUNDS=${ROUNDS:-3}; SIZES=${SIZES:-"1024 2048 4096 8192"}
NCU=${NCU:-1}; VARIANTS=${VARIANTS:-}; VFILES=${VFILES:-}; VSIZES=${VSIZES:-"2048 4096"}
W=${W:-$(mktemp -d)}; R=$W/res; mkdir -p $R
root=$(cd "$(dirname "$0")/../.." && pwd)
cp "$root/lessons/gemm_ladder.cu" "$root/anchors/cublas_sgemm.cu" $W/
cd $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/gpu.txt 2>&1
( nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xptxas -v -o gl90 gemm_ladder.cu > $R/build90.txt 2>&1 ) &
( nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o gl75 gemm_ladder.cu > $R/build75.txt 2>&1 ) &
( nvcc -std=c++17 -O3 -arch=sm_90 -o cublas_sgemm cublas_sgemm.cu -lcublas > $R/buildcublas.txt 2>&1 ) &
i=0
for v in $VARIANTS; do  # v: name=sed-expression (no spaces)
  name=${v%%=*}; expr=${v#*=}; i=$((i+1))
  sed -e "$expr" gemm_ladder.cu > v_$name.cu
  ( nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xptxas -v -o v_$name v_$name.cu > $R/build_v_$name.txt 2>&1 ) &
done
for v in $VFILES; do  # v: name=path (relative to the checkout)
  name=${v%%=*}; src=$root/${v#*=}
  [ -f "$src" ] || { echo "VFILES: no file $src" >&2; exit 2; }
  cp "$src" v_$name.cu
  ( nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xptxas -v -o v_$name v_$name.cu > $R/build_v_$name.txt 2>&1 ) &
done
wait
ls -la gl90 gl75 cublas_sgemm v_* > $R/builds.txt 2>&1
# Timing: lesson and cuBLAS interleaved, ROUNDS pairs per size.
for n in $SIZES; do
  for r in $(seq 1 $ROUNDS); do
    ./gl90 --csv -n $n > $R/lesson_n${n}_r$r.csv 2> $R/lesson_n${n}_r$r.err; echo "rc=$?" >> $R/lesson_n${n}_r$r.err
    ./cublas_sgemm -n $n > $R/cublas_n${n}_r$r.csv 2>&1
    for v in $VARIANTS $VFILES; do
      name=${v%%=*}
      [[ " $VSIZES " == *" $n "* ]] && { ./v_$name --csv -n $n > $R/v_${name}_n${n}_r$r.csv 2> $R/v_${name}_n${n}_r$r.err; echo "rc=$?" >> $R/v_${name}_n${n}_r$r.err; }
    done
  done
done
# The Run: lines (native and sm_75 PTX-JIT builds): the sm_75 build's result lines against the
# native build's, and a repeat of the default run (the same digits).
res() { grep -E "check:|split:|interior:|wide:|at these sizes|rtol|Problem|changes:" "$1"; }
i=0
while read -r args; do
  i=$((i+1))
  ./gl90 $args > $R/run_$i.txt 2>&1; echo "rc=$?" >> $R/run_$i.txt
  ./gl75 $args > $R/run75_$i.txt 2>&1; echo "rc=$?" >> $R/run75_$i.txt
  diff <(res $R/run_$i.txt) <(res $R/run75_$i.txt) >> $R/sm75_compare.txt 2>&1 &&
    echo "sm_75 run $i ($args): same result lines" >> $R/sm75_compare.txt
done < <(grep '^// Run:' gemm_ladder.cu | sed 's|^// Run: *./gemm_ladder *||')
./gl90 > $R/run_default2.txt 2>&1; diff <(res $R/run_1.txt) <(res $R/run_default2.txt) > $R/repeat_compare.txt 2>&1 && echo "repeat: same result lines" >> $R/repeat_compare.txt
# compute-sanitizer on the Sanitize: line.
SAN=$(grep -m1 '^// Sanitize:' gemm_ladder.cu | sed 's|^// Sanitize: *./gemm_ladder||')
for tool in ${SANITIZERS:-memcheck racecheck}; do
  timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 ./gl90 $SAN > $R/san_$tool.txt 2>&1; echo "rc=$?" >> $R/san_$tool.txt
done
# ncu: issue slots, shared-memory wavefronts and bank conflicts, registers, occupancy.
if [ "$NCU" = 1 ]; then
  M="smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warps_issue_stalled_barrier_per_warp_active.pct,smsp__warps_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warps_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warps_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warps_issue_stalled_not_selected_per_warp_active.pct,smsp__warps_issue_stalled_wait_per_warp_active.pct,smsp__warps_issue_stalled_dispatch_stall_per_warp_active.pct,smsp__warps_issue_stalled_selected_per_warp_active.pct,gpu__time_duration.sum,launch__grid_size,launch__waves_per_multiprocessor"
  for n in ${NCU_SIZES:-4096 1024}; do  # -iters 1: each kernel 5 launches (check, 3 warm-ups, 1 timed)
    timeout 200 ncu --clock-control none -k regex:"${NCU_KERNELS:-^(gemm|reduce)}" --launch-skip 0 --metrics $M --csv ./gl90 -n $n -iters 1 > $R/ncu_n$n.csv 2> $R/ncu_n$n.err
    echo "rc=$?" >> $R/ncu_n$n.err
  done
  for k in ${NCU_SECTIONS:-gemmDoubleBuffered gemmInteriorLoads}; do  # stall reasons, one launch each
    timeout 120 ncu --clock-control none -k $k -c 1 --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis ./gl90 -n 4096 -iters 1 > $R/ncu_sections_$k.txt 2>&1
  done
fi
# Instruction mix per kernel from the SASS (cuobjdump is on the device image).
cuobjdump -sass gl90 > sass.txt 2>/dev/null && python3 - sass.txt > $R/sass_mix.txt <<'PY'
import re, sys, collections
fn, mix = None, collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m: fn = m.group(1); continue
    m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?", line)
    if fn and m: mix[fn][m.group(2) + (m.group(3) or "")] += 1
for fn, c in mix.items():
    if "gemm" in fn: print(fn, sum(c.values()), dict(c.most_common(14)))
PY
cd $R && tar czf $OUT/gemm_ladder.tgz . && cd $W
# Summary: median ratio per step and size (lesson median of rounds / cuBLAS median of rounds).
python3 "$root/scripts/bench/gemm_ladder_summary.py" "$R" "$SIZES" > $OUT/summary.txt
cat $OUT/summary.txt
for f in $R/run_[0-9]*.txt $R/san_memcheck.txt $R/san_racecheck.txt $R/sm75_compare.txt $R/repeat_compare.txt; do echo "== $f"; tail -3 $f; done
grep -h "GATE\|FAIL" $R/*.err $R/run_*.txt | head
