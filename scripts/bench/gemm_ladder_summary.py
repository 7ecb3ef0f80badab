# Summary of scripts/bench/gemm_ladder.sh: per size, cuBLAS median GFLOP/s, each step's median
# over the rounds and its ratio to cuBLAS, then each variant's steps the same way. Usage: DIR "SIZES".
import csv, glob, statistics, sys, os
R, sizes = sys.argv[1], sys.argv[2].split()
def rows(f): return [r for r in csv.DictReader(l for l in open(f) if not l.startswith('#'))]
for n in sizes:
    cub=[float(r['gflops']) for f in sorted(glob.glob(f"{R}/cublas_n{n}_r*.csv")) for r in rows(f)]
    steps={}
    for f in sorted(glob.glob(f"{R}/lesson_n{n}_r*.csv")):
        for r in rows(f):
            if r["gflops"]: steps.setdefault(r["kernel"], []).append(float(r["gflops"]))
    cm=statistics.median(cub) if cub else float('nan')
    print(f"n={n} cublas GFLOP/s median {cm:.0f} of {cub}")
    for k,v in steps.items():
        print(f"  {k:16s} {statistics.median(v):9.0f}  ratio {statistics.median(v)/cm:.3f}  spread {min(v):.0f}-{max(v):.0f}")
    variants={}
    for f in sorted(glob.glob(f"{R}/v_*_n{n}_r*.csv")):
        name=os.path.basename(f)[2:].rsplit(f"_n{n}_r",1)[0]
        for r in rows(f):
            if r["gflops"]: variants.setdefault((name, r["kernel"]), []).append(float(r["gflops"]))
    for (name,k),v in variants.items():
        print(f"  variant {name:14s} {k:16s} {statistics.median(v):9.0f}  ratio {statistics.median(v)/cm:.3f}  spread {min(v):.0f}-{max(v):.0f} ({len(v)} rounds)")
