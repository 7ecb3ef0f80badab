"""The GPU record: `verify` proves every program (transcripts, sanitizers, repeats, the sm_75 PTX
build, the Compiler Explorer budget of every run, mutants, student attempts judged over the runs up
to the first that rejects them, the speed exercises in a serial phase of their own, cuBLAS anchors,
the GPU CTest run) and writes expected/<gpu>/verify.json + verify.md with the sha256 of every file
it verified; `check --only verify-record` reads that record back."""

import hashlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, SuiteError, UsageError, read_text
from . import catalogue, commonkernels, exercises, panerecord, sanitize, speed
from .anchors import anchor_problems, anchor_table
from .catalogue import sanitizer_findings  # noqa: F401  (verify's jobs call it by this name)
from .model import Program, programs
from .running import ctest_gpu, run_binary
from .transcripts import mask, run_against_transcript

BUDGET = panerecord.BUDGET  # Compiler Explorer's budget; panerecord decides from it which runs fit
BUDGET_KEYS = ("wall_s_1core", "cpu_s_1core", "peak_rss_mib", "output_bytes")
# Each repeat runs a lesson's first Run: line again and must print what the first repeat printed
# (timings masked); its run job compares one more such run (the budget phase's) with the transcript,
# and the sm_75 PTX build's run with that. Three since 2026-12-02 (ten, then five, before): the
# parallel phase of a whole verify on the H200 is bound by how fast CUDA processes start there (about
# four a second, one after another: scripts/bench/process_starts.sh), and each repeat is one more.
REPEAT_RUNS = 3
SANITIZERS = ("memcheck", "racecheck", "initcheck", "synccheck")


# --- the record file ---------------------------------------------------------------------
def record_path(root, gpu=DEFAULT_GPU):
    return Path(root) / "expected" / gpu / "verify.json"


def load_record(root, gpu=DEFAULT_GPU):
    """The parsed record, None when absent, SuiteError (one line) when malformed."""
    path = record_path(root, gpu)
    if not path.exists():
        return None
    try:
        record = json.loads(read_text(path, "record"))
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path.relative_to(root)}:{exc.lineno}: malformed JSON: {exc.msg}")
    if not isinstance(record, dict) or not isinstance(record.get("programs", []), list):
        raise SuiteError(f"{path.relative_to(root)}:1: malformed record: not an object with a 'programs' list")
    return record


def verified_files(root, gpu):
    """Every transcript and data file under expected/<gpu>/ the record must cover."""
    base = Path(root) / "expected" / gpu
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in (".txt", ".csv", ".out"))


def file_hashes(root, gpu):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in verified_files(root, gpu)}


def changed_since_record(root, gpu=DEFAULT_GPU):
    """Files (rel paths) whose sha256 no longer matches the record's, or that it does not cover."""
    record = load_record(root, gpu)
    if record is None or "files" not in record:  # no record, or one from before files were hashed
        return []
    recorded = record["files"]
    return [rel for rel, digest in file_hashes(root, gpu).items() if recorded.get(rel) != digest]


# --- check --only verify-record ------------------------------------------------------------
def entry_problems(entry, where, lesson):
    """Findings, mismatches and budget overruns recorded in one program entry."""
    errors = []
    for key in ("transcript_match", "repeat_identical") + (("sm75_ptx_identical",) if lesson else ()):
        if entry.get(key) is not True:
            errors.append(f"{where}: {key} is not true")
    for tool in SANITIZERS:
        findings = entry.get("sanitizer", {}).get(tool)
        if findings != 0:
            errors.append(f"{where}: compute-sanitizer {tool} findings: {findings}")
    if lesson:
        for key, limit in BUDGET.items():
            value = entry.get(key)
            if not isinstance(value, (int, float)) or value > limit:
                errors.append(f"{where}: {key} = {value} exceeds the Compiler Explorer budget {limit}")
    for mutant in entry.get("mutants", []):
        if not mutant.get("killed") and not mutant.get("blind_spot"):
            errors.append(f"{where}: mutant '{mutant.get('name')}' survived")
    return errors


