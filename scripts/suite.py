#!/usr/bin/env python3
"""suite: the CUDA lesson suite's one tool (Python 3 standard library only).

Subcommands (each a small function, cmd_*):
  build                 configure and build every lesson, starter and exercise
  run ID                run one recorded program run and diff it against its transcript
  bless ID... | --all   record transcripts (the only subcommand that writes expected/)
  check [--only NAME]   static checks: markers, common copies, starter drift, Build lines,
                        transcript freshness, the GPU verification record
  verify                (GPU) prove every program: transcripts, sanitizers, repeats,
                        sm_75 PTX build, Compiler Explorer budget; writes verify.json/.md
  mutate [NAME...]      (GPU) run the mutation catalogue; record killed/survived
  plot roofline|sweep CSV --out PNG   charts from report_data / sweep CSV
  snippet FILE NAME     print one snippet (dedented, markers stripped)
  ce-link NAME          print a Compiler Explorer link for a lesson or starter
  sync                  regenerate the generated parts of README.md and lessons/README.md
  exercise start|check NAME   the student's loop (exercises/ is never deleted)
  list-runs, list-checks, cli-case   used by CMake/CTest

Exit codes (one table, see EXIT_*): 0 success, 1 a check or run failed,
2 bad usage, 77 no GPU (skipped).
"""

import argparse
import base64
import concurrent.futures
import csv
import datetime
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from pathlib import Path

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_SKIP = 77

DEFAULT_GPU = "h200"
# Compiler Explorer's limits with headroom (DESIGN.md, issue 7): one place only.
BUDGET = {"wall_s_1core": 5.0, "peak_rss_mib": 200.0, "output_bytes": 32768}
REPEAT_RUNS = 10
SANITIZERS = ("memcheck", "racecheck", "initcheck", "synccheck")
RUN_TIMEOUT_S = 300


class SuiteError(Exception):
    """An error with the exit code it maps to."""
    code = EXIT_FAIL


class UsageError(SuiteError):
    code = EXIT_USAGE


class Skipped(SuiteError):
    code = EXIT_SKIP


# ---------------------------------------------------------------------------
# Transcript masking: values that change from run to run carry a unit, and one
# table of rules replaces them by named placeholders. Everything else is exact.
# Leading blanks are swallowed so right-aligned columns of different widths
# compare equal.
NUM = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
PLACEHOLDER_RULES = [
    (re.compile(r"[ \t]*\b" + NUM + r" ms\b"), " [MS] ms"),
    (re.compile(r"[ \t]*\b" + NUM + r" us\b"), " [US] us"),
    (re.compile(r"[ \t]*\b" + NUM + r" s \(host clock\)"), " [S] s (host clock)"),
    (re.compile(r"[ \t]*\b" + NUM + r" GFLOP/s\b"), " [GFLOPS] GFLOP/s"),
    (re.compile(r"[ \t]*\b" + NUM + r" TFLOP/s\b"), " [TFLOPS] TFLOP/s"),
    (re.compile(r"[ \t]*\b" + NUM + r" GB/s\b"), " [GBS] GB/s"),
    (re.compile(r"[ \t]*\b" + NUM + r" TB/s\b"), " [TBS] TB/s"),
    (re.compile(r"[ \t]*\b\d+\.\d+x(?![\w.])"), " [SPEEDUP]x"),
    (re.compile(r"[ \t]*\b" + NUM + r"% of measured"), " [PCT]% of measured"),
]
# CSV columns whose values are timings or derived from timings.
VOLATILE_CSV_COLUMNS = {
    "ms", "median_ms", "min_ms", "max_ms", "mean_ms", "gflops", "tflops", "gbs",
    "bw_gbs", "speedup", "rank", "pct_of_peak", "pct_of_roof", "spread_pct", "tie",
}
# Values that depend on how the binary was built (ptxas allocates registers
# differently for sm_75 PTX JIT-compiled on a newer GPU than for native code):
# exact in a transcript, masked only when a PTX build is compared with a native one.
BUILD_DEPENDENT_RULES = [
    (re.compile(r"\b\d+ regs\b"), "[REGS] regs"),
    (re.compile(r"\b\d+ blocks/SM\b"), "[BLOCKS] blocks/SM"),
    (re.compile(r"\b" + NUM + r"% occupancy\b"), "[OCC]% occupancy"),
    (re.compile(r"limited by [a-z][a-z -]*[a-z]"), "limited by [LIMIT]"),
]
BUILD_DEPENDENT_CSV_COLUMNS = {"regs", "blocks_per_sm", "occupancy", "limited_by"}
CSV_HEADER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*){2,}$")


def mask_line(line, across_builds=False):
    rules = PLACEHOLDER_RULES + (BUILD_DEPENDENT_RULES if across_builds else [])
    for pattern, placeholder in rules:
        line = pattern.sub(placeholder, line)
    return line


def mask(text, across_builds=False):
    """Apply the placeholder rules (and the CSV column rule) to program output.

    across_builds also masks what legitimately differs between two builds of one
    source (register counts and the occupancy they imply)."""
    volatile = VOLATILE_CSV_COLUMNS | (BUILD_DEPENDENT_CSV_COLUMNS if across_builds else set())
    out = []
    header = None
    for line in text.splitlines():
        if CSV_HEADER.match(line):
            cols = line.split(",")
            header = cols if volatile.intersection(cols) else None
            out.append(line)
            continue
        if header is not None and line.count(",") == len(header) - 1 and not line.startswith("#"):
            cells = line.split(",")
            cells = ["[VAR]" if name in volatile else cell for name, cell in zip(header, cells)]
            out.append(",".join(cells))
            continue
        if not line.startswith("#"):
            header = None
        out.append(mask_line(line, across_builds))
    return "\n".join(out) + ("\n" if out else "")


# ---------------------------------------------------------------------------
# Source files: header lines and markers.
MARKER_KINDS = ("common", "solution", "exercise", "snippet")
OPEN_RE = re.compile(r"^\s*// (common|solution|exercise|snippet): ([A-Za-z0-9_.-]+)\s*$")
CLOSE_RE = re.compile(r"^\s*// end (common|solution|exercise|snippet)(?:: ([A-Za-z0-9_.-]+))?\s*$")
NEAR_MARKER_RE = re.compile(r"^\s*//\s*(end\s*)?(common|solution|exercise|snippet)\s*:?\s*\S*\s*$")
HEADER_RE = re.compile(r"^// (Build|Run|Sanitize):\s*(.*?)\s*$")


class Region:
    def __init__(self, kind, name, open_line, close_line, body):
        self.kind, self.name = kind, name
        self.open_line, self.close_line = open_line, close_line  # 1-based
        self.body = body  # the lines between the markers, newlines kept

    def __repr__(self):
        return f"Region({self.kind}:{self.name} {self.open_line}-{self.close_line})"


def parse_regions(rel, text):
    """Return (regions, errors). Errors are 'file:line: message' strings."""
    lines = text.splitlines(keepends=True)
    regions, errors, open_ = [], [], {}
    seen = {}
    for no, line in enumerate(lines, 1):
        stripped = line.rstrip("\n")
        m_open, m_close = OPEN_RE.match(stripped), CLOSE_RE.match(stripped)
        if m_open:
            kind, name = m_open.groups()
            if kind in open_:
                errors.append(f"{rel}:{no}: malformed: '{kind}: {name}' opened inside "
                              f"'{kind}: {open_[kind][0]}' (line {open_[kind][1]}); {kind} markers do not nest")
                continue
            if (kind, name) in seen:
                errors.append(f"{rel}:{no}: malformed: duplicate {kind} '{name}' (first at line {seen[(kind, name)]})")
            seen[(kind, name)] = no
            open_[kind] = (name, no)
        elif m_close:
            kind, name = m_close.groups()
            if kind not in open_:
                errors.append(f"{rel}:{no}: malformed: 'end {kind}' without an open {kind} marker")
                continue
            open_name, open_no = open_.pop(kind)
            if kind == "common" and name != open_name:
                errors.append(f"{rel}:{no}: malformed: 'end common: {name}' closes 'common: {open_name}' (line {open_no})")
            elif kind != "common" and name is not None:
                errors.append(f"{rel}:{no}: malformed: 'end {kind}' takes no name")
            regions.append(Region(kind, open_name, open_no, no, "".join(lines[open_no:no - 1])))
        elif NEAR_MARKER_RE.match(stripped):
            errors.append(f"{rel}:{no}: malformed marker (expected '// KIND: NAME' or '// end KIND'): {stripped.strip()}")
    for kind, (name, no) in open_.items():
        errors.append(f"{rel}:{no}: malformed: '{kind}: {name}' is never closed (unterminated)")
    regions.sort(key=lambda r: r.open_line)
    return regions, errors


def parse_header(text):
    """The Build:/Run:/Sanitize: lines of the leading comment block."""
    found = {"Build": [], "Run": [], "Sanitize": []}
    for no, line in enumerate(text.splitlines(), 1):
        if not line.startswith("//"):
            break
        m = HEADER_RE.match(line)
        if m:
            found[m.group(1)].append((no, m.group(2)))
    return found


