#!/usr/bin/env python3
"""How long racecheck takes on a lesson's Sanitize: run, whole and one kernel's first launch at a
time, and what each finds; with --mutant LESSON:NAME, the first launches of a catalogue mutant too.

  python3 scripts/bench/racecheck_launches.py gemm_ladder quant_matmul \
      --mutant gemm_ladder:async-b-not-awaited --mutant project_template:missing-barrier

Needs a GPU and compute-sanitizer. Builds each program for the GPU at hand (-arch=native) in a scratch
folder and prints one line per compute-sanitizer run: seconds, findings, filter.

What it found on the H200 (2026-12-02, compute-sanitizer 2025.3.1): `--kernel-name kns=NAME` (the
plain name or the mangled one) and `kne=MANGLED` select a kernel; `--launch-count 1` beside such a
filter did not check that kernel's first launch where another kernel had launched before it (the
project_template missing-barrier mutant: 5 hazards with the filter alone, 0 with --launch-count 1, 5
with --launch-skip 1 --launch-count 1, its racy kernel being the second launch), so the count runs over
every launch, and verify does not use it to check one launch a kernel. Racecheck of gemm_ladder's
async-b-not-awaited mutant took 48.3 s on every kernel and 7.7 s with the one kernel its edit
changes (kne=), 20 hazards both ways; of the lesson, 57.3 s; of quant_matmul, 17.2 s."""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from suitelib import catalogue, commonkernels, model, sanitize  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


SYMBOL = re.compile(rb"(?<=\x00)_Z[\w$]+(?=\x00)")  # a whole C string: not PTX text's _param_0 names


def source_kernels(text):
    """Every __global__ function a source defines or declares, in order, once each."""
    names = []
    for n in sanitize.KERNEL.findall(sanitize.LAUNCH_BOUNDS.sub("", text or "")):
        if n not in names:
            names.append(n)
    return names


def kernel_symbols(binary, names):
    """The mangled names a built program registers its kernels under, every instance of a template,
    in the order names gives them; None where the binary cannot be read or a name has no symbol (a
    kernel in a namespace, extern "C", or never compiled): the caller then runs the tool unfiltered.
    A kernel's host stub and its registration carry its mangled name, _Z<length><name>..., as a
    whole string; a host function with the kernel as a template argument, only inside its own."""
    try:
        data = Path(binary).read_bytes()
    except OSError:
        return None
    found = set(m.group(0).decode() for m in SYMBOL.finditer(data))
    symbols = []
    for name in names:
        mine = sorted(s for s in found if s.startswith(f"_Z{len(name)}{name}"))
        if not mine:
            return None
        symbols += mine
    return symbols


def first_launch_findings(binary, args, tool, options, symbols, stop_at_finding=False):
    """(findings, log) of tool on the first launch of each kernel symbol, one run each (the count
    is compute-sanitizer's: --launch-count counts only the launches its --kernel-name filter
    matches); (None, why) where a run gives no summary. stop_at_finding: end at the first kernel
    with findings (a mutant is killed by any)."""
    total, logs = 0, []
    for symbol in symbols:
        findings, log = catalogue.sanitizer_findings(
            binary, args, tool, list(options) + ["--kernel-name", f"kns={symbol}", "--launch-count", "1"])
        if findings is None:
            return None, f"{symbol}: {log}"
        total, logs = total + findings, logs + ([f"{symbol}:\n{log}"] if log else [])
        if findings and stop_at_finding:
            break
    return total, "\n".join(logs)


def build(text, name, tmp):
    src = Path(tmp) / f"{name}.cu"
    src.write_text(text, encoding="utf-8")
    out = Path(tmp) / name
    cmd = ["nvcc", "-std=c++17", "-O3", "-arch=native", "-lineinfo", "-o", str(out), str(src)]
    subprocess.run(cmd, check=True)
    return out


def timed(label, fn, *args):
    start = time.monotonic()
    findings, log = fn(*args)
    print(f"{time.monotonic() - start:7.1f} s  {findings!s:>5} findings  {label}"
          + (f"  ({log.splitlines()[-1][:120]})" if findings is None and log else ""), flush=True)
    return findings


def measure(prog, text, binary, whole=True):
    options, args = prog.sanitize_spec()
    skip = commonkernels.skip_options(commonkernels.racecheck_excludes(text))
    names = [n for n in source_kernels(text) if n not in commonkernels.racecheck_excludes(text)]
    symbols = kernel_symbols(binary, names)
    print(f"{prog.name}: {len(symbols or [])} kernel symbols from {len(names)} kernels", flush=True)
    if whole:
        timed("whole run", catalogue.sanitizer_findings, binary, args, "racecheck", list(options) + skip)
    timed("filter matching nothing", first_launch_findings, binary, args, "racecheck", options,
          ["nothingmatchesthis"])
    total = 0
    for symbol in symbols or []:
        total += timed(f"first launch of {symbol}", first_launch_findings, binary, args, "racecheck",
                       options, [symbol]) or 0
    print(f"{prog.name}: first launches: {total} findings in all", flush=True)


def probe(prog, mutant, kernel, tmp, i):
    """Which --kernel-name forms select a kernel: racecheck's findings on the mutant with each."""
    text = mutant.apply(prog.text)
    binary = build(text, f"probe{i}", tmp)
    options, args = prog.sanitize_spec()
    base = kernel.split("<")[0]
    mangled = kernel_symbols(binary, [base]) or []
    print(f"probe {prog.name}:{mutant.name}: {kernel}: symbols {mangled}", flush=True)
    forms = [[], ["--kernel-name", f"kns={base}"], ["--kernel-name", f"kns={base}", "--launch-count", "1"],
             ["--kernel-name", f"kns={kernel}"], ["--kernel-name", f"kns={kernel}", "--launch-count", "1"],
             ["--kernel-name", f"kns={base}", "--launch-skip", "1", "--launch-count", "1"],
             ["--kernel-name", f"kernel_substring={base}"], ["--kernel-name", "kns=nothingmatchesthis"]]
    for symbol in mangled:
        forms += [["--kernel-name", f"kns={symbol}"], ["--kernel-name", f"kne={symbol}"],
                  ["--kernel-name-base", "mangled", "--kernel-name", f"kns={symbol}"],
                  ["--kernel-name-base", "mangled", "--kernel-name", f"kns={symbol}", "--launch-count", "1"]]
    for form in forms:
        timed(" ".join(form) or "whole run", catalogue.sanitizer_findings, binary, args, "racecheck",
              list(options) + form)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lessons", nargs="*")
    ap.add_argument("--mutant", action="append", default=[])
    ap.add_argument("--probe", action="append", default=[], metavar="LESSON:MUTANT:KERNEL",
                    help="racecheck the mutant with each way of naming KERNEL to --kernel-name")
    a = ap.parse_args()
    progs = {p.name: p for p in model.programs(ROOT) if not p.is_starter}
    cats = catalogue.load(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate(a.probe):
            lesson, name, kernel = spec.split(":")
            probe(progs[lesson], next(m for m in cats[lesson].mutants if m.name == name), kernel, tmp, i)
        for name in a.lessons:
            measure(progs[name], progs[name].text, build(progs[name].text, name, tmp))
        for i, spec in enumerate(a.mutant):
            lesson, _, name = spec.partition(":")
            mutant = next(m for m in cats[lesson].mutants if m.name == name)
            text = mutant.apply(progs[lesson].text)
            print(f"mutant {spec}:", flush=True)
            measure(progs[lesson], text, build(text, f"mutant{i}", tmp), whole=False)


if __name__ == "__main__":
    main()