def _program_problems(root, record, rel, cats):
    entries = {e.get("program"): e for e in record.get("programs", [])}
    errors = []
    for prog in programs(root):
        entry, where = entries.get(prog.rel), f"{rel}: {prog.rel}"
        if entry is None:
            errors.append(f"{where}: missing from the GPU verification record (run verify)")
            continue
        if entry.get("source_key") != prog.source_key():
            errors.append(f"{where}: stale: verified from another version of the source (run verify)")
        errors += entry_problems(entry, where, lesson=not prog.is_starter)
        if not prog.is_starter:
            unmeasured = [r.id for r in prog.runs() if r.id not in entry.get("runs_budget", {})]
            if unmeasured:
                errors.append(f"{where}: no Compiler Explorer budget recorded for run(s) {', '.join(unmeasured)} "
                              f"(run verify): the pane verdict decides from it which runs fit Compiler Explorer")
            recorded = sorted(m.get("name", "") for m in entry.get("mutants", []))
            wanted = sorted(m.name for m in (cats[prog.name].mutants if prog.name in cats else []))
            if recorded != wanted:
                errors.append(f"{where}: the record's mutants {recorded} are not the catalogue's {wanted} "
                              f"(run verify or mutate)")
    return errors


def _attempt_problems(root, record, rel, cats):
    wanted = {(a.lesson, a.region, a.name, a.kind) for c in cats.values() for a in c.attempts}
    entries = record.get("student_attempts", [])
    have = {(e.get("lesson"), e.get("region"), e.get("name"), e.get("kind")) for e in entries}
    errors = [f"{rel}: student attempt {k[0]}/{k[1]}/{k[2]} ({k[3]}) is not in the record (run verify or attempts)"
              for k in sorted(wanted - have)]
    errors += [f"{rel}: recorded student attempt {k[0]}/{k[2]} is not in the catalogue any more" for k in sorted(have - wanted)]
    run_ids = {}
    blind = {(a.lesson, a.name) for c in cats.values() for a in c.attempts if a.blind_spot}
    for e in entries:
        if (e.get("lesson"), e.get("name")) in blind and e.get("kind") == "wrong":
            pass  # a named blind spot: accepted or not, the page says what judges it instead
        elif not exercises.attempt_entry_ok(e):
            errors.append(f"{rel}: {e.get('kind')} attempt {e.get('lesson')}/{e.get('name')} was "
                          f"{'accepted' if e.get('accepted') else 'rejected'}: {e.get('outcome')}")
        name = e.get("lesson")
        if name not in run_ids:
            path = Path(root) / "lessons" / f"{name}.cu"
            run_ids[name] = [r.id for r in Program(root, path).runs()] if path.is_file() else None
        if run_ids[name] is not None and e.get("runs") != run_ids[name] and not stopped_at_rejection(e, run_ids[name]):
            errors.append(f"{rel}: student attempt {name}/{e.get('name')} was judged over {e.get('runs')}, not "
                          f"every recorded run of lessons/{name}.cu {run_ids[name]}, nor those up to the one that "
                          f"rejected it (run verify or attempts)")
    return errors


def stopped_at_rejection(entry, run_ids):
    """A rejected attempt judged over the lesson's runs in order up to the one its outcome names
    (that run decided the verdict, so verify runs no more of them), or over none because it did not
    compile (as the student's check rejects it)."""
    runs, outcome = entry.get("runs"), str(entry.get("outcome", ""))
    if entry.get("accepted") is not False or not isinstance(runs, list) or len(runs) > len(run_ids):
        return False
    if not runs:
        return outcome.startswith(("does not compile", "cannot compile"))
    return runs == run_ids[:len(runs)] and outcome.startswith(f"rejected at {runs[-1]}:")


