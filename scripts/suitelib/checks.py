"""Static checks (no GPU): each returns a list of 'file:line: message' strings. `check` never
writes; `sync` writes what the common and starters checks compare against (generate.py)."""

import concurrent.futures
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import DEFAULT_GPU, SuiteError
from .generate import canonical_block
from .model import all_runs, clip, first_difference, parse_regions, programs, segments
from .transcripts import parse_transcript, staleness


def check_markers(root):
    """Markers are well formed, balanced, unique; the header has one Build: and a Run: line."""
    errors = []
    for prog in programs(root):
        regions, problems = parse_regions(prog.rel, prog.text)
        errors += problems
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
        for region in regions:
            if region.kind == wrong:
                errors.append(f"{prog.rel}:{region.open_line}: a {'starter' if prog.is_starter else 'lesson'} "
                              f"may not hold '{wrong}' regions")
    return errors


def check_common(root):
    """Every fenced common block is a byte-for-byte copy of common/NAME.cuh (sync writes them)."""
    errors = []
    for prog in programs(root):
        regions, _ = parse_regions(prog.rel, prog.text)
        if "cuda_check" not in [r.name for r in regions if r.kind == "common"]:
            errors.append(f"{prog.rel}:1: does not carry the common block 'cuda_check' (error macro, exit 77)")
        for region in (r for r in regions if r.kind == "common"):
            canon = canonical_block(root, region.name)
            if canon is None:
                errors.append(f"{prog.rel}:{region.open_line}: unknown common block '{region.name}' "
                              f"(no common/{region.name}.cuh)")
                continue
            want, have = canon.splitlines(keepends=True), region.body.splitlines(keepends=True)
            i = first_difference(want, have)
            if i is not None:
                errors.append(f"{prog.rel}:{region.open_line + 1 + i}: copy of common block '{region.name}' "
                              f"differs from common/{region.name}.cuh line {i + 1}: expected "
                              f"{clip(want[i] if i < len(want) else None)}, found "
                              f"{clip(have[i] if i < len(have) else None)} (scripts/suite.py sync rewrites it)")
    return errors


def _drift(lesson, starter):
    l_out, l_names = segments(lesson.text, "solution")
    s_out, s_names = segments(starter.text, "exercise")
    if not l_names:
        return [f"{lesson.rel}:1: lesson has no '// solution: NAME' region"]
    if l_names != s_names:
        return [f"{starter.rel}:1: exercise regions {s_names} do not match the lesson's "
                f"solution regions {l_names} (same names, same order)"]
    for (l_start, l_lines), (s_start, s_lines) in zip(l_out, s_out):
        l_norm = [x.replace("// solution:", "// REGION:").replace("// end solution", "// end REGION") for x in l_lines]
        s_norm = [x.replace("// exercise:", "// REGION:").replace("// end exercise", "// end REGION") for x in s_lines]
        i = first_difference(l_norm, s_norm)
        if i is not None:
            return [f"{starter.rel}:{s_start + i}: drifted from {lesson.rel}:{l_start + i} outside the exercise "
                    f"regions: lesson has {clip(l_norm[i] if i < len(l_norm) else None)}, starter has "
                    f"{clip(s_norm[i] if i < len(s_norm) else None)} (scripts/suite.py sync regenerates it)"]
    return []


def check_starters(root):
    """Each lesson has a starter; outside solution/exercise regions they are identical."""
    errors = []
    les = {p.name: p for p in programs(root) if not p.is_starter}
    sta = {p.name: p for p in programs(root) if p.is_starter}
    for name in sorted(set(les) - set(sta)):
        errors.append(f"{les[name].rel}:1: lesson has no starter (starter/{name}.cu)")
    for name in sorted(set(sta) - set(les)):
        errors.append(f"{sta[name].rel}:1: starter has no lesson (lessons/{name}.cu)")
    for name in sorted(set(les) & set(sta)):
        errors += _drift(les[name], sta[name])
    return errors


WARNINGS_AS_ERRORS = ("-Xcompiler=-Wall,-Wextra,-Werror", "-Werror=all-warnings")


def build_line_problems(prog):
    """Compile one file with its Build: line, alone, in an empty folder; it must produce -o's file."""
    header = prog.header()["Build"]
    if len(header) != 1:
        return []  # reported by the markers check
    no, cmd = header[0]
    argv = shlex.split(cmd)
    if not argv or argv[0] != "nvcc":
        return [f"{prog.rel}:{no}: Build: line must start with nvcc: {cmd}"]
    if prog.path.name not in argv or "-o" not in argv or argv.index("-o") + 1 >= len(argv):
        return [f"{prog.rel}:{no}: Build: line must compile {prog.path.name} with -o {prog.name}"]
    out = argv[argv.index("-o") + 1]
    # Warnings are findings: the line is compiled as written plus flags that only turn
    # warnings into errors (they can make a build fail, never make a failing one pass).
    argv = argv + list(WARNINGS_AS_ERRORS)
    with tempfile.TemporaryDirectory(prefix="suite-build-") as tmp:
        shutil.copy(prog.path, Path(tmp) / prog.path.name)
        try:
            done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [f"{prog.rel}:{no}: Build: line could not run: {exc}"]
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["(no output)"])[0]
            return [f"{prog.rel}:{no}: Build: line fails alone in an empty folder (exit {done.returncode}): {first}"]
        if not (Path(tmp) / out).is_file():
            return [f"{prog.rel}:{no}: Build: line produced no '{out}'"]
    return []


def check_build_lines(root):
    """Every file's Build: line compiles that file alone in an empty folder (in parallel)."""
    workers = max(1, min(4, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(build_line_problems, programs(root)))
    return [e for r in results for e in r]


def check_transcripts(root, gpu=DEFAULT_GPU):
    """Every run has a well-formed transcript recorded from the current source; no orphans."""
    errors, wanted = [], set()
    for run in all_runs(root):
        path = run.transcript_path(gpu)
        wanted.add(path)
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
        stale = staleness(run, info)
        if stale:
            errors.append(f"{rel}:{4 if stale.startswith('stale') else 2}: {stale}")
    base = Path(root) / "expected" / gpu
    for path in sorted(base.rglob("*.txt")) if base.is_dir() else []:
        if path not in wanted:
            errors.append(f"{path.relative_to(root)}:1: orphan transcript: no Run: line records it")
    return errors


def registry():
    """name -> check function (the order `check` runs them in)."""
    from .catalogue import check_attempts, check_mutants
    from .docs import check_docs
    from .verify import check_verify_record
    return {
        "markers": check_markers, "common": check_common, "starters": check_starters,
        "build-lines": check_build_lines, "transcripts": check_transcripts,
        "verify-record": check_verify_record, "docs": check_docs,
        "mutants": check_mutants, "attempts": check_attempts,
    }