class Program:
    """A lesson or a starter source file."""

    def __init__(self, root, path):
        self.root, self.path = root, path
        self.rel = path.relative_to(root).as_posix()
        self.name = path.stem
        self.is_starter = path.parent.name == "starter"
        self.target = self.name + ("_starter" if self.is_starter else "")

    @property
    def text(self):
        return self.path.read_text(encoding="utf-8")

    def sha256(self):
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def header(self):
        return parse_header(self.text)

    def runs(self):
        """Recorded runs: every Run: line of a lesson, the first of a starter."""
        lines = self.header()["Run"]
        if self.is_starter:
            lines = lines[:1]
        runs = []
        for index, (no, cmd) in enumerate(lines):
            argv = shlex.split(cmd)
            if not argv or argv[0] != "./" + self.name:
                raise SuiteError(f"{self.rel}:{no}: Run: line must start with ./{self.name}: {cmd}")
            runs.append(Run(self, argv[1:], index))
        return runs

    def sanitize_spec(self):
        """(compute-sanitizer options, program args) from 'Sanitize: [OPTIONS] ./NAME [ARGS]'.

        Options such as '--launch-count 45' let a fixed-size lesson be checked on its
        first (smallest-case) launches while the rest run uninstrumented."""
        lines = self.header()["Sanitize"]
        if not lines:
            runs = self.runs()
            return [], (runs[0].args if runs else [])
        no, text = lines[0]
        argv = shlex.split(text)
        program = "./" + self.name
        if program not in argv:
            raise SuiteError(f"{self.rel}:{no}: Sanitize: line must name {program}: {text}")
        k = argv.index(program)
        return argv[:k], argv[k + 1:]


class Run:
    def __init__(self, program, args, index):
        self.program, self.args, self.index = program, args, index
        slug = re.sub(r"[^A-Za-z0-9]+", "_", " ".join(args)).strip("_")
        base = ("starter/" if program.is_starter else "") + program.name
        self.id = base if index == 0 else f"{base}@{slug or index}"

    def command(self):
        return " ".join(["./" + self.program.name] + [shlex.quote(a) for a in self.args])

    def transcript_path(self, gpu):
        return self.program.root / "expected" / gpu / (self.id + ".txt")


def programs(root):
    found = []
    for sub in ("lessons", "starter"):
        found += [Program(root, p) for p in sorted((root / sub).glob("*.cu"))]
    return found


def all_runs(root):
    return [run for prog in programs(root) for run in prog.runs()]


def find_run(root, run_id):
    for run in all_runs(root):
        if run.id == run_id:
            return run
    known = ", ".join(r.id for r in all_runs(root)) or "none"
    raise UsageError(f"unknown run '{run_id}' (known: {known})")


# ---------------------------------------------------------------------------
# Transcripts.
def format_transcript(run, gpu_name, toolkit, result):
    out, err = mask(result["stdout"]), mask(result["stderr"])
    head = [
        "# suite transcript: written by 'scripts/suite.py bless'; never edit by hand",
        f"# command: {run.command()}",
        f"# source: {run.program.rel}",
        f"# source_sha256: {run.program.sha256()}",
        f"# gpu: {gpu_name}",
        f"# toolkit: {toolkit}",
        f"# exit_code: {result['exit_code']}",
    ]
    body = [f"--- stdout: {len(out.splitlines())} lines", out.rstrip("\n"),
            f"--- stderr: {len(err.splitlines())} lines", err.rstrip("\n")]
    body = [b for b in body if b != ""]
    return "\n".join(head + body) + "\n"


def parse_transcript(path):
    """Return dict with header fields, 'stdout', 'stderr'; raise SuiteError if malformed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    info, i = {}, 0
    while i < len(lines) and lines[i].startswith("# "):
        key, _, value = lines[i][2:].partition(": ")
        info[key] = value
        i += 1
    for stream in ("stdout", "stderr"):
        m = re.match(r"^--- " + stream + r": (\d+) lines$", lines[i] if i < len(lines) else "")
        if not m:
            raise SuiteError(f"{path}:{i + 1}: malformed transcript: expected '--- {stream}: N lines'")
        count = int(m.group(1))
        chunk = lines[i + 1:i + 1 + count]
        if len(chunk) != count:
            raise SuiteError(f"{path}: malformed transcript: {stream} is shorter than {count} lines")
        info[stream] = "\n".join(chunk) + ("\n" if chunk else "")
        i += 1 + count
    for key in ("source", "source_sha256", "exit_code", "command"):
        if key not in info:
            raise SuiteError(f"{path}:1: malformed transcript: header lacks '{key}'")
    return info


def compare_with_transcript(expected, result, label):
    """Return a list of human-readable differences (empty when it matches)."""
    problems = []
    if str(result["exit_code"]) != expected["exit_code"]:
        problems.append(f"{label}: exit code {result['exit_code']}, transcript says {expected['exit_code']}")
    for stream in ("stdout", "stderr"):
        got = mask(result[stream])
        if got != expected[stream]:
            diff = difflib.unified_diff(expected[stream].splitlines(), got.splitlines(),
                                        f"transcript {stream}", f"this run's {stream}", lineterm="")
            problems.append(f"{label}: {stream} differs from the transcript:\n" + "\n".join(diff))
    return problems


# ---------------------------------------------------------------------------
# Running programs.
def default_bin_dir(root):
    return root / "build" / "dev" / "bin"


def run_binary(binary, args, timeout=RUN_TIMEOUT_S, prefix=(), pin_cpu=None):
    """Run a program; return stdout, stderr, exit code and resource figures."""
    def pin():
        if pin_cpu is not None:
            os.sched_setaffinity(0, {pin_cpu})
    start = time.monotonic()
    proc = subprocess.Popen(list(prefix) + [str(binary)] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=pin if pin_cpu is not None else None)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise SuiteError(f"{binary.name} {' '.join(args)}: timed out after {timeout} s")
    wall = time.monotonic() - start
    return {"stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "exit_code": proc.returncode, "wall_s": wall, "output_bytes": len(out) + len(err)}


def run_measured(binary, args, cpu):
    """Run pinned to one CPU and read its own rusage (wall, CPU seconds, peak RSS)."""
    r_out, w_out = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.sched_setaffinity(0, {cpu})
            os.dup2(w_out, 1)
            os.dup2(w_out, 2)
            os.execv(str(binary), [str(binary)] + list(args))
        finally:
            os._exit(127)
    os.close(w_out)
    size = 0
    with os.fdopen(r_out, "rb") as pipe:
        for chunk in iter(lambda: pipe.read(65536), b""):
            size += len(chunk)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    return {"exit_code": os.waitstatus_to_exitcode(status), "wall_s_1core": round(wall, 3),
            "cpu_s_1core": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mib": round(usage.ru_maxrss / 1024.0, 1), "output_bytes": size}


def gpu_facts():
    """(name, slug, toolkit) of this machine's GPU, or None without one."""
    try:
        name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                              capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if not name:
        return None
    slug = re.sub(r"[^a-z0-9]+", "", name.lower().replace("nvidia", "").replace("tesla", ""))
    return name, slug or "gpu", nvcc_version()


def nvcc_version():
    try:
        text = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else "unknown"


def binary_for(root, run, bin_dir):
    binary = Path(bin_dir or default_bin_dir(root)) / run.program.target
    if not binary.exists():
        if bin_dir is not None:
            raise SuiteError(f"{binary} does not exist; build it first (scripts/suite.py build)")
        cmd_build_impl(root, [run.program.target])
    return binary


def transcript_gpu(root, gpu, facts):
    """Which expected/<gpu>/ to compare with, with a note when falling back."""
    if gpu:
        return gpu
    if facts and (root / "expected" / facts[1]).is_dir():
        return facts[1]
    if facts:
        print(f"note: no transcripts recorded for {facts[0]}; comparing with {DEFAULT_GPU}'s "
              f"(device facts and timings may differ)", file=sys.stderr)
    return DEFAULT_GPU


# ---------------------------------------------------------------------------
# Subcommands.
def cmd_build_impl(root, targets=()):
    subprocess.run(["cmake", "--preset", "dev"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    cmd = ["cmake", "--build", "--preset", "dev"]
    if targets:
        cmd += ["--target"] + list(targets)
    subprocess.run(cmd, cwd=root, check=True)


def cmd_build(args):
    """Configure and build every lesson, starter and exercise (preset 'dev')."""
    try:
        cmd_build_impl(args.root, args.targets)
    except subprocess.CalledProcessError as exc:
        raise SuiteError(f"build failed: {' '.join(exc.cmd)} exited {exc.returncode}")
    return EXIT_OK


def cmd_run(args):
    """Run one program run and compare it with its transcript."""
    root = args.root
    run = find_run(root, args.id)
    binary = binary_for(root, run, args.bin_dir)
    result = run_binary(binary, run.args)
    sys.stdout.write(result["stdout"])
    sys.stderr.write(result["stderr"])
    if result["exit_code"] == EXIT_SKIP:
        print(f"skipped: {run.id} needs a CUDA GPU (exit 77)", file=sys.stderr)
        return EXIT_SKIP
    gpu = transcript_gpu(root, args.gpu, gpu_facts())
    path = run.transcript_path(gpu)
    if not path.exists():
        raise SuiteError(f"{run.id}: no transcript at {path.relative_to(root)}; record one with "
                         f"'scripts/suite.py bless {run.id}' on a GPU machine")
    expected = parse_transcript(path)
    problems = compare_with_transcript(expected, result, run.id)
    if expected["source_sha256"] != run.program.sha256():
        problems.append(f"{run.id}: transcript {path.relative_to(root)} was recorded from another "
                        f"version of {run.program.rel} (stale); re-record it with bless")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"FAILED: {run.id} does not match {path.relative_to(root)}", file=sys.stderr)
        return EXIT_FAIL
    print(f"ok: {run.id} matches {path.relative_to(root)} (exit {result['exit_code']})", file=sys.stderr)
    return EXIT_OK


def cmd_bless(args):
    """Record transcripts on this machine's GPU (the only subcommand that writes expected/)."""
    root = args.root
    if not args.all and not args.ids:
        raise UsageError("bless: name runs to record, or --all")
    facts = gpu_facts()
    if facts is None:
        raise Skipped("bless: no NVIDIA GPU here (nvidia-smi found none); transcripts come only from real runs")
    runs = all_runs(root) if args.all else [find_run(root, i) for i in args.ids]
    gpu = args.gpu or facts[1]
    for run in runs:
        binary = binary_for(root, run, args.bin_dir)
        result = run_binary(binary, run.args)
        if result["exit_code"] == EXIT_SKIP:
            raise SuiteError(f"bless: {run.id} exited 77 (no usable device); nothing recorded")
        path = run.transcript_path(gpu)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_transcript(run, facts[0], facts[2], result), encoding="utf-8")
        print(f"recorded {path.relative_to(root)} (exit {result['exit_code']})")
    if args.all:
        bless_data(root, gpu, args.bin_dir)
    return EXIT_OK