def _file_problems(root, record, rel, gpu):
    recorded = record.get("files", {})
    errors = []
    for path, digest in file_hashes(root, gpu).items():
        if path not in recorded:
            errors.append(f"{path}:1: not covered by the GPU record {rel} (run verify on the GPU)")
        elif recorded[path] != digest:
            errors.append(f"{path}:1: changed since the GPU record {rel} verified it (sha256 "
                          f"{recorded[path][:12]}..., now {digest[:12]}...): transcripts come only from the GPU")
    for path in sorted(set(recorded) - set(file_hashes(root, gpu))):
        errors.append(f"{rel}: records {path}, which no longer exists")
    return errors


def _ctest_problems(record, rel):
    counts = record.get("ctest_gpu")
    if not isinstance(counts, dict) or not all(isinstance(counts.get(k), int) for k in ("passed", "failed", "skipped")):
        return [f"{rel}: no ctest_gpu counts (passed, failed, skipped): run verify on the GPU"]
    return [f"{rel}: the GPU CTest run had {counts['failed']} failed tests"] if counts["failed"] else []


# The whole verify, its CTest run included, must leave room for bless --all in the GPU machine's 600 s
# call: five minutes. The record's whole run took 273.6 s on the H200 (2026-12-02; the one before,
# 340.7 s, ran the anchors after the speed phase and the slow attempts under the sanitizers).
WHOLE_RUN_LIMIT_S = 300


def whole_run(record):
    """The last whole verify's time: the record's own where it is a whole run; where a partial run
    (verify --only, --resume) wrote it, the one it carried over (None when there is none)."""
    if not record.get("partial"):
        return {k: record.get(k) for k in ("total_wall_s", "phases_s", "command")}
    return record.get("whole_run")


def _run_problems(record, rel):
    """The run itself: timed by phase, and the last whole verify within WHOLE_RUN_LIMIT_S (partial
    runs merged into a record never stand in for it)."""
    errors = []
    if not isinstance(record.get("phases_s"), dict):
        errors.append(f"{rel}: no per-phase wall times (phases_s): recorded before verify timed its phases (run verify)")
    whole = whole_run(record)
    if not isinstance(whole, dict):
        return errors + [f"{rel}: a partial verify's record with no whole verify behind it: run verify without "
                         f"--only or --resume (it must finish within {WHOLE_RUN_LIMIT_S} s)"]
    total = whole.get("total_wall_s")
    if isinstance(total, (int, float)) and total > WHOLE_RUN_LIMIT_S:
        errors.append(f"{rel}: the whole verify took {total} s, over its {WHOLE_RUN_LIMIT_S} s "
                      f"(phases: {whole.get('phases_s')}): make the new work concurrent or smaller")
    return errors


def speed_bars(cats):
    """{(lesson, region): bar} of today's speed rules."""
    return {(name, cat.speed.region): speed.bar_of(cat.speed) for name, cat in cats.items() if cat.speed}


def rejudge_speed(entries, bars=None):
    """Each speed entry's bar, threshold and attempt outcomes as today's rule decides them from its
    measurements (bars: speed_bars of today's catalogue; an exercise not in it keeps its recorded bar)."""
    for e in entries:
        if e.get("error") or not isinstance(e.get("slow_ratio"), (int, float)):
            continue
        W, spread = e["slow_ratio"], e.get("spread") or float("inf")
        e["bar"] = (bars or {}).get((e.get("lesson"), e.get("region")), e.get("bar", speed.SPEED_BAR))
        e["threshold"] = round(speed.speed_outcome(1.0, W, spread, e["bar"])[1], 4)
        for a in e.get("attempts", []):
            if isinstance(a.get("ratio"), (int, float)):
                a["outcome"] = speed.speed_outcome(a["ratio"], W, spread, e["bar"])[0]
        e["margins"] = speed_margins(e)
    return entries


