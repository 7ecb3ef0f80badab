#!/usr/bin/env bash
# One device call for scripts/bench/gemm_probe.cu: builds it for sm_90
# (-lineinfo, ptxas -v into build.txt), checks and times its kernels against
# cuBLAS SGEMM (FP32) at SIZES, ROUNDS interleaved rounds (probe.txt), then, if
# NCU=1, one ncu pass over the cuBLAS kernel and every probe kernel at 4096
# (check launches only: -rounds 0) into ncu.csv. Every step has a timeout, so the
# call cannot hang; expected total ~1-2 min, worst case < 10 min.
# Usage: OUT=/tmp/probe_out bash scripts/bench/gemm_probe.sh
#        (SIZES=1024,2048,4096,8192 ROUNDS=3 NCU=1 from the environment)
# Output: $OUT/build.txt, $OUT/probe.txt, $OUT/ncu.csv. Exit: the probe's status
# (0 all checks passed), or 3 if the build failed.
set -u
OUT=${OUT:-/tmp/probe_out}; SIZES=${SIZES:-1024,2048,4096,8192}; ROUNDS=${ROUNDS:-3}; NCU=${NCU:-1}
export PATH=$PATH:/usr/local/cuda/bin
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
W=$(mktemp -d)

# Build (the probe is one file; ~10 s).
timeout 240 nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xptxas -v -o "$W/probe" \
  "$root/scripts/bench/gemm_probe.cu" -lcublas > "$OUT/build.txt" 2>&1
echo "nvcc rc=$?" >> "$OUT/build.txt"
if [ ! -x "$W/probe" ]; then
  echo "BUILD FAILED"; tail -20 "$OUT/build.txt"; exit 3
fi

# Check + time. The GPU's state first, so clocks/power/temperature are on record.
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv 2>&1
  echo "== probe -sizes $SIZES -rounds $ROUNDS"; } > "$OUT/probe.txt"
timeout 300 "$W/probe" -sizes "$SIZES" -rounds "$ROUNDS" >> "$OUT/probe.txt" 2>&1
rc=$?
echo "probe rc=$rc" >> "$OUT/probe.txt"

# ncu: issue-slot use, FMA pipe, instructions, shared bank conflicts, registers,
# time. -rounds 0 makes every kernel run exactly once (its check launch), after
# cuBLAS's reference launch: so -c 20 covers cuBLAS plus up to 19 probe kernels.
if [ "$NCU" = 1 ]; then
  M=smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,launch__registers_per_thread,gpu__time_duration.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
  echo "== ncu (app output below; report in ncu.csv)" >> "$OUT/probe.txt"
  timeout 150 ncu --clock-control none -k regex:'[Gg]emm' -c 20 --print-kernel-base demangled \
    --metrics "$M" --csv --log-file "$OUT/ncu.csv" "$W/probe" -sizes 4096 -rounds 0 >> "$OUT/probe.txt" 2>&1
  echo "ncu rc=$?" >> "$OUT/probe.txt"
  # Stall reasons and scheduler statistics of one kernel (STALL_ONLY: a config name).
  for cfg in ${STALL_ONLY:-}; do
    timeout 100 ncu --clock-control none -k regex:'probeGemm' -c 1 --section WarpStateStats \
      --section SchedulerStats --section ComputeWorkloadAnalysis "$W/probe" -sizes 4096 -rounds 0 \
      -only "$cfg" >> "$OUT/stalls.txt" 2>&1
  done
  # Full set with per-instruction stall samples for FULL_ONLY configs (one tarball).
  for cfg in ${FULL_ONLY:-}; do
    timeout 150 ncu --clock-control none -k regex:'probeGemm' -c 1 --set full --import-source no \
      -o "$W/full_$cfg" "$W/probe" -sizes 4096 -rounds 0 -only "$cfg" > "$W/full_$cfg.log" 2>&1
    ncu -i "$W/full_$cfg.ncu-rep" --page details --print-details all > "$W/full_$cfg.details.txt" 2>&1
    ncu -i "$W/full_$cfg.ncu-rep" --page raw --csv > "$W/full_$cfg.raw.csv" 2>&1
    ncu -i "$W/full_$cfg.ncu-rep" --page source --csv --print-source sass > "$W/full_$cfg.source.csv" 2>&1
  done
  [ -n "${FULL_ONLY:-}" ] && (cd "$W" && tar czf "$OUT/full.tgz" full_*.txt full_*.csv full_*.log)
fi
# SASS instruction mix per kernel (cuobjdump is on the device image), into build.txt.
{ echo "== SASS mix (static count per kernel)"
  cuobjdump -sass "$W/probe" 2>&1 | python3 -c '
import re, sys, collections
fn, mix = None, collections.defaultdict(collections.Counter)
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m: fn = m.group(1); continue
    m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?", line)
    if fn and m: mix[fn][m.group(2) + (m.group(3) or "")] += 1
for fn, c in mix.items(): print(fn, sum(c.values()), dict(c.most_common(12)))
'; } >> "$OUT/build.txt" 2>&1
rm -rf "$W"

# What to read first: ptxas summary, the tables, any failure, an ncu pivot.
echo "== ptxas (sm_90): kernel, spill store bytes, registers"
awk '/Compiling entry/ {k=$0; sub(/.*probeGemm[A-Z]?ILi/,"",k); sub(/EEvPK.*/,"",k); gsub(/EL[ib]/,"x",k)}
     /spill stores/ {s=$5} /Used [0-9]+ registers/ {print k, "spill=" s, "regs=" $5}' "$OUT/build.txt"
echo "== probe"
grep -v "^time,\|^check,.*PASS$\|^csv:\|^summary," "$OUT/probe.txt" | tail -100
if [ "$NCU" = 1 ] && [ -s "$OUT/ncu.csv" ]; then
  echo "== ncu at 4096 (pivot of ncu.csv)"
  python3 - "$OUT/ncu.csv" <<'PY' || tail -5 "$OUT/ncu.csv"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
hdr, rows = rows[0], rows[1:]
ki, mi, vi, ii = hdr.index("Kernel Name"), hdr.index("Metric Name"), hdr.index("Metric Value"), hdr.index("ID")
short = {"smsp__issue_active.avg.pct_of_peak_sustained_active": "issue%",
         "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "fma%",
         "sm__inst_executed.sum": "inst", "launch__registers_per_thread": "regs",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "ld_confl",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "st_confl",
         "gpu__time_duration.sum": "time"}
tab = collections.OrderedDict()
for r in rows:
    name = r[ki].replace("void ", "").split("(")[0].replace("probeGemm", "p").replace("f32f32_f32f32_f32_", "")[:70]
    mn = r[mi]
    if mn.startswith("smsp__average_warps_issue_stalled_"):  # warps stalled per issued instruction
        mn = "st_" + mn[len("smsp__average_warps_issue_stalled_"):].split("_per_issue")[0][:8]
        short.setdefault(mn, mn)
    tab.setdefault((int(r[ii]), name), {})[short.get(mn, mn)] = r[vi].replace(",", "")
cols = list(short.values())
print("%-40s" % "kernel" + "".join("%11s" % c[:10] for c in cols))
for (i, name), m in tab.items():
    print("%-40s" % name[:40] + "".join("%11s" % m.get(c, "-")[:10] for c in cols))
PY
fi
exit $rc