# Raw (unmasked) CSV of real runs, kept for the charts: (program, args, file, chart kind, PNG).
DATA_RECORDINGS = [
    ("report_data", [], "report_data.csv", "roofline", "roofline.png"),
    ("sweep", ["-csv"], "sweep.csv", "sweep", "sweep.png"),
]


def bless_data(root, gpu, bin_dir):
    """Record the CSV data files and render their charts (part of 'bless --all')."""
    out_dir = root / "expected" / gpu / "data"
    for name, argv, csv_name, kind, png in DATA_RECORDINGS:
        if not (root / "lessons" / (name + ".cu")).exists():
            continue
        run = Run(Program(root, root / "lessons" / (name + ".cu")), argv, 0)
        result = run_binary(binary_for(root, run, bin_dir), argv)
        if result["exit_code"] != EXIT_OK:
            raise SuiteError(f"bless: {name} {' '.join(argv)} exited {result['exit_code']}; no data recorded")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / csv_name).write_text(result["stdout"], encoding="utf-8")
        status = main(["--root", str(root), "plot", kind, str(out_dir / csv_name), "--out", str(out_dir / png)])
        print(f"recorded {(out_dir / csv_name).relative_to(root)} and {png} (plot exit {status})")


# --- static checks: each returns a list of 'file:line: message' strings.
def check_markers(root):
    """Markers are well formed, balanced, unique; header has one Build: and a Run: line."""
    errors = []
    for prog in programs(root):
        errors += parse_regions(prog.rel, prog.text)[1]
        header = prog.header()
        if len(header["Build"]) != 1:
            errors.append(f"{prog.rel}:1: header needs exactly one '// Build:' line (found {len(header['Build'])})")
        if not header["Run"]:
            errors.append(f"{prog.rel}:1: header needs a '// Run: ./{prog.name} ...' line")
        try:
            prog.runs()
            prog.sanitize_spec()
        except SuiteError as exc:
            errors.append(str(exc))
        wrong = "solution" if prog.is_starter else "exercise"
        for region in parse_regions(prog.rel, prog.text)[0]:
            if region.kind == wrong:
                errors.append(f"{prog.rel}:{region.open_line}: a {'starter' if prog.is_starter else 'lesson'} "
                              f"may not hold '{wrong}' regions")
    return errors


def check_common(root):
    """Every fenced common block is a byte-for-byte copy of common/NAME.cuh."""
    errors = []
    for prog in programs(root):
        regions, _ = parse_regions(prog.rel, prog.text)
        names = [r.name for r in regions if r.kind == "common"]
        if "cuda_check" not in names:
            errors.append(f"{prog.rel}:1: does not carry the common block 'cuda_check' (error macro, exit 77)")
        for region in regions:
            if region.kind != "common":
                continue
            canon_path = root / "common" / (region.name + ".cuh")
            if not canon_path.exists():
                errors.append(f"{prog.rel}:{region.open_line}: unknown common block '{region.name}' "
                              f"(no common/{region.name}.cuh)")
                continue
            canon = canon_path.read_text(encoding="utf-8").splitlines(keepends=True)
            copy = region.body.splitlines(keepends=True)
            if canon != copy:
                for i, (a, b) in enumerate(zip(canon + [None] * len(copy), copy + [None] * len(canon))):
                    if a != b:
                        errors.append(f"{prog.rel}:{region.open_line + 1 + i}: copy of common block "
                                      f"'{region.name}' differs from common/{region.name}.cuh line {i + 1}: "
                                      f"expected {a!r}, found {b!r}")
                        break
    return errors


def segments(text, kind):
    """Split a file into (outside-lines, region names) for the starter drift check."""
    lines = text.splitlines(keepends=True)
    regions, _ = parse_regions("", text)
    regions = [r for r in regions if r.kind == kind]
    outside, names, pos = [], [], 0
    for r in regions:
        outside.append((pos + 1, lines[pos:r.open_line - 1]))
        names.append(r.name)
        pos = r.close_line
    outside.append((pos + 1, lines[pos:]))
    return outside, names


def check_starters(root):
    """Each lesson has a starter; outside solution/exercise regions they are identical."""
    errors = []
    lessons = {p.name: p for p in programs(root) if not p.is_starter}
    starters = {p.name: p for p in programs(root) if p.is_starter}
    for name in sorted(set(lessons) - set(starters)):
        errors.append(f"{lessons[name].rel}:1: lesson has no starter (starter/{name}.cu)")
    for name in sorted(set(starters) - set(lessons)):
        errors.append(f"{starters[name].rel}:1: starter has no lesson (lessons/{name}.cu)")
    for name in sorted(set(lessons) & set(starters)):
        lesson, starter = lessons[name], starters[name]
        l_out, l_names = segments(lesson.text, "solution")
        s_out, s_names = segments(starter.text, "exercise")
        if not l_names:
            errors.append(f"{lesson.rel}:1: lesson has no '// solution: NAME' region")
        if l_names != s_names:
            errors.append(f"{starter.rel}:1: exercise regions {s_names} do not match the lesson's "
                          f"solution regions {l_names} (same names, same order)")
            continue
        for (l_start, l_lines), (s_start, s_lines) in zip(l_out, s_out):
            l_norm = [x.replace("// solution:", "// REGION:").replace("// end solution", "// end REGION") for x in l_lines]
            s_norm = [x.replace("// exercise:", "// REGION:").replace("// end exercise", "// end REGION") for x in s_lines]
            if l_norm == s_norm:
                continue
            for i in range(max(len(l_norm), len(s_norm))):
                a = l_norm[i] if i < len(l_norm) else None
                b = s_norm[i] if i < len(s_norm) else None
                if a != b:
                    errors.append(f"{starter.rel}:{s_start + i}: drifted from {lesson.rel}:{l_start + i} outside "
                                  f"the exercise regions: lesson has {a!r}, starter has {b!r}")
                    break
            break
    return errors


def check_build_lines(root):
    """Every file's Build: line compiles that file alone in an empty folder."""
    def one(prog):
        header = prog.header()["Build"]
        if len(header) != 1:
            return []  # reported by the markers check
        no, cmd = header[0]
        argv = shlex.split(cmd)
        if not argv or argv[0] != "nvcc":
            return [f"{prog.rel}:{no}: Build: line must start with nvcc: {cmd}"]
        if prog.path.name not in argv or "-o" not in argv:
            return [f"{prog.rel}:{no}: Build: line must compile {prog.path.name} with -o {prog.name}"]
        with tempfile.TemporaryDirectory(prefix="suite-build-") as tmp:
            shutil.copy(prog.path, Path(tmp) / prog.path.name)
            try:
                done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return [f"{prog.rel}:{no}: Build: line could not run: {exc}"]
            if done.returncode != 0:
                first = (done.stderr.strip().splitlines() or ["(no output)"])[0]
                return [f"{prog.rel}:{no}: Build: line fails alone in an empty folder (exit "
                        f"{done.returncode}): {first}"]
            out = argv[argv.index("-o") + 1] if argv.index("-o") + 1 < len(argv) else ""
            if not (Path(tmp) / out).exists():
                return [f"{prog.rel}:{no}: Build: line produced no '{out}'"]
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        results = list(pool.map(one, programs(root)))
    return [e for r in results for e in r]


def check_transcripts(root, gpu=DEFAULT_GPU):
    """Every run has a well-formed transcript recorded from the current source."""
    errors = []
    wanted = {}
    for run in all_runs(root):
        path = run.transcript_path(gpu)
        wanted[path] = run
        rel = path.relative_to(root)
        if not path.exists():
            errors.append(f"{run.program.rel}:1: run '{run.id}' has no transcript {rel} "
                          f"(record it on the GPU: scripts/suite.py bless {run.id})")
            continue
        try:
            info = parse_transcript(path)
        except SuiteError as exc:
            errors.append(str(exc))
            continue
        if info["source_sha256"] != run.program.sha256():
            errors.append(f"{rel}:4: stale: recorded from another version of {run.program.rel} "
                          f"(sha256 {info['source_sha256'][:12]}..., now {run.program.sha256()[:12]}...); "
                          f"re-record with bless on the GPU")
        if info["source"] != run.program.rel or info["command"] != run.command():
            errors.append(f"{rel}:2: transcript is of '{info['command']}' from {info['source']}, "
                          f"expected '{run.command()}' from {run.program.rel}")
    base = root / "expected" / gpu
    for path in sorted(base.rglob("*.txt")) if base.is_dir() else []:
        if path not in wanted:
            errors.append(f"{path.relative_to(root)}:1: orphan transcript: no Run: line records it")
    return errors