def speed_margins(e):
    """How far the bar sits from the nearest correct attempt (bar / its ratio) and from the nearest
    slow one or the slow reference (its ratio / bar), each a factor over 1 where the verdict is right;
    the spread they must clear is e["spread"]."""
    T = e["threshold"]
    timed = [a for a in e.get("attempts", []) if isinstance(a.get("ratio"), (int, float)) and a["ratio"] > 0]
    correct = [T / a["ratio"] for a in timed if a.get("kind", "correct") == "correct"]
    slow = [a["ratio"] / T for a in timed if a.get("kind") == "slow"] + [e["slow_ratio"] / T]
    return {"correct": round(min(correct), 4) if correct else None, "slow": round(min(slow), 4), "spread": e.get("spread")}


def _speed_record_problems(record, cats, rel):
    """Speed entries only for exercises that have a speed rule today (a partial run keeps others' entries)."""
    errors = []
    for e in record.get("exercise_speed", []):
        if not isinstance(e, dict):
            errors.append(f"{rel}: a malformed speed record {str(e)[:40]!r} (run verify)")
            continue
        cat = cats.get(e.get("lesson"))
        if cat is None or cat.speed is None or cat.speed.region != e.get("region"):
            errors.append(f"{rel}: a speed record for {e.get('lesson')}/{e.get('region')}, which has no speed rule "
                          f"(run verify)")
    return errors


def check_verify_record(root, gpu=DEFAULT_GPU):
    """expected/<gpu>/verify.json covers every program, attempt and file, is current, records no failure."""
    rel = record_path(root, gpu).relative_to(root).as_posix()
    try:
        record = load_record(root, gpu)
        cats = catalogue.load(root)
    except SuiteError as exc:
        return [str(exc)]
    if record is None:
        return [f"{rel}:1: missing: run 'scripts/suite.py verify' on the GPU"]
    return (_program_problems(root, record, rel, cats) + _attempt_problems(root, record, rel, cats)
            + speed.speed_problems(record, cats, rel) + _speed_record_problems(record, cats, rel)
            + _run_problems(record, rel) + _common_kernel_problems(record, rel)
            + _file_problems(root, record, rel, gpu) + _ctest_problems(record, rel) + anchor_problems(root, record, rel))


# --- verify: composed from the run, sanitize and budget functions ---------------------------


def cuda_flags():
    """CMAKE_CUDA_FLAGS as the dev preset sets it ("$env{CUDAFLAGS} --threads=0"), to the byte."""
    return f"{os.environ.get('CUDAFLAGS', '')} --threads=0"


