"""Static checks (no GPU): each returns a list of 'file:line: message' strings. `check` never
writes. The common, starters and docs checks are `sync` in dry run: they diff each file against the
text generate.sync_plan computes, the same text `sync` writes."""

import concurrent.futures
import difflib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import DEFAULT_GPU, SuiteError
from . import docs, generate, plots, ptxfacts, spoilers
from .catalogue import check_attempts, check_mutants
from .model import all_runs, clip, parse_regions, programs
from .transcripts import parse_transcript, staleness
from .verify import check_verify_record


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


IDEA_BY_LINE = 120  # the design's bound: a lesson's first kernel or exercise opens within it


def idea_first_problems(rel, text):
    """A lesson's first kernel (a `__global__` line outside the common blocks) or solution/exercise
    region opens by IDEA_BY_LINE, and no toolkit declarations (a `common: *_decl` block) precede it."""
    regions, _ = parse_regions(rel, text)  # malformed markers: the markers check reports them
    common = [(r.open_line, r.close_line) for r in regions if r.kind == "common"]
    kernels = [no for no, line in enumerate(text.splitlines(), 1)
               if re.search(r"\b__global__\b", line.split("//")[0])
               and not any(a < no < b for a, b in common)]
    firsts = kernels[:1] + [r.open_line for r in regions if r.kind in ("solution", "exercise")]
    if not firsts:
        return [f"{rel}:1: no __global__ kernel and no solution region: a lesson tells its idea first"]
    idea, errors = min(firsts), []
    if idea > IDEA_BY_LINE:
        errors.append(f"{rel}:{idea}: the first kernel or exercise region opens at line {idea}, past line "
                      f"{IDEA_BY_LINE}: put the idea and its kernels right after the header, and what they "
                      f"do not need after them")
    early = [r for r in regions if r.kind == "common" and r.name.endswith("_decl") and r.open_line < idea]
    if early:
        more = f" and {len(early) - 1} more" if len(early) > 1 else ""
        errors.append(f"{rel}:{early[0].open_line}: toolkit declarations (common block '{early[0].name}'{more}) "
                      f"come before the first kernel or exercise region (line {idea}): move them after it, "
                      f"into the machinery band before the code that first needs them")
    return errors


def check_idea_first(root):
    """Every lesson opens with its idea: its first kernel or exercise region within the first
    IDEA_BY_LINE lines, the toolkit's declarations after it (starters follow their lessons)."""
    return [e for prog in programs(root) if not prog.is_starter for e in idea_first_problems(prog.rel, prog.text)]


def _common_bodies(item):
    """[(name, first 0-based body line, end)] of the common regions of a file's current text."""
    regions, _ = parse_regions(item.rel, item.old)
    return [(r.name, r.open_line, r.close_line - 1) for r in regions if r.kind == "common"]


def _differences(item):
    """Each differing stretch of a source against its planned text, as (check, message): a stretch
    copied from common/ (or lying in a common region) belongs to 'common', any other to 'starters'."""
    old, new = item.old.splitlines(keepends=True), item.new.splitlines(keepends=True)
    bodies, found = _common_bodies(item), []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        have, want = (old[i1] if i1 < i2 else None), (new[j1] if j1 < j2 else None)
        origin = item.origins[j1] if j1 < j2 else None
        inside = next((b for b in bodies if b[1] <= i1 < b[2]), None)
        if origin and origin[0].startswith("common/"):
            name, line = origin[0][len("common/"):-len(".cuh")], origin[1]
        elif inside:
            name, line = inside[0], i1 - inside[1] + 1
        else:
            name = None
        if name is not None:
            found.append(("common", f"{item.rel}:{i1 + 1}: copy of common block '{name}' differs from "
                                    f"common/{name}.cuh line {line}: expected {clip(want)}, found {clip(have)} "
                                    f"(scripts/suite.py sync rewrites it)"))
            continue
        # A starter line that differs from its lesson: name the lesson line it should equal.
        lesson_at = next((o for o in item.origins[j1:] if o[0].startswith("lessons/")), None)
        where = f"{lesson_at[0]}:{lesson_at[1]}" if lesson_at else "its lesson (end of file)"
        found.append(("starters", f"{item.rel}:{i1 + 1}: drifted from {where} outside the exercise regions: "
                                  f"lesson has {clip(want)}, starter has {clip(have)} "
                                  f"(scripts/suite.py sync regenerates it)"))
    return found