def check_verify_record(root, gpu=DEFAULT_GPU):
    """expected/<gpu>/verify.json covers every program, is current and records no failure."""
    path = root / "expected" / gpu / "verify.json"
    rel = path.relative_to(root)
    if not path.exists():
        return [f"{rel}:1: missing: run 'scripts/suite.py verify' on the GPU"]
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return [f"{rel}:{exc.lineno}: malformed JSON: {exc.msg}"]
    errors = []
    entries = {e.get("program"): e for e in record.get("programs", [])}
    for prog in programs(root):
        entry = entries.get(prog.rel)
        where = f"{rel}: {prog.rel}"
        if entry is None:
            errors.append(f"{where}: missing from the GPU verification record (run verify)")
            continue
        if entry.get("source_sha256") != prog.sha256():
            errors.append(f"{where}: stale: verified from another version of the source (run verify)")
        errors += verify_entry_problems(entry, where, lesson=not prog.is_starter)
        if not prog.is_starter:
            recorded = sorted(m.get("name", "") for m in entry.get("mutants", []))
            wanted = sorted(m.name for m in MUTANTS.get(prog.name, []))
            if recorded != wanted:
                errors.append(f"{where}: the record's mutants {recorded} are not the catalogue's {wanted} "
                              f"(run verify or mutate)")
    return errors


def verify_entry_problems(entry, where, lesson):
    """Findings, mismatches and budget overruns recorded in one verify.json entry."""
    errors = []
    if not entry.get("transcript_match"):
        errors.append(f"{where}: transcript_match is not true")
    if not entry.get("repeat_identical"):
        errors.append(f"{where}: repeat_identical is not true")
    for tool in SANITIZERS:
        findings = entry.get("sanitizer", {}).get(tool)
        if findings != 0:
            errors.append(f"{where}: compute-sanitizer {tool} findings: {findings}")
    if lesson:
        if entry.get("sm75_ptx_identical") is not True:
            errors.append(f"{where}: sm75_ptx_identical is not true")
        for key, limit in BUDGET.items():
            value = entry.get(key)
            if not isinstance(value, (int, float)) or value > limit:
                errors.append(f"{where}: {key} = {value} exceeds the Compiler Explorer budget {limit}")
    for mutant in entry.get("mutants", []):
        if not mutant.get("killed") and not mutant.get("blind_spot"):
            errors.append(f"{where}: mutant '{mutant.get('name')}' survived")
    return errors




def cmd_check(args):
    """Run the static checks (never writes); print every problem; exit 1 if any."""
    names = args.only or list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise UsageError(f"check: unknown check {unknown[0]!r} (known: {', '.join(CHECKS)})")
    if not programs(args.root):
        raise UsageError("check: no lessons/*.cu or starter/*.cu found under " + str(args.root))
    failed = 0
    for name in names:
        errors = CHECKS[name](args.root)
        for e in errors:
            print(f"error: [{name}] {e}", file=sys.stderr)
        print(f"check {name}: {'FAILED (' + str(len(errors)) + ')' if errors else 'ok'}")
        failed += bool(errors)
    return EXIT_FAIL if failed else EXIT_OK


def cmd_list_runs(args):
    """Print every recorded run's id (CMake makes one GPU test of each)."""
    for run in all_runs(args.root):
        print(run.id)
    return EXIT_OK


def cmd_list_checks(args):
    """Print the static checks' names (CMake makes one test of each)."""
    for name in CHECKS:
        print(name)
    return EXIT_OK


def parse_cli_row(row):
    parts = [p.strip() for p in row.split("|", 2)]
    if len(parts) != 3:
        raise UsageError(f"cli-case: malformed row (want 'EXPECT | TEXT | ARGS'): {row}")
    expect, text, argline = parts
    if expect != "ok" and not expect.isdigit():
        raise UsageError(f"cli-case: EXPECT must be 'ok' or an exit code, got {expect!r}")
    if not text and expect not in ("ok", "0"):
        raise UsageError(f"cli-case: a failing row needs the TEXT its error line must contain: {row}")
    return expect, text, shlex.split(argline)