def build_tree(root, name, archs, targets, optional=()):
    """Configure and build targets (None: every default target) in build/NAME; optional targets
    (the anchor) may fail to exist."""
    bdir = Path(root) / "build" / name
    build = ["cmake", "--build", str(bdir)] + (["--target"] + targets if targets is not None else [])
    # --threads=0: nvcc compiles a file's architectures at once (a fresh build's longest file is
    # one of two architectures compiled in turn otherwise). The flags are the dev preset's, to the
    # byte ("$env{CUDAFLAGS} --threads=0"), so after `bless --all` (which builds through it) verify
    # rebuilds nothing; other flags made it recompile what bless had built (the H200 run of
    # 2026-12-02: build phase 30.9 s).
    for cmd in (["cmake", "-S", str(root), "-B", str(bdir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_CUDA_ARCHITECTURES={archs}", f"-DCMAKE_CUDA_FLAGS={cuda_flags()}"], build):
        if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
            raise SuiteError(f"verify: {' '.join(cmd[:4])} ... failed")
    for target in optional:
        subprocess.run(["cmake", "--build", str(bdir), "--target", target], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return bdir / "bin"


def job_run(native, ptx75, prog, run, gpu, measured=None):
    """A run against its transcript, and (lessons) the sm_75 PTX build against the native one.
    measured: the budget phase's run of the same native program and command line (its output
    kept), compared instead of running the program once more; None: run it here."""
    reuse = measured if measured and all(k in measured for k in ("stdout", "stderr", "exit_code")) else None
    result, cmp = run_against_transcript(run, native / prog.target, gpu,
                                         run_fn=(lambda binary, args: reuse) if reuse else None)
    notes = list(cmp.problems)
    ptx_same = None
    if not prog.is_starter:
        other = run_binary(ptx75 / prog.target, run.args)
        ptx_same = other["exit_code"] == result["exit_code"] and all(
            mask(other[k], device=True) == mask(result[k], device=True) for k in ("stdout", "stderr"))
        if not ptx_same:
            notes.append(f"{run.id}: the sm_75 PTX build prints differently from the native build")
    return {"exit_code": result["exit_code"], "notes": notes, "ptx_same": ptx_same}


def job_repeat(native, prog):
    r = run_binary(native / prog.target, prog.runs()[0].args)
    return (mask(r["stdout"]), mask(r["stderr"]), r["exit_code"])


SANITIZER_WORKERS = 6  # the programs' sanitizer jobs at once (attempts and mutants run their own inside their jobs)
# Jobs that hold the GPU for tens of seconds, and the workers kept from them for the short jobs
# (runs, repeats, mutants). On the H200 (2026-12-02) the short jobs, queued after the heavy ones,
# took the parallel phase's last 46-55 s with the GPU mostly under 30 % busy, each several times
# slower than alone; CUDA processes start there mostly one after another (scripts/bench/
# process_starts.sh). Kept workers let the short jobs run beside the heavy ones from the start;
# measured alone (2026-12-02, a whole verify: 320.5 s against 307.1 s without) they shortened
# nothing: what did was fewer launches under the sanitizers and fewer CUDA processes.
HEAVY_KINDS = ("sanitizer", "attempt", "ctest")
LIGHT_WORKERS = 4


def run_jobs(jobs, deadline, progress, workers=None):
    """Run (key, fn, args) jobs on every core, each worker taking the first queued job it
    may: at most SANITIZER_WORKERS sanitizer jobs and all but LIGHT_WORKERS workers on HEAVY_KINDS
    jobs at once, so neither a long sanitizer queue nor the heavy jobs hold every worker, and no
    worker idles while a job it may take waits. ({key: result} of those that finished by the
    deadline, {key: seconds each took}.) Twice as many workers as cores made the parallel phase
    longer on the H200 (2026-12-02: 193.9 s against 182.4 s; the load average read 35-46 on its 16
    cores)."""
    workers = workers or max(SANITIZER_WORKERS + 1, os.cpu_count() or 2)
    heavy = max(SANITIZER_WORKERS + 1, workers - LIGHT_WORKERS)
    queue, results, durations = list(jobs), {}, {}
    running = {"sanitizer": 0, "heavy": 0}
    cond = threading.Condition()

    def may(kind):
        return (kind != "sanitizer" or running["sanitizer"] < SANITIZER_WORKERS) and \
            (kind not in HEAVY_KINDS or running["heavy"] < heavy)

    def take():
        with cond:
            while True:
                if time.monotonic() > deadline:
                    return None
                for i, job in enumerate(queue):
                    if may(job[0][0]):
                        running["sanitizer"] += job[0][0] == "sanitizer"
                        running["heavy"] += job[0][0] in HEAVY_KINDS
                        return queue.pop(i)
                if not queue:
                    return None
                cond.wait(1.0)

    def worker():
        while True:
            job = take()
            if job is None:
                return
            key, fn, fargs = job
            start = time.monotonic()
            try:
                value = fn(*fargs)
            except Exception as exc:  # one job's crash is its failure, not the run's
                value = None
                progress(f"{job_name(key)}: failed: {type(exc).__name__}: {exc}")
            with cond:
                durations[key] = time.monotonic() - start
                if value is not None:
                    results[key] = value
                running["sanitizer"] -= key[0] == "sanitizer"
                running["heavy"] -= key[0] in HEAVY_KINDS
                cond.notify_all()
            progress(f"{key[0]} {key[1]}{' ' + str(key[2]) if len(key) > 2 and key[2] != '' else ''}: "
                     f"done in {durations[key]:.1f} s")

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    with cond:
        unfinished = len(jobs) - len(durations)
        if unfinished:
            progress(f"deadline reached: {unfinished} jobs not finished (recorded as failures)")
        return dict(results), dict(durations)


def job_name(key):
    return " ".join(str(k) for k in key if k != "")


def program_entry(prog, results, cats):
    """One program's record entry from the finished jobs (an unfinished job counts as a failure)."""
    e = {"program": prog.rel, "source_key": prog.source_key(), "sanitizer": {}}
    for tool in SANITIZERS:
        e["sanitizer"][tool] = results.get(("sanitizer", prog.rel, tool), (None, ""))[0]
    if commonkernels.racecheck_excludes(prog.text):
        e["racecheck_excludes"] = commonkernels.racecheck_excludes(prog.text)
    runs = [results.get(("run", prog.rel, run.id)) for run in prog.runs()]
    e["exit_code"] = runs[0]["exit_code"] if runs and runs[0] else None
    e["transcript_match"] = all(r is not None and not r["notes"] for r in runs)
    reps = [results.get(("repeat", prog.rel, i)) for i in range(repeats(prog))]
    e["repeat_runs"] = len(reps)
    e["repeat_identical"] = all(r is not None and r == reps[0] for r in reps)
    if not prog.is_starter:
        e["sm75_ptx_identical"] = all(r is not None and r["ptx_same"] for r in runs)
        e["mutants"] = [results.get(("mutant", prog.rel, m.name)) or
                        {"name": m.name, "description": m.description, "killed": False, "outcome": "not finished"}
                        for m in (cats[prog.name].mutants if prog.name in cats else [])]
    return e


# memcheck pads every allocation: a read past one buffer's end otherwise lands, unseen, in the
# next buffer when the allocator placed it right after (gemm_ladder's unguarded panel loads, in a
# diagnostic run on the H200 that no record holds). 64 KiB covers a row of the largest matrix a Sanitize: run uses.
MEMCHECK_PADDING = ["--padding", str(sanitize.PADDING_BYTES)]


def sanitizer_options(tool, opts):
    return (MEMCHECK_PADDING if tool == "memcheck" else []) + list(opts)


def sanitized(binary, args, tool, options, only=()):
    """sanitizer_findings; a starter's racecheck instruments only the kernels its exercise regions
    define or lie in (sanitize.region_kernels: the rest is its lesson's, byte for byte, which the
    lesson's own racecheck covers), and every kernel where the filter gives no summary."""
    if tool == "racecheck" and only:
        return sanitize.filtered_findings(binary, args, tool, options, only)
    return sanitizer_findings(binary, args, tool, options)


def repeats(prog):
    return 2 if prog.is_starter else REPEAT_RUNS


def probe_targets(root):
    return [target for _, _, target, src in commonkernels.COMMON_RACECHECK if (Path(root) / src).is_file()]


def probe_entries(root, results):
    """The record's common_kernels: each probe's racecheck findings (None: not finished or no summary)."""
    return [{"kernel": kernel, "program": src, "racecheck": results.get(("sanitizer", src, "racecheck"), (None, ""))[0]}
            for _, kernel, _, src in commonkernels.COMMON_RACECHECK if (Path(root) / src).is_file()]


def _common_kernel_problems(record, rel):
    """A kernel the programs' racecheck left out was racechecked by its probe, with no hazard."""
    left = {k for e in record.get("programs", []) for k in e.get("racecheck_excludes", [])}
    probed = {e.get("kernel"): e.get("racecheck") for e in record.get("common_kernels", [])}
    return [f"{rel}: racecheck left {k} out of the programs' runs, but its probe's racecheck found "
            f"{probed[k] if k in probed else 'no record'} (want 0: run verify)"
            for k in sorted(left) if probed.get(k) != 0]


def probe_jobs(root, native):
    """Each probe's racecheck, where its source exists."""
    return [(("sanitizer", src, "racecheck"), sanitizer_findings, (native / target, [], "racecheck"))
            for _, _, target, src in commonkernels.COMMON_RACECHECK if (Path(root) / src).is_file()]


def make_jobs(root, progs, native, ptx75, gpu, cats, sass=None, measured=None):
    """Every untimed GPU job; sass: the GPU's own machine code, built into each attempt beside its
    Build: line's targets (on the H200, sm_90: the exercise's CMake build carries it too), and into
    each mutant from the line's own PTX (so it runs the code the line builds), so no attempt or
    mutant waits on the PTX JIT; measured: {program: {run id: its budget run}}, whose output the run jobs
    compare with the transcripts instead of starting each lesson run once more (on the H200 CUDA
    processes start mostly one after another: scripts/bench/process_starts.sh)."""
    measured = measured or {}
    jobs = probe_jobs(root, native)
    for p in progs:
        opts, sargs = p.sanitize_spec()
        only = sanitize.region_kernels(p.text, kinds=("exercise",)) if p.is_starter else []
        skip = commonkernels.skip_options(commonkernels.racecheck_excludes(p.text))
        jobs += [(("sanitizer", p.rel, t), sanitized,
                  (native / p.target, sargs, t, sanitizer_options(t, opts) + (skip if t == "racecheck" else []), only))
                 for t in SANITIZERS]
        jobs += [(("run", p.rel, r.id), job_run, (native, ptx75, p, r, gpu, measured.get(p.rel, {}).get(r.id)))
                 for r in p.runs()]
        jobs += [(("repeat", p.rel, i), job_repeat, (native, p)) for i in range(repeats(p))]
        if not p.is_starter and p.name in cats:
            jobs += [(("mutant", p.rel, m.name), catalogue.run_mutant, (root, p, m, sass)) for m in cats[p.name].mutants]
            worded = cats[p.name].student_worded
            jobs += [(("attempt", p.rel, a.region, a.name), exercises.run_attempt, (root, a, gpu, worded, sass))
                     for a in cats[p.name].attempts]
    return jobs


def write_record(root, gpu, record, log=(), rehash=False):
    """verify.json and verify.md. Only a verify run that compared the transcripts (rehash=True)
    stores new sha256s of the transcript and data files; mutate and attempts keep the old ones."""
    out_dir = Path(root) / "expected" / gpu
    out_dir.mkdir(parents=True, exist_ok=True)
    rejudge_speed(record.get("exercise_speed", []), speed_bars(catalogue.load(root)))
    if rehash is True:
        record["files"] = file_hashes(root, gpu)
    elif rehash:  # a partial verify: only the files it verified get new hashes
        record["files"] = dict(record.get("files", {}), **{k: v for k, v in file_hashes(root, gpu).items() if k in rehash})
    (out_dir / "verify.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (out_dir / "verify.md").write_text(verify_table(record), encoding="utf-8")
    if log:
        (Path(root) / "build").mkdir(exist_ok=True)
        (Path(root) / "build" / "verify.log").write_text("\n\n".join(log) + "\n", encoding="utf-8")


def verify_table(record):
    scope = (f"a partial run of {', '.join(record['partial'].get('only', []))}; the other programs' entries are "
             f"kept from earlier runs" if record.get("partial") else "a whole run")
    phases = record.get("phases_s") or {}
    rows = [f"# GPU verification: {record['gpu']}, CUDA {record['toolkit']}, {record['recorded_at']}",
            "", f"`{record.get('command', 'scripts/suite.py verify')}` ({scope}): {record.get('total_wall_s')} s wall"
            + ("; by phase: " + ", ".join(f"{k} {v} s" for k, v in phases.items()) if phases else "") + ". "
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
    ctest = record.get("ctest_gpu")
    if ctest:
        rows += ["", f"GPU CTest run (`{ctest.get('command', 'cmake --workflow --preset gpu')}`): "
                     f"{ctest.get('passed')} passed, {ctest.get('failed')} failed, {ctest.get('skipped')} skipped"
                     + (f" ({', '.join(ctest['failed_tests'])})" if ctest.get("failed_tests") else "")
                     + (", kept from an earlier verify (this one ran with --no-ctest)" if ctest.get("kept") else "") + "."]
    if record.get("common_kernels"):
        rows += ["", "Common kernels racechecked by their probes (left out of every program's racecheck): "
                 + "; ".join(f"{e['kernel']} ({e['program']}): {e['racecheck']} hazards" for e in record["common_kernels"])
                 + "."]
    if record.get("slowest_jobs"):
        rows += ["", "Slowest jobs of the parallel phase: "
                 + "; ".join(f"{j['job']} {j['s']} s" for j in record["slowest_jobs"]) + "."]
    if record.get("student_attempts"):
        rows += ["", "## Student attempts (each judged over every recorded run of its lesson, up to the first "
                 "that rejects it)", "",
                 exercises.attempt_table(record["student_attempts"]).rstrip("\n")]
    if record.get("exercise_speed"):
        rows += ["", "## Speed exercises", "", speed_table(record["exercise_speed"]).rstrip("\n")]
    if record.get("anchors"):
        rows += ["", "## cuBLAS anchors", "", anchor_table(record["anchors"]).rstrip("\n")]
    return "\n".join(rows) + "\n"


def resume_selection(root, gpu):
    """--resume: the programs whose record entry is stale or shows a problem (the rest are kept)."""
    record = load_record(root, gpu) or {}
    good = {e.get("program") for e in record.get("programs", [])
            if not entry_problems(e, "", e.get("program", "").startswith("lessons/"))}
    redo = [p.rel for p in programs(root) if p.rel not in good or
            next(e for e in record["programs"] if e["program"] == p.rel)["source_key"] != p.source_key()]
    if not redo:
        raise SuiteError("verify --resume: every program's record is current; nothing to do")
    return redo


def record_ctest_only(root, gpu):
    """verify --ctest-only: run the GPU workflow and store its counts in the existing record."""
    record = load_record(root, gpu)
    if record is None:
        raise SuiteError(f"verify --ctest-only: expected/{gpu}/verify.json does not exist; run verify first")
    record["ctest_gpu"] = ctest_gpu(root)
    write_record(root, gpu, record)
    print(f"ctest_gpu: {record['ctest_gpu']} (log: build/verify-ctest.log)")
    return EXIT_FAIL if record["ctest_gpu"]["failed"] else EXIT_OK


def select_programs(root, only):
    progs = programs(root)
    if only:
        progs = [p for p in progs if p.name in only or p.rel in only]
        if not progs:
            raise UsageError(f"verify: --only {only} selects no program")
    return progs


def speed_table(entries):
    """The speed phase's measurements, judged by today's rule (speed.speed_outcome), as check does."""
    rows = ["| lesson | region | run | slow reference / solution | bar (today's rule) | spread | "
            "attempts (kind ratio: outcome) |", "|---|---|---|---|---|---|---|"]
    for e in entries:
        if e.get("error"):
            rows.append(f"| {e.get('lesson')} | {e.get('region')} | {e.get('run')} | not timed | | | {e['error'][:120]} |")
            continue
        W, spread = e.get("slow_ratio") or 0.0, e.get("spread") or float("inf")
        fraction = e.get("bar", speed.SPEED_BAR)
        tried = "; ".join(f"{a['name']} ({a.get('kind', 'correct')}) {a.get('ratio')}: "
                          + (speed.speed_outcome(a["ratio"], W, spread, fraction)[0]
                             if isinstance(a.get("ratio"), (int, float)) else "not timed")
                          for a in e.get("attempts", []))
        bar = speed.speed_outcome(1.0, W, spread, fraction)[1]
        run = " ".join([e['run']] + e.get("time_args", []))
        rows.append(f"| {e['lesson']} | {e['region']} | {run} | {e.get('slow_ratio')} | {bar:.4f} ({fraction} of the way) | "
                    f"{e.get('spread')} | {tried} |")
    return "\n".join(rows) + "\n"