MAX_DIFFERENCES = 5  # per file and check: enough to see the change, short enough to read


def _plan_problems(plan, check):
    """The problems of one check in a sync plan: the plan's own errors, then each file's differences
    from what sync would write (at most MAX_DIFFERENCES lines per file)."""
    errors = []
    for item in plan:
        errors += [e for owner, e in item.errors if owner == check]
        if item.new is None or item.old == item.new or item.errors:
            continue
        mine = [message for owner, message in _differences(item) if owner == check]
        errors += mine[:MAX_DIFFERENCES]
        if len(mine) > MAX_DIFFERENCES:
            errors.append(f"{item.rel}:1: ... and {len(mine) - MAX_DIFFERENCES} more differences "
                          f"(scripts/suite.py sync rewrites them)")
    return errors


def check_common(root):
    """Every fenced common block is a byte-for-byte copy of common/NAME.cuh: the common part of the
    sync plan, diffed."""
    errors = []
    for prog in programs(root):
        regions, _ = parse_regions(prog.rel, prog.text)
        if "cuda_check" not in [r.name for r in regions if r.kind == "common"]:
            errors.append(f"{prog.rel}:1: does not carry the common block 'cuda_check' (error macro, exit 77)")
    return errors + _plan_problems(generate.source_plan(root), "common")


def check_starters(root):
    """Each lesson has a starter; outside solution/exercise regions they are identical: the starter
    part of the sync plan, diffed."""
    errors = []
    les = {p.name: p for p in programs(root) if not p.is_starter}
    sta = {p.name: p for p in programs(root) if p.is_starter}
    for name in sorted(set(les) - set(sta)):
        errors.append(f"{les[name].rel}:1: lesson has no starter (starter/{name}.cu)")
    for name in sorted(set(sta) - set(les)):
        errors.append(f"{sta[name].rel}:1: starter has no lesson (lessons/{name}.cu)")
    return errors + _plan_problems(generate.source_plan(root), "starters")


def check_docs(root, gpu=DEFAULT_GPU):
    """The pages and the link file are what sync writes (snippets, output excerpts, commands, the lesson
    table, CE links, figures from records), and each page keeps the rules sync cannot fix
    (docs.page_findings: no measured figure without a record, no solution outside a spoiler fold)."""
    errors = [f"{rel}:1: missing" for rel in docs.doc_files(root) if not (Path(root) / rel).exists()]
    for item in generate.page_plan(root, gpu):  # pages as sync writes them, from the synced sources
        errors += [e for _, e in item.errors]
        if item.new is not None and item.new != (item.old or "") and not item.errors:
            errors.append(docs.stale_message(root, item.rel, item.old or "", item.new))
    for rel in docs.doc_files(root):
        if (Path(root) / rel).exists():
            errors += docs.page_findings(root, rel)
    return errors


def check_charts(root, gpu=DEFAULT_GPU):
    """Each recorded chart is the one expected/<gpu>/data/charts.json hashes (plots.check_charts)."""
    checker = getattr(plots, "check_charts", None)
    return checker(root, gpu) if checker else []


WARNINGS_AS_ERRORS = ("-Xcompiler=-Wall,-Wextra,-Werror", "-Werror=all-warnings")


def build_line_problems(prog):
    """Compile one file with its Build: line, alone, in an empty folder; it must produce -o's file."""
    header = prog.header()["Build"]
    if len(header) != 1:
        return []  # reported by the markers check
    no, cmd = header[0]
    try:
        argv = prog.build_argv()
    except SuiteError as exc:  # an unbalanced quote
        return [str(exc)]
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
    progs = programs(root)
    # The largest files compile longest: started first, they do not trail the pool (findings keep
    # the programs' order).
    order = sorted(range(len(progs)), key=lambda i: -progs[i].path.stat().st_size)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        found = dict(zip(order, pool.map(build_line_problems, [progs[i] for i in order])))
    return [e for i in range(len(progs)) for e in found[i]]


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
    return {
        "markers": check_markers, "idea-first": check_idea_first, "common": check_common, "starters": check_starters,
        "build-lines": check_build_lines, "ptx-facts": ptxfacts.check_ptx_facts, "transcripts": check_transcripts,
        "verify-record": check_verify_record, "charts": check_charts, "docs": check_docs,
        "spoilers": spoilers.check_spoilers,
        "mutants": check_mutants, "attempts": check_attempts,
    }