def cmd_cli_case(args):
    """Run one row of a command-line table (tests/cli/NAME.txt) against a built lesson."""
    expect, text, argv = parse_cli_row(args.row)
    result = run_binary(Path(args.bin), argv, timeout=120)
    rc, err_lines = result["exit_code"], result["stderr"].splitlines()
    problems = []
    first = err_lines[0] if err_lines else ""
    if expect == "ok":
        allowed = (EXIT_OK,) if gpu_facts() else (EXIT_OK, EXIT_SKIP)  # 77 only where no GPU is
        if rc not in allowed:
            problems.append(f"exit {rc}, expected " + ("0 (this machine has a GPU)" if len(allowed) == 1
                                                       else "0 (GPU) or 77 (no GPU)"))
        if rc == EXIT_SKIP and "no usable CUDA device" not in first:
            problems.append(f"exit 77 without the one-line 'no usable CUDA device' message: {first!r}")
    elif expect == "0":  # -h/--help: the usage on stdout, nothing on stderr
        if rc != EXIT_OK:
            problems.append(f"exit {rc}, expected 0")
        if "usage" not in result["stdout"].lower() or result["stderr"]:
            problems.append("help must print the usage on stdout and nothing on stderr")
    else:
        if rc != int(expect):
            problems.append(f"exit {rc}, expected {expect}")
        if text not in first:
            problems.append(f"first stderr line {first!r} does not mention {text!r}")
        if int(expect) == EXIT_USAGE:
            if not first.startswith("error:"):
                problems.append(f"first stderr line should start with 'error:': {first!r}")
            if result["stdout"]:
                problems.append("a bad command line must print nothing on stdout")
            if not any("usage" in line.lower() for line in err_lines[1:]):
                problems.append("the error line must be followed by the usage")
    label = " ".join(shlex.quote(a) for a in argv)
    if problems:
        print(f"FAILED: {Path(args.bin).name} {label}: " + "; ".join(problems), file=sys.stderr)
        return EXIT_FAIL
    print(f"ok: {Path(args.bin).name} {label} -> exit {rc}: {first}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# Snippets, lesson pages, Compiler Explorer links.
# The six lessons in course order: (name, day, what it teaches until its file exists).
COURSE = [
    ("testing", "66", "four green tests certify a wrong kernel"),
    ("matmul_fp16", "71", "storage precision vs accumulator precision"),
    ("quant_matmul", "98", "INT8 scaling ladder, FP8/MX census, 2:4 pruning"),
    ("project_template", "final", "a GEMM scaffold with a strict command line and a measured roofline"),
    ("sweep", "final", "a block x tile x coarsening design space, ranked with ties"),
    ("report_data", "final", "naive vs tiled over a size ladder, CSV for a roofline plot"),
]
CE_URL = "https://godbolt.org/clientstate/"
CE_COMPILER = "nvcc130"
CE_OPTIONS = "-std=c++17 -O3 -arch=sm_75"
DOC_OPEN_RE = re.compile(r"^<!-- (snippet|output|commands|lesson-table): ?(.*?) -->\s*$")
DOC_CLOSE_RE = re.compile(r"^<!-- end (snippet|output|commands|lesson-table) -->\s*$")
def doc_files(root):
    """The pages with generated regions: lessons/*.md and the top-level README."""
    return [p.relative_to(root).as_posix() for p in sorted((root / "lessons").glob("*.md"))] + ["README.md"]


def resolve_source(root, name):
    """A lesson name, 'starter/NAME', or a path to a .cu file -> Program."""
    for candidate in (root / name, root / "lessons" / (name + ".cu"), root / (name + ".cu")):
        if candidate.is_file() and candidate.suffix == ".cu":
            return Program(root, candidate.resolve())
    raise UsageError(f"no lesson or starter called {name!r}")


def snippet_text(prog, name):
    """One snippet: marker lines (of every kind) stripped, dedented."""
    regions, errors = parse_regions(prog.rel, prog.text)
    if errors:
        raise SuiteError(errors[0])
    found = [r for r in regions if r.kind == "snippet" and r.name == name]
    if not found:
        known = ", ".join(r.name for r in regions if r.kind == "snippet") or "none"
        raise UsageError(f"{prog.rel} has no snippet {name!r} (snippets: {known})")
    body = [line for line in found[0].body.splitlines(keepends=True)
            if not (OPEN_RE.match(line.rstrip("\n")) or CLOSE_RE.match(line.rstrip("\n")))]
    return textwrap.dedent("".join(body))


def cmd_snippet(args):
    """Print one snippet of a lesson (dedented, markers stripped)."""
    sys.stdout.write(snippet_text(resolve_source(args.root, args.file), args.name))
    return EXIT_OK


def ce_state(source):
    return {"sessions": [{
        "id": 1, "language": "cuda", "source": source,
        "compilers": [{"id": CE_COMPILER, "options": CE_OPTIONS}],
        "executors": [{"compiler": {"id": CE_COMPILER, "options": CE_OPTIONS, "libs": []},
                       "arguments": "", "stdin": ""}],
    }]}


def ce_link(source):
    """A Compiler Explorer /clientstate/ link: base64url of zlib-compressed JSON."""
    payload = zlib.compress(json.dumps(ce_state(source), separators=(",", ":")).encode("utf-8"), 9)
    return CE_URL + base64.urlsafe_b64encode(payload).decode("ascii")


def ce_decode(link):
    """Inverse of ce_link (used by the tests and by check docs)."""
    if not link.startswith(CE_URL):
        raise SuiteError(f"not a Compiler Explorer clientstate link: {link[:60]}")
    return json.loads(zlib.decompress(base64.urlsafe_b64decode(link[len(CE_URL):])))


def cmd_ce_link(args):
    """Print a Compiler Explorer link that opens a lesson (or starter) and runs it on a T4."""
    print(ce_link(resolve_source(args.root, args.name).text))
    return EXIT_OK


def transcript_excerpt(root, run_id, start, count):
    run = find_run(root, run_id)
    path = run.transcript_path(DEFAULT_GPU)
    if not path.exists():
        raise SuiteError(f"no transcript {path.relative_to(root)} to quote")
    info = parse_transcript(path)
    for stream in ("stdout", "stderr"):  # stdout first; an error line lives on stderr
        lines = info[stream].splitlines()
        for i, line in enumerate(lines):
            if start in line:
                return "\n".join(lines[i:i + count]) + "\n"
    raise SuiteError(f"{path.relative_to(root)} has no line containing {start!r}")


def lesson_table(root):
    rows = ["| lesson | day | teaches | starter | Compiler Explorer (T4, nvcc 13.0) |", "|---|---|---|---|---|"]
    refs = []
    known = {name for name, _, _ in COURSE}
    extra = [(p.stem, "-", "(not in the course list)") for p in sorted((root / "lessons").glob("*.cu")) if p.stem not in known]
    for name, day, teaches in COURSE + extra:
        path = root / "lessons" / (name + ".cu")
        if not path.exists():
            rows.append(f"| `{name}` | {day} | {teaches} | - | not yet written |")
            continue
        starter = root / "starter" / (name + ".cu")
        rows.append(f"| [`{name}`](lessons/{name}.cu) | {day} | {teaches} | "
                    + (f"[`starter/{name}.cu`](starter/{name}.cu)" if starter.exists() else "-")
                    + f" | [open {name}][ce-{name}] |")
        refs.append(f"[ce-{name}]: {ce_link(path.read_text(encoding='utf-8'))}")
    return "\n".join(rows + [""] + refs) + "\n"


def render_doc_region(root, kind, arg, where):
    """The generated text between one pair of doc markers."""
    if kind == "snippet":
        parts = arg.split()
        if len(parts) != 2:
            raise SuiteError(f"{where}: malformed: want '<!-- snippet: LESSON NAME -->'")
        try:
            return "```cuda\n" + snippet_text(resolve_source(root, parts[0]), parts[1]) + "```\n"
        except UsageError as exc:
            raise SuiteError(f"{where}: unknown snippet: {exc}")
    if kind == "output":
        m = re.match(r'^(\S+) "(.+)" (\d+)$', arg)
        if not m:
            raise SuiteError(f'{where}: malformed: want \'<!-- output: RUN "FIRST LINE TEXT" COUNT -->\'')
        return "```text\n" + transcript_excerpt(root, m.group(1), m.group(2), int(m.group(3))) + "```\n"
    if kind == "commands":
        prog = resolve_source(root, arg.strip())
        header = prog.header()
        build = header["Build"][0][1] if header["Build"] else "(no Build line)"
        runs = "\n".join(cmd for _, cmd in header["Run"])
        return f"```sh\n{build}\n{runs}\n```\n"
    return lesson_table(root)


def regenerate_doc(root, rel):
    """Return (regenerated text, errors) for one doc file."""
    path = root / rel
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out, errors, seen, i = [], [], {}, 0
    while i < len(lines):
        out.append(lines[i])
        m = DOC_OPEN_RE.match(lines[i])
        if DOC_CLOSE_RE.match(lines[i]):
            errors.append(f"{rel}:{i + 1}: malformed: '{lines[i].strip()}' without an opening marker")
        if not m:
            i += 1
            continue
        kind, arg = m.group(1), m.group(2).strip()
        where = f"{rel}:{i + 1}"
        if (kind, arg) in seen:
            errors.append(f"{where}: duplicate marker '{kind}: {arg}' (first at line {seen[(kind, arg)]})")
        seen[(kind, arg)] = i + 1
        j = i + 1
        while j < len(lines) and not DOC_CLOSE_RE.match(lines[j]) and not DOC_OPEN_RE.match(lines[j]):
            j += 1
        if j >= len(lines) or not DOC_CLOSE_RE.match(lines[j]) or DOC_CLOSE_RE.match(lines[j]).group(1) != kind:
            errors.append(f"{where}: malformed: '{kind}: {arg}' is never closed by '<!-- end {kind} -->'")
            i += 1
            continue
        try:
            out.append(render_doc_region(root, kind, arg, where))
        except SuiteError as exc:
            errors.append(str(exc))
            out.extend(lines[i + 1:j])
        out.append(lines[j])
        i = j + 1
    return "".join(out), errors


def check_docs(root):
    """Quoted snippets, output excerpts, commands and CE links in the docs are current."""
    errors = []
    for rel in doc_files(root):
        path = root / rel
        if not path.exists():
            errors.append(f"{rel}:1: missing")
            continue
        new, problems = regenerate_doc(root, rel)
        errors += problems
        old = path.read_text(encoding="utf-8")
        if new != old and not problems:
            old_lines, new_lines = old.splitlines(), new.splitlines()
            first = next((k for k, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                         min(len(old_lines), len(new_lines)))
            opener = next((k for k in range(first, -1, -1) if k < len(old_lines)
                           and DOC_OPEN_RE.match(old_lines[k])), first)
            what = old_lines[opener].strip() if opener < len(old_lines) else "end of file"
            diff = "\n".join(difflib.unified_diff(old_lines, new_lines, rel, rel + " (regenerated)",
                                                  lineterm="", n=1))
            errors.append(f"{rel}:{first + 1}: stale generated text under {what} "
                          f"(run scripts/suite.py sync):\n{diff[:4000]}")
    return errors


def cmd_sync(args):
    """Regenerate the quoted snippets, output excerpts, commands and links in the docs."""
    for rel in doc_files(args.root):
        path = args.root / rel
        if not path.exists():
            continue
        new, errors = regenerate_doc(args.root, rel)
        if errors:
            raise SuiteError("; ".join(errors))
        if new != path.read_text(encoding="utf-8"):
            path.write_text(new, encoding="utf-8")
            print(f"updated {rel}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# The exercise loop: exercises/ belongs to the student; nothing here deletes it.
def cmd_exercise(args):
    """Start an exercise from a starter, or check a student's exercise against the lesson."""
    root = args.root
    lesson = root / "lessons" / (args.name + ".cu")
    starter = root / "starter" / (args.name + ".cu")
    if not lesson.exists() or not starter.exists():
        names = ", ".join(p.stem for p in sorted((root / "starter").glob("*.cu"))) or "none"
        raise UsageError(f"exercise: no lesson with a starter called {args.name!r} (have: {names})")
    target = root / "exercises" / (args.name + ".cu")
    if args.action == "start":
        if target.exists() and not args.force:
            raise SuiteError(f"exercises/{args.name}.cu already exists; not overwriting your work "
                             f"(add --force to replace it with a fresh copy of the starter)")
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(starter, target)
        print(f"copied starter/{args.name}.cu to exercises/{args.name}.cu; edit the '// exercise:' "
              f"regions, then: scripts/suite.py exercise check {args.name}")
        return EXIT_OK
    if not target.exists():
        raise UsageError(f"exercise: exercises/{args.name}.cu does not exist; start it with "
                         f"'scripts/suite.py exercise start {args.name}'")
    run = Program(root, lesson).runs()[0]
    try:
        cmd_build_impl(root, [args.name + "_exercise"])
    except subprocess.CalledProcessError:
        raise SuiteError(f"exercises/{args.name}.cu does not compile (see the compiler output above)")
    result = run_binary(Path(args.bin_dir or default_bin_dir(root)) / (args.name + "_exercise"), run.args)
    if result["exit_code"] == EXIT_SKIP:
        raise Skipped(f"exercise check needs a CUDA GPU: {result['stderr'].strip()}")
    gpu = transcript_gpu(root, args.gpu, gpu_facts())
    expected = parse_transcript(run.transcript_path(gpu))
    matched, report = explain_exercise(expected, result)
    print(report)
    return EXIT_OK if matched else EXIT_FAIL


def sections(text):
    """Blank-line-separated blocks of output, keyed by their first line."""
    blocks = [b for b in re.split(r"\n\s*\n", text.strip("\n")) if b.strip()]
    return [(b.splitlines()[0], b) for b in blocks]


def explain_exercise(expected, result):
    """(matched, plain-words report) comparing a student's run with the lesson's transcript."""
    got_out, got_err = mask(result["stdout"]), mask(result["stderr"])
    if (str(result["exit_code"]) == expected["exit_code"] and got_out == expected["stdout"]
            and got_err == expected["stderr"]):
        return True, ("Congratulations: your exercise prints exactly what the lesson prints "
                      f"and exits {result['exit_code']}, as the lesson does.")
    notes = ["Not there yet. What still differs from the lesson:"]
    if str(result["exit_code"]) != expected["exit_code"]:
        notes.append(f"- exit code: yours is {result['exit_code']}, the lesson's is {expected['exit_code']}"
                     + (" (1 means a gate failed or something is left to write)" if result["exit_code"] == 1 else ""))
    want, have = sections(expected["stdout"]), dict(sections(got_out))
    for title, block in want:
        if title not in have:
            notes.append(f"- section missing from your output: {title!r}")
        elif have[title] != block:
            notes.append(f"- section differs: {title!r}")
    extra = [t for t, _ in sections(got_out) if t not in dict(want)]
    for title in extra:
        notes.append(f"- section the lesson does not print: {title!r}")
    if got_err != expected["stderr"]:
        notes.append("- stderr differs (the lesson's stderr is "
                     + ("empty)" if not expected["stderr"] else "not empty)"))
    diff = difflib.unified_diff(expected["stdout"].splitlines(), got_out.splitlines(),
                                "lesson (transcript)", "your exercise", lineterm="", n=1)
    return False, "\n".join(notes + ["", "stdout diff:"] + list(diff))


# ---------------------------------------------------------------------------
# Plots (matplotlib; Debian's python3-matplotlib, see scripts/install-deps.sh).
FALLBACK_PYTHON = "/usr/bin/python3"


def read_csv_with_comments(path):
    """(comment lines, rows as dicts) of a CSV whose comments start with '#'."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    comments = [line[1:].strip() for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if line.strip() and not line.startswith("#")))
    if not rows:
        raise SuiteError(f"{path}: no CSV rows")
    return comments, rows


def roofline_points(path):
    """Ceilings and the timed, passing points of a report_data CSV."""
    comments, rows = read_csv_with_comments(path)
    text = " ".join(comments)
    bw = re.search(r"bandwidth (" + NUM + r") GB/s", text)
    peak = re.search(r"FP32 peak (" + NUM + r") GFLOP/s", text)
    gpu = re.search(r"GPU: ([^(]+?) \(", text)
    if not bw or not peak:
        raise SuiteError(f"{path}: the comment lines carry no measured bandwidth / FP32 peak")
    for column in ("kernel", "n", "verdict", "gflops", "ai_compulsory"):
        if column not in rows[0]:
            raise SuiteError(f"{path}: no column {column!r}")
    points = [(r["kernel"], int(r["n"]), float(r["ai_compulsory"]), float(r["gflops"]))
              for r in rows if r["verdict"] == "PASS" and r["gflops"] not in ("", "n/a")]
    return {"gpu": gpu.group(1).strip() if gpu else "GPU", "bw_gbs": float(bw.group(1)),
            "peak_gflops": float(peak.group(1)), "points": points}


def points_over_roof(data):
    """Points above min(peak, AI x bandwidth): a roofline cannot have any."""
    return [p for p in data["points"] if p[3] > min(data["peak_gflops"], p[2] * data["bw_gbs"]) * 1.0001]


def render_roofline(data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
    ais = [p[2] for p in data["points"]] or [1.0]
    lo, hi = min(ais + [1.0]) / 4, max(ais + [data["peak_gflops"] / data["bw_gbs"]]) * 4
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(data["peak_gflops"], x * data["bw_gbs"]) for x in xs], "k-", lw=2,
            label=f"roof: min({data['peak_gflops']:.0f} GFLOP/s, AI x {data['bw_gbs']:.0f} GB/s), measured")
    ax.plot(xs, [x * data["bw_gbs"] for x in xs], "k:", lw=1, label="bandwidth roof (measured copy)")
    ax.axhline(data["peak_gflops"], color="gray", ls="--", lw=1, label="FP32 peak (measured FMA kernel)")
    for kernel, marker in (("naive", "o"), ("tiled", "s")):
        pts = [p for p in data["points"] if p[0] == kernel]
        if pts:
            ax.plot([p[2] for p in pts], [p[3] for p in pts], marker, ls="-", label=f"{kernel} kernel")
            for p in pts:
                ax.annotate(str(p[1]), (p[2], p[3]), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(min([p[3] for p in data["points"]] + [data["peak_gflops"]]) / 4, data["peak_gflops"] * 3)
    ax.set_xlabel("arithmetic intensity, compulsory traffic (FLOP/byte)")
    ax.set_ylabel("GFLOP/s (median launch)")
    ax.set_title(f"FP32 GEMM roofline on {data['gpu']} (labels: n = M = N = K)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def sweep_points(path):
    _, rows = read_csv_with_comments(path)
    for column in ("threads", "tk", "co", "status", "gflops"):
        if column not in rows[0]:
            raise SuiteError(f"{path}: no column {column!r}")
    pts = [(f"{r['threads']}/{r['tk']}/{r['co']}", float(r["gflops"]), r.get("tie", ""))
           for r in rows if r["status"] == "PASS" and r["gflops"] not in ("", "n/a")]
    if not pts:
        raise SuiteError(f"{path}: no passing, timed point to chart")
    return {"device": rows[0].get("device", "GPU"), "size": f"{rows[0].get('m')}x{rows[0].get('n')}x{rows[0].get('k')}",
            "points": sorted(pts, key=lambda p: -p[1])}


def render_sweep(data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pts = data["points"]
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.28 * len(pts) + 1.2)), dpi=120)
    ys = list(range(len(pts)))[::-1]
    colors = ["tab:orange" if p[2] not in ("", "0") else "tab:blue" for p in pts]
    ax.barh(ys, [p[1] for p in pts], color=colors)
    ax.set_yticks(ys)
    ax.set_yticklabels([p[0] for p in pts], fontsize=7)
    ax.set_xlabel("GFLOP/s (median launch)")
    ax.set_ylabel("threads per block / TK / coarsening")
    ax.set_title(f"sweep on {data['device']}, {data['size']}, ranked (orange: tied with a neighbour)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def cmd_plot(args):
    """Render a report_data CSV as a roofline PNG, or a sweep CSV as a ranked bar chart."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.path.exists(FALLBACK_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(FALLBACK_PYTHON):
            done = subprocess.run([FALLBACK_PYTHON, os.path.abspath(__file__)] + args.argv,
                                  capture_output=True, text=True)
            sys.stdout.write(done.stdout)
            sys.stderr.write(done.stderr)
            return done.returncode
        raise SuiteError("plot needs matplotlib (Debian: scripts/install-deps.sh)")
    if args.kind == "roofline":
        data = roofline_points(args.csv)
        render_roofline(data, args.out)
        above = points_over_roof(data)
        print(f"wrote {args.out}: {len(data['points'])} points, "
              + ("all under both roofs" if not above else f"{len(above)} ABOVE a roof: {above}"))
        return EXIT_FAIL if above else EXIT_OK
    data = sweep_points(args.csv)
    render_sweep(data, args.out)
    print(f"wrote {args.out}: {len(data['points'])} ranked points")
    return EXIT_OK


# ---------------------------------------------------------------------------
# Mutation catalogue: plausible bugs planted into a copy of a lesson. Each must
# make the lesson exit 1 naming the right gate (killed), or be a known blind
# spot whose explanation is a sentence of the lesson itself.
class Mutant:
    def __init__(self, name, description, old, new, expect=None, blind_spot=None, args=None):
        self.name, self.description = name, description
        self.old, self.new = old, new          # exact source edit, anchored: old occurs once
        self.expect = expect                   # text the failing run's stderr must contain
        self.blind_spot = blind_spot           # sentence of the lesson explaining a survivor
        self.args = args                       # command line (default: the first Run: line)

    def apply(self, text):
        count = text.count(self.old)
        if count != 1:
            raise SuiteError(f"mutant '{self.name}': its anchor occurs {count} times (want once): {self.old!r}")
        return text.replace(self.old, self.new)


ODD_GEMM = ["-m", "1025", "-n", "1023", "-k", "1000"]  # partial tiles in every direction
def load_mutants():
    """The mutation catalogue: scripts/catalogue/<lesson>.json, key "mutants"."""
    cat = {}
    for path in sorted((Path(__file__).resolve().parent / "catalogue").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cat[data["lesson"]] = [Mutant(m["name"], m["description"], m["old"], m["new"], m.get("expect"),
                                      m.get("blind_spot"), m.get("args")) for m in data.get("mutants", [])]
    return cat


MUTANTS = load_mutants()
MIN_KILLED = 4


def prose(text):
    """Source text with comment line breaks joined, so a sentence can span comment lines."""
    return re.sub(r"\s*\n\s*//\s*", " ", text)


def check_mutants(root):
    """Every mutant of the catalogue still applies, exactly once, to its lesson's current source."""
    errors = []
    for name, mutants in sorted(MUTANTS.items()):
        path = root / "lessons" / (name + ".cu")
        if not path.exists():
            errors.append(f"lessons/{name}.cu:1: the mutation catalogue names a lesson that does not exist")
            continue
        text = path.read_text(encoding="utf-8")
        killable = [m for m in mutants if not m.blind_spot]
        if len(killable) < MIN_KILLED:
            errors.append(f"lessons/{name}.cu:1: only {len(killable)} mutants expected to be killed (need {MIN_KILLED})")
        for m in mutants:
            count = text.count(m.old)
            if count != 1:
                errors.append(f"lessons/{name}.cu:1: mutant '{m.name}' no longer applies: its anchor occurs "
                              f"{count} times (want once): {m.old!r}")
            if m.blind_spot and m.blind_spot not in prose(text):
                errors.append(f"lessons/{name}.cu:1: blind spot '{m.name}' cites a sentence the lesson "
                              f"no longer contains: {m.blind_spot!r}")
    for prog in programs(root):
        if not prog.is_starter and prog.name not in MUTANTS:
            errors.append(f"{prog.rel}:1: lesson has no mutants in the catalogue (scripts/suite.py MUTANTS)")
    return errors


def run_mutant(root, prog, mutant):
    """Build and run one mutant in a scratch folder; return its record entry."""
    entry = {"name": mutant.name, "description": mutant.description}
    argv = shlex.split(prog.header()["Build"][0][1])
    with tempfile.TemporaryDirectory(prefix="suite-mutant-") as tmp:
        (Path(tmp) / prog.path.name).write_text(mutant.apply(prog.text), encoding="utf-8")
        built = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
        if built.returncode != 0:
            entry.update(killed=False, outcome="does not compile: " + (built.stderr.strip().splitlines() or [""])[0])
            return entry
        out = argv[argv.index("-o") + 1]
        args = mutant.args if mutant.args is not None else prog.runs()[0].args
        result = run_binary(Path(tmp) / out, args)
    gate_named = mutant.expect is None or mutant.expect in result["stderr"]
    entry["killed"] = result["exit_code"] == EXIT_FAIL and gate_named
    entry["outcome"] = f"exit {result['exit_code']}: " + " | ".join(
        line for line in result["stderr"].splitlines() if line.strip())[:300]
    if mutant.blind_spot and not entry["killed"]:
        entry["blind_spot"] = mutant.blind_spot
    return entry


def mutate_programs(root, names):
    """Run every mutant of the named lessons in parallel; {lesson rel: [entries]}."""
    jobs = [(resolve_source(root, name), m) for name in names for m in MUTANTS.get(name, [])]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(8, (os.cpu_count() or 2) - 1))) as pool:
        for (prog, _), entry in zip(jobs, pool.map(lambda job: run_mutant(root, *job), jobs)):
            results.setdefault(prog.rel, []).append(entry)
    return results


def cmd_mutate(args):
    """(GPU) Build and run every mutant; record killed/survived in expected/<gpu>/verify.json."""
    root = args.root
    facts = gpu_facts()
    if facts is None:
        raise Skipped("mutate: no NVIDIA GPU here (nvidia-smi found none)")
    names = args.names or sorted(MUTANTS)
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        raise UsageError(f"mutate: no mutants for {unknown[0]!r} (have: {', '.join(sorted(MUTANTS))})")
    results = mutate_programs(root, names)
    path = root / "expected" / (args.gpu or facts[1]) / "verify.json"
    if not path.exists():
        raise SuiteError(f"mutate: {path.relative_to(root)} does not exist; run verify first")
    record = json.loads(path.read_text(encoding="utf-8"))
    for entry in record["programs"]:
        if entry["program"] in results:
            entry["mutants"] = results[entry["program"]]
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (path.parent / "verify.md").write_text(verify_table(record), encoding="utf-8")
    print(mutant_table(results))
    survivors = [e for es in results.values() for e in es if not e["killed"] and not e.get("blind_spot")]
    return EXIT_FAIL if survivors else EXIT_OK


def mutant_table(results):
    rows = ["| lesson | mutant | what it plants | killed | outcome |", "|---|---|---|---|---|"]
    for rel, entries in sorted(results.items()):
        for e in entries:
            verdict = "yes" if e["killed"] else ("blind spot" if e.get("blind_spot") else "SURVIVED")
            rows.append(f"| {rel} | {e['name']} | {e['description']} | {verdict} | {e['outcome'][:120]} |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------
# GPU verification.
SANITIZER_SUMMARY = re.compile(r"(?:ERROR|RACECHECK) SUMMARY: (\d+) (?:errors?|hazards?)")


SANITIZER_TIMEOUT_S = 240


def sanitizer_findings(binary, args, tool, options=()):
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"] + list(options)
    try:
        result = run_binary(binary, args, timeout=SANITIZER_TIMEOUT_S, prefix=cmd)
    except SuiteError as exc:
        return None, str(exc)
    text = result["stdout"] + result["stderr"]
    counts = [int(n) for n in SANITIZER_SUMMARY.findall(text)]
    if not counts:
        return None, f"no sanitizer summary (exit {result['exit_code']}): {text[-400:]}"
    return sum(counts), text if sum(counts) else ""


def build_dir(root, name, archs, progs):
    bdir = root / "build" / name
    subprocess.run(["cmake", "-S", str(root), "-B", str(bdir), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_CUDA_ARCHITECTURES={archs}"],
                   check=True, stdout=subprocess.DEVNULL)
    targets = [p.target for p in progs]
    subprocess.run(["cmake", "--build", str(bdir), "--target"] + targets, check=True,
                   stdout=subprocess.DEVNULL)
    return bdir / "bin"


def reusable_entries(path, progs):
    """Entries of an existing record whose program source is unchanged (for --resume)."""
    if not path.exists():
        return {}
    record = json.loads(path.read_text(encoding="utf-8"))
    current = {p.rel: p.sha256() for p in progs}
    return {e["program"]: e for e in record.get("programs", [])
            if current.get(e.get("program")) == e.get("source_sha256")}


def cmd_verify(args):
    """(GPU) Prove every program and write expected/<gpu>/verify.json and verify.md."""
    root = args.root
    facts = gpu_facts()
    if facts is None:
        raise Skipped("verify: no NVIDIA GPU here (nvidia-smi found none)")
    gpu = args.gpu or facts[1]
    t0 = time.monotonic()
    progs = programs(root)
    if args.only:
        progs = [p for p in progs if p.name in args.only or p.rel in args.only]
        if not progs:
            raise UsageError(f"verify: --only {args.only} selects no program")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        built = [pool.submit(build_dir, root, "verify-native", "75;90", progs),
                 pool.submit(build_dir, root, "verify-sm75", "75", progs)]
        native, ptx75 = (f.result() for f in built)
    log = []
    entries = {p.rel: {"program": p.rel, "source_sha256": p.sha256(), "sanitizer": {}} for p in progs}
    lessons = [p for p in progs if not p.is_starter]

    def progress(text):
        print(f"[{time.monotonic() - t0:6.1f} s] {text}", flush=True)

    # 1. Compiler Explorer budget first, while the machine is quiet: each lesson's
    #    default run alone, pinned to one core.
    old = reusable_entries(root / "expected" / gpu / "verify.json", progs) if args.resume else {}
    cpu = sorted(os.sched_getaffinity(0))[0]
    for p in lessons:
        prev = old.get(p.rel, {})
        if all(isinstance(prev.get(k), (int, float)) and prev[k] <= limit for k, limit in BUDGET.items()):
            entries[p.rel].update({k: prev[k] for k in ("wall_s_1core", "cpu_s_1core", "peak_rss_mib", "output_bytes")})
            continue
        m = run_measured(native / p.target, p.runs()[0].args, cpu)
        entries[p.rel].update({k: m[k] for k in ("wall_s_1core", "cpu_s_1core", "peak_rss_mib", "output_bytes")})
        progress(f"budget {p.rel}: {m['wall_s_1core']} s wall, {m['peak_rss_mib']} MiB, {m['output_bytes']} bytes")

    # 2. Everything else is independent: one pool of jobs (sanitizers, transcript and
    #    sm_75 PTX runs, repeat runs, mutants), longest first.
    def sanitize(p, tool):
        opts, sargs = p.sanitize_spec()
        return sanitizer_findings(native / p.target, sargs, tool, opts)

    def check_run(p, run):
        result = run_binary(native / p.target, run.args)
        notes = []
        path = run.transcript_path(gpu)
        if not path.exists():
            notes.append(f"{run.id}: no transcript")
        else:
            expected = parse_transcript(path)
            notes += compare_with_transcript(expected, result, run.id)
            if expected["source_sha256"] != p.sha256():
                notes.append(f"{run.id}: stale transcript")
        ptx_same, ptx_notes = None, []
        if not p.is_starter:
            other = run_binary(ptx75 / p.target, run.args)
            ptx_same = all(mask(other[k], True) == mask(result[k], True) for k in ("stdout", "stderr")) \
                and other["exit_code"] == result["exit_code"]
            if not ptx_same:
                diff = difflib.unified_diff(mask(result["stdout"], True).splitlines(),
                                            mask(other["stdout"], True).splitlines(), "native", "sm_75 PTX", lineterm="")
                ptx_notes.append(f"{run.id}: the sm_75 PTX build prints differently:\n" + "\n".join(diff))
        return result["exit_code"], notes, ptx_same, ptx_notes

    def repeat(p):
        r = run_binary(native / p.target, p.runs()[0].args)
        return (mask(r["stdout"]), mask(r["stderr"]), r["exit_code"])

    jobs = []
    for p in progs:
        jobs += [(("sanitizer", p, tool), sanitize, (p, tool)) for tool in SANITIZERS]
    for p in lessons:
        jobs += [(("mutant", p, m), run_mutant, (root, p, m)) for m in MUTANTS.get(p.name, [])]
    for p in progs:
        jobs += [(("run", p, run.id), check_run, (p, run)) for run in p.runs()]
        jobs += [(("repeat", p, i), repeat, (p,)) for i in range(REPEAT_RUNS if not p.is_starter else 2)]
    results = {}
    for p in progs:  # --resume: what the record already proves for this very source
        prev = old.get(p.rel)
        if not prev:
            continue
        for tool in SANITIZERS:
            if prev.get("sanitizer", {}).get(tool) == 0:
                results[("sanitizer", p, tool)] = (0, "")
        for m in MUTANTS.get(p.name, []) if not p.is_starter else []:
            found = [e for e in prev.get("mutants", []) if e.get("name") == m.name and e.get("killed")]
            if found:
                results[("mutant", p, m)] = found[0]
        if prev.get("repeat_identical"):
            for i in range(REPEAT_RUNS if not p.is_starter else 2):
                results[("repeat", p, i)] = "same"
        if prev.get("transcript_match") and (p.is_starter or prev.get("sm75_ptx_identical")):
            for run in p.runs():
                results[("run", p, run.id)] = (prev.get("exit_code") if run.index == 0 else 0, [],
                                               None if p.is_starter else True, [])
    jobs = [job for job in jobs if job[0] not in results]
    progress(f"{len(jobs)} jobs to run" + (f", {len(results)} results reused from the record" if results else ""))
    deadline = t0 + args.deadline
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 2))
    futures = {pool.submit(fn, *fargs): key for key, fn, fargs in jobs}
    try:
        for fut in concurrent.futures.as_completed(futures, timeout=max(1.0, deadline - time.monotonic())):
            key = futures[fut]
            results[key] = fut.result()
            kind, p, what = key
            label = getattr(what, "name", what)
            progress(f"{kind} {p.rel} {label}: done")
    except concurrent.futures.TimeoutError:
        progress(f"deadline of {args.deadline} s reached: {len(futures) - len(results)} jobs not finished")
        log.append("deadline reached; unfinished jobs count as failures")
    pool.shutdown(wait=False, cancel_futures=True)

    for p in progs:
        e = entries[p.rel]
        for tool in SANITIZERS:
            count, text = results.get(("sanitizer", p, tool), (None, "not finished"))
            e["sanitizer"][tool] = count
            if count != 0:
                log.append(f"== {p.rel} {tool}: {count}\n{text}")
        match, ptx = True, True
        for run in p.runs():
            exit_code, notes, ptx_same, ptx_notes = results.get(
                ("run", p, run.id), (None, [f"{run.id}: not finished"], False, []))
            if run.index == 0:
                e["exit_code"] = exit_code
            match = match and not notes
            log += notes + ptx_notes
            ptx = ptx and bool(ptx_same)
        e["transcript_match"] = match
        reps = [results.get(("repeat", p, i)) for i in range(REPEAT_RUNS if not p.is_starter else 2)]
        e["repeat_runs"] = len(reps)
        e["repeat_identical"] = all(r is not None and r == reps[0] for r in reps)
        if not e["repeat_identical"]:
            log.append(f"{p.rel}: repeat runs differ or did not finish")
        if not p.is_starter:
            e["sm75_ptx_identical"] = ptx
            if p.name in MUTANTS:
                e["mutants"] = [results.get(("mutant", p, m), {"name": m.name, "description": m.description,
                                                               "killed": False, "outcome": "not finished"})
                                for m in MUTANTS[p.name]]
    log.append(mutant_table({p.rel: entries[p.rel]["mutants"] for p in lessons if "mutants" in entries[p.rel]}))

    record = {
        "gpu": facts[0], "toolkit": facts[2],
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "total_wall_s": round(time.monotonic() - t0, 1),
        "budget": BUDGET,
        "programs": [entries[p.rel] for p in progs],
    }
    out_dir = root / "expected" / gpu
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.only and (out_dir / "verify.json").exists():  # merge a partial run into the record
        old = json.loads((out_dir / "verify.json").read_text(encoding="utf-8"))
        kept = [e for e in old.get("programs", []) if e.get("program") not in entries]
        record["programs"] = sorted(kept + record["programs"], key=lambda e: e["program"])
    (out_dir / "verify.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (out_dir / "verify.md").write_text(verify_table(record), encoding="utf-8")
    (root / "build").mkdir(exist_ok=True)
    (root / "build" / "verify.log").write_text("\n\n".join(log) + "\n", encoding="utf-8")
    print(verify_table(record))
    problems = [p for e in record["programs"]
                for p in verify_entry_problems(e, e["program"], lesson=e["program"].startswith("lessons/"))]
    for p in problems:
        print("error: " + p, file=sys.stderr)
    print(f"verify: {len(problems)} problem(s); details in build/verify.log", file=sys.stderr)
    return EXIT_FAIL if problems else EXIT_OK


def verify_table(record):
    rows = [f"# GPU verification: {record['gpu']}, CUDA {record['toolkit']}, {record['recorded_at']}",
            "", f"Whole `scripts/suite.py verify`: {record['total_wall_s']} s wall. "
            f"Budget per lesson (one core): wall <= {BUDGET['wall_s_1core']} s, "
            f"peak RSS <= {BUDGET['peak_rss_mib']} MiB, output <= {BUDGET['output_bytes']} bytes.", "",
            "| program | exit | transcript | sanitizer findings (mem/race/init/sync) | repeats identical | "
            "sm_75 PTX same | wall s | cpu s | peak RSS MiB | output bytes |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for e in record["programs"]:
        san = "/".join(str(e.get("sanitizer", {}).get(t)) for t in SANITIZERS)
        rows.append(f"| {e['program']} | {e.get('exit_code')} | {'match' if e.get('transcript_match') else 'MISMATCH'} | "
                    f"{san} | {e.get('repeat_runs')}x {'yes' if e.get('repeat_identical') else 'NO'} | "
                    f"{e.get('sm75_ptx_identical', '-')} | {e.get('wall_s_1core', '-')} | {e.get('cpu_s_1core', '-')} | "
                    f"{e.get('peak_rss_mib', '-')} | {e.get('output_bytes', '-')} |")
    return "\n".join(rows) + "\n"


CHECKS = {  # name -> function returning 'file:line: message' strings
    "markers": check_markers,
    "common": check_common,
    "starters": check_starters,
    "build-lines": check_build_lines,
    "transcripts": check_transcripts,
    "verify-record": check_verify_record,
    "docs": check_docs,
    "mutants": check_mutants,
}


# ---------------------------------------------------------------------------
def build_parser():
    parser = argparse.ArgumentParser(prog="suite.py", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="repository root (default: this checkout)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, func, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = add("build", cmd_build, cmd_build.__doc__)
    p.add_argument("targets", nargs="*", help="CMake targets (default: all)")
    p = add("run", cmd_run, cmd_run.__doc__)
    p.add_argument("id", help="run id, e.g. testing, starter/testing (see list-runs)")
    p = add("bless", cmd_bless, cmd_bless.__doc__)
    p.add_argument("ids", nargs="*", help="run ids")
    p.add_argument("--all", action="store_true", help="record every run")
    for p in (sub.choices["run"], sub.choices["bless"]):
        p.add_argument("--bin-dir", type=Path, default=None, help="where the built programs are")
        p.add_argument("--gpu", default=None, help="transcript folder under expected/ (default: this GPU)")
    p = add("check", cmd_check, cmd_check.__doc__)
    p.add_argument("--only", action="append", metavar="CHECK", help="run only this check (repeatable)")
    p = add("verify", cmd_verify, cmd_verify.__doc__)
    p.add_argument("--gpu", default=None)
    p.add_argument("--resume", action="store_true",
                   help="reuse what the existing record proves for unchanged sources; run the rest")
    p.add_argument("--deadline", type=float, default=270.0,
                   help="seconds after which unfinished jobs are recorded as failures")
    p.add_argument("--only", action="append", metavar="PROGRAM", help="verify only these programs")
    add("list-runs", cmd_list_runs, cmd_list_runs.__doc__)
    add("list-checks", cmd_list_checks, cmd_list_checks.__doc__)
    p = add("mutate", cmd_mutate, cmd_mutate.__doc__)
    p.add_argument("names", nargs="*", help="lessons (default: every lesson in the catalogue)")
    p.add_argument("--gpu", default=None)
    p = add("plot", cmd_plot, cmd_plot.__doc__)
    p.add_argument("kind", choices=["roofline", "sweep"])
    p.add_argument("csv", type=Path)
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    p = add("snippet", cmd_snippet, cmd_snippet.__doc__)
    p.add_argument("file", help="lesson name or path, e.g. testing or lessons/testing.cu")
    p.add_argument("name", help="snippet name")
    p = add("ce-link", cmd_ce_link, cmd_ce_link.__doc__)
    p.add_argument("name", help="lesson name, starter/NAME, or a path")
    add("sync", cmd_sync, cmd_sync.__doc__)
    p = add("exercise", cmd_exercise, cmd_exercise.__doc__)
    p.add_argument("action", choices=["start", "check"])
    p.add_argument("name", help="lesson name, e.g. testing")
    p.add_argument("--force", action="store_true", help="start: replace an existing exercise file")
    p.add_argument("--bin-dir", type=Path, default=None)
    p.add_argument("--gpu", default=None)
    p = add("cli-case", cmd_cli_case, cmd_cli_case.__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--row", required=True)
    return parser


def main(argv=None):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage
        return EXIT_USAGE if exc.code else EXIT_OK
    args.root = args.root.resolve()
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.func(args)
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except subprocess.CalledProcessError as exc:
        print(f"error: {' '.join(map(str, exc.cmd))} exited {exc.returncode}", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
