"""compute-sanitizer on a student's program: the checks `exercise check` runs on a GPU after every
recorded run passed, and that the catalogue's attempts get too (exercises.run_attempt), so a wrong
attempt that no recorded output shows is still caught where it reads or races.

- memcheck with padding after every allocation: without it, a read past the end of one buffer
  lands inside the next allocation and memcheck reports nothing (gemm_ladder's panel loads without
  their edge guards: 0 errors unpadded, "Invalid __global__ read" with --padding 65536, in a
  diagnostic run on the H200 on 2026-12-01 that no record holds);
- racecheck where the exercise has a barrier (__syncthreads in a solution or exercise region, the
  student's or the lesson's): a missing or misplaced barrier may print right numbers on one GPU.
Both run on the lesson's Sanitize: line (its compute-sanitizer options and arguments), at the same
time. A finding, or a tool that gives no verdict, rejects the attempt. Where compute-sanitizer is
absent the verdict says which checks were not run.
"""

import concurrent.futures
import re
import shutil

from . import catalogue, commonkernels
from .model import parse_regions

PADDING_BYTES = catalogue.PADDING_BYTES  # memcheck's --padding (catalogue: the mutants' runs use it too)
BARRIER = re.compile(r"\b__syncthreads\w*\s*\(")
LOG_LINE = re.compile(r"^=+ (\S.*)$")  # '========= Invalid __global__ read ...'; details are indented


def has_barrier(*texts, region=None):
    """Does a solution or exercise region (the one named region, where given) of any of these
    sources call __syncthreads?"""
    for text in texts:
        regions, _ = parse_regions("", text or "")
        if any(r.kind in ("solution", "exercise") and region in (None, r.name) and BARRIER.search(r.body)
               for r in regions):
            return True
    return False


def checks(*texts, region=None):
    """[(tool, extra options, what it looks for)] for an exercise whose sources are texts."""
    found = [("memcheck", ["--padding", str(PADDING_BYTES)],
              f"memcheck with {PADDING_BYTES // 1024} KiB of padding after every allocation")]
    if has_barrier(*texts, region=region):
        found.append(("racecheck", [], "racecheck (the exercise has a __syncthreads barrier)"))
    return found


def sanitize_command(prog):
    options, args = prog.sanitize_spec()
    return " ".join(["./" + prog.name] + args), options, args


def describe(prog, *texts):
    """The sanitizer checks in words, for the verdicts that cannot run them (a pane; no sanitizer)."""
    command, _, _ = sanitize_command(prog)
    run = "Sanitize: run" if prog.header()["Sanitize"] else "first Run: (it has no Sanitize: line)"
    return " and ".join(what for _, _, what in checks(*texts)) + f" on the lesson's {run} {command}"


KERNEL = re.compile(r"__global__[^(]*?(\w+)\s*\(", re.S)
LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)")


def region_kernels(text, kinds=("solution", "exercise"), region=None):
    """The kernels a source's solution or exercise regions define or lie in, or [] where one region
    does neither (host code may launch any kernel differently: then every kernel is checked). Outside
    those regions a starter, and each catalogue attempt, is its lesson byte for byte: its other kernels
    and the host code launching them are the lesson's, which the lesson's own sanitizer runs cover."""
    regions, _ = parse_regions("", text or "")
    lines = (text or "").splitlines()
    names = []
    for r in (r for r in regions if r.kind in kinds and region in (None, r.name)):
        inside = KERNEL.findall(LAUNCH_BOUNDS.sub("", r.body))
        if not inside:
            before = "\n".join(lines[:r.open_line - 1])
            heads = list(KERNEL.finditer(LAUNCH_BOUNDS.sub(lambda m: " " * len(m.group(0)), before)))
            last = heads[-1] if heads else None
            if last is None or not still_open(before, last.end()):
                return []  # the region is host code, or a device function kernels call: check them all
            inside = [last.group(1)]
        names += [n for n in inside if n not in names]
    return names


def still_open(text, start):
    """Is the body that opens at the first '{' after start still open at the end of text?"""
    depth, opened = 0, False
    for ch in text[start:]:
        if ch == "{":
            depth, opened = depth + 1, True
        elif ch == "}":
            depth -= 1
            if opened and depth == 0:
                return False
    return opened and depth > 0


def filtered_findings(binary, args, tool, options, only=()):
    """catalogue.sanitizer_findings, instrumenting only the kernels named in only (one run each, the
    findings summed); every kernel where only is empty, or where a filtered run gives no summary."""
    total, logs = 0, []
    for name in only:
        findings, log = catalogue.sanitizer_findings(binary, args, tool, list(options) + ["--kernel-name", f"kns={name}"])
        if findings is None:
            break
        total, logs = total + findings, logs + ([log] if log else [])
    else:
        if only:
            return total, "\n".join(logs)
    return catalogue.sanitizer_findings(binary, args, tool, options)


def available():
    return shutil.which("compute-sanitizer") is not None


def first_finding(log):
    """The first line of a sanitizer log that names a finding (else its last line)."""
    for line in log.splitlines():
        m = LOG_LINE.match(line)
        if m and "COMPUTE-SANITIZER" not in m.group(1) and "SUMMARY" not in m.group(1):
            return m.group(1).strip()[:200]
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "(no output)"


def judge(binary, prog, *texts, only=(), region=None):
    """(ok, lines) of the sanitizer checks of a built program: ok True when every check reported
    nothing, False on a finding or a check without a verdict, None where compute-sanitizer is absent.
    only: the kernels the tools instrument, region: the one region whose barrier asks for racecheck
    (verify's catalogue attempts: their region's kernels, since the rest of an attempt is its
    lesson, byte for byte; every kernel and region by default, as for a student's own file)."""
    command, options, args = sanitize_command(prog)
    todo = checks(*texts, region=region)
    # A common kernel every text carries as the lesson does is racechecked by verify's probe.
    common = set(commonkernels.racecheck_excludes(prog.text))
    for text in texts:
        common &= set(commonkernels.racecheck_excludes(text, canonical=prog.text))
    skip = commonkernels.skip_options(sorted(common))
    if not available():
        return None, ["sanitizer: not run here (compute-sanitizer is not on PATH): "
                      + " and ".join(what for _, _, what in todo) + f" on {command}"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(todo)) as pool:
        results = list(pool.map(lambda c: filtered_findings(
            binary, args, c[0], list(options) + c[1] + (skip if c[0] == "racecheck" else []), only), todo))
    ok, lines = True, []
    for (tool, _, what), (findings, log) in zip(todo, results):
        if findings == 0:
            lines.append(f"{tool}: passed ({what}, on {command})")
        elif findings is None:
            ok = False
            lines.append(f"{tool}: FAILED: no verdict on {command}: {first_finding(log)}")
        else:
            ok = False
            lines.append(f"{tool}: FAILED: {findings} finding(s) on {command} ({what}): {first_finding(log)}")
    return ok, lines
