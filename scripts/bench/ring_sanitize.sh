#!/usr/bin/env bash
# compute-sanitizer on the steps 15-16 instances that the lesson's one Sanitize: line does not
# launch (it launches the edge instance with 16-byte B copies and a split K): the 8 x 16 wide
# tile inside C and at edges, step 15's instance without an edge path, and the one for
# N % 4 != 0. Each run is `-from 15` (only steps 15-16): the checked launch and one timed launch
# a step, no warm-ups. Usage:
#   scripts/bench/ring_sanitize.sh BINARY [OUT_FILE]   (BINARY: a build of lessons/gemm_ladder.cu)
# Prints each run's tool, arguments, instance lines and the sanitizer's summary line.
set -u
bin=${1:?usage: ring_sanitize.sh BINARY [OUT_FILE]}; out=${2:-/dev/stdout}
[ -x "$bin" ] || { echo "ring_sanitize.sh: $bin is not an executable" >&2; exit 2; }
runs=("-m 2048 -n 4096 -k 16"   # step 16: 256 wide tiles, all inside C
      "-m 2000 -n 4000 -k 32"   # step 16: 225 wide tiles without bounds tests, the rest at edges
      "-n 1024 -k 16"           # step 15: every tile inside C (no edge instance)
      "-m 130 -n 130 -k 40")    # steps 15-16: N % 4 != 0, B 4 bytes a copy
{
  for a in "${runs[@]}"; do
    for tool in memcheck racecheck initcheck synccheck; do
      opts=(); [ "$tool" = memcheck ] && opts=(--padding 65536)
      log=$(timeout 120 compute-sanitizer --tool "$tool" "${opts[@]}" "$bin" -from 15 $a -iters 1 -warmups 0 2>&1)
      echo "== $tool -from 15 $a (exit $?)"
      grep -E "^  (tiles|wide):|SUMMARY" <<<"$log"
    done
  done
} > "$out"
