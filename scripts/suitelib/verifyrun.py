"""`verify` as one run in timed phases, meant to fit the GPU machine's ten-minute call with bless:

  build     the native tree (sm_75+sm_90) of every program; then, on every core but the timed
            runs' two, in the background: the sm_75-only tree, and every attempt, mutant and speed
            program (compiling is CPU work: it overlaps the timed phases, which use the GPU alone);
  budget    every lesson run's Compiler Explorer budget, one at a time, pinned to one core (its
            output is what the run jobs compare with the transcripts);
  anchors   the cuBLAS anchors, timed alone, interleaved (they need only the native tree, so the
            speed programs compile meanwhile);
  speed-builds  the wait for the speed programs' builds, if any is left;
  speed     the speed exercises, timed alone on an idle GPU;
  compile   what the background builds still need (their binaries are cached for their jobs);
  parallel  everything that times nothing, on every core at once, longest first: the CTest run
            of the command-line tables (native tree, no rebuild), the programs' sanitizer jobs (at
            most six at a time; an attempt's or a mutant's own sanitizer runs are not counted in
            that limit), mutants and attempts, the run jobs (a lesson's budget-phase output against
            its transcript and its sm_75 build's run against that; a starter's run) and repeats.

The record says how long each phase and the whole run took, with the command, whether the run was
partial, and the slowest jobs, so the next change to verify starts from figures, not guesses."""

import concurrent.futures
import datetime
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from . import SuiteError
from . import builds, catalogue, speed
from .anchors import lesson_runs, measure_anchors
from .model import data_recordings, lesson
from .running import ctest_gpu, run_measured
from .verify import (BUDGET, BUDGET_KEYS, build_tree, job_name, load_record, make_jobs, probe_entries, probe_targets,
                     program_entry, run_jobs, whole_run, write_record)

SLOWEST_KEPT = 80  # the slowest parallel jobs the record names


class Clock:
    """Wall time of named phases since t0, and a progress printer."""

    def __init__(self):
        self.t0, self.phases = time.monotonic(), {}

    def progress(self, text):
        print(f"[{time.monotonic() - self.t0:6.1f} s] {text}", flush=True)

    def run(self, name, fn, *args):
        start = time.monotonic()
        try:
            return fn(*args)
        finally:
            self.phases[name] = round(time.monotonic() - start, 1)
            self.progress(f"phase {name}: {self.phases[name]} s")

    def total(self):
        return round(time.monotonic() - self.t0, 1)


TIMED_CPUS = 2  # cores kept free of compiling for the timed runs (budget, anchors, speed)


def split_cpus():
    """(the timed runs' cores, the compilers' cores): all of them for both on a small machine."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) <= TIMED_CPUS + 1:
        return set(cpus), set(cpus)
    return set(cpus[:TIMED_CPUS]), set(cpus[TIMED_CPUS:])


def build_native(root, progs):
    """The native tree (the dev preset's: after `bless`, nothing to rebuild), with the anchor."""
    targets = [p.target for p in progs] + probe_targets(root)
    anchor = ["cublas_sgemm"] if (Path(root) / "anchors" / "CMakeLists.txt").exists() else []
    return build_tree(root, "dev", "75;90", targets, anchor)


def build_sm75(root, progs):
    return build_tree(root, "verify-sm75", "75", [p.target for p in progs] + probe_targets(root))


def compile_jobs(root, progs, cats, speed_names, tmp, sass=None):
    """The background builds: first the speed exercises' programs (the speed phase waits for them),
    then the sm_75 tree (the parallel phase's runs need it), then every attempt and mutant, the
    largest sources first."""
    jobs = [(("speed-build", name, ""), speed_build, (root, cats, name, tmp, sass)) for name in speed_names]
    jobs.append((("build", "verify-sm75", ""), build_sm75, (root, progs)))
    rest = []
    for p in progs:
        if p.is_starter or p.name not in cats:
            continue
        for a in cats[p.name].attempts:
            les, text = catalogue.attempt_program(root, a)
            rest.append((len(text), ("build", p.rel, "attempt " + a.name), catalogue.prebuild, (les, text, None, sass)))
        for m in cats[p.name].mutants:
            rest.append((len(p.text), ("build", p.rel, "mutant " + m.name), catalogue.prebuild,
                         (p, m.apply(p.text), m.arch, sass, True)))
    return jobs + [(key, fn, args) for _, key, fn, args in sorted(rest, key=lambda r: -r[0])]


class Background:
    """Jobs run on the compilers' cores while the main thread times on its own."""

    def __init__(self, jobs, cpus):
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, len(cpus)), initializer=lambda: os.sched_setaffinity(0, cpus))
        self.futures = {key: self.pool.submit(fn, *args) for key, fn, args in jobs}

    def result(self, key, deadline):
        """The job's result, or its error text (a SuiteError from a build, or the deadline)."""
        try:
            return self.futures[key].result(timeout=max(1.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            return f"{job_name(key)}: not built by the deadline"
        except SuiteError as exc:
            return str(exc)

    def wait(self, deadline):
        concurrent.futures.wait(list(self.futures.values()), timeout=max(1.0, deadline - time.monotonic()))
        self.pool.shutdown(wait=False, cancel_futures=True)


def budget_phase(progs, native):
    """Every lesson run's budget, one at a time on one core: the pane verdict reads which runs fit CE,
    and the run jobs compare each run's output (kept) with its transcript."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    return {p.rel: {r.id: run_measured(native / p.target, r.args, cpu) for r in p.runs()}
            for p in progs if not p.is_starter}


def speed_build(root, cats, name, tmp, sass=None):
    """{key: binary} of a speed exercise's programs (solution, slow reference, correct and slow
    attempts), with the GPU's own machine code (sass), built in the background so the speed phase
    only times; a SuiteError text when one fails."""
    folder = Path(tmp) / name
    folder.mkdir()
    try:
        return speed.build_all(lesson(root, name), speed.speed_texts(root, cats, name), folder, sass)
    except SuiteError as exc:
        return str(exc)


def parallel_jobs(root, progs, native, ptx75, gpu, cats, with_ctest, last=(), sass=None, measured=None):
    """Every untimed GPU job, the longest first so none is left alone at the end: those the last
    record names among its slowest by their time then, the rest by kind. measured: the budget
    phase's runs, which stand for the run jobs' native runs."""
    jobs = make_jobs(root, progs, native, ptx75, gpu, cats, sass, measured)
    if with_ctest:
        jobs.append((("ctest", "gpu", ""), ctest_gpu, (root, native.parent)))
    known = {j.get("job"): j.get("s", 0) for j in last if isinstance(j, dict)}
    return sorted(jobs, key=lambda job: (-known.get(job_name(job[0]), -1), job_rank(job)))


JOB_ORDER = ("ctest", "sanitizer", "attempt", "mutant", "run", "repeat")
TOOL_ORDER = ("racecheck", "memcheck", "initcheck", "synccheck")


def job_rank(job):
    """Sort key: by kind (JOB_ORDER), sanitizers by tool (racecheck, the slowest, first), starters
    with lessons (a starter's sanitizer runs as long as its lesson's: none may wait for the end)."""
    key = job[0]
    kind = JOB_ORDER.index(key[0]) if key[0] in JOB_ORDER else len(JOB_ORDER)
    tool = TOOL_ORDER.index(key[2]) if key[0] == "sanitizer" and key[2] in TOOL_ORDER else 0
    return (kind, tool)


def attempts_of(results, progs, cats):
    return [results.get(("attempt", p.rel, a.region, a.name)) or
            {"lesson": a.lesson, "region": a.region, "name": a.name, "kind": a.kind, "accepted": None,
             "outcome": "not finished"}
            for p in progs if p.name in cats and not p.is_starter for a in cats[p.name].attempts]


def merge_partial(record, old, progs, speed_names):
    """A partial run keeps every other program's entries, attempts, speed and anchors as recorded."""
    names = {p.name for p in progs}
    record["files"] = dict(old.get("files", {}))
    kept = [e for e in old.get("programs", []) if e.get("program") not in {x["program"] for x in record["programs"]}]
    record["programs"] = sorted(kept + record["programs"], key=lambda e: e["program"])
    record["student_attempts"] = [a for a in old.get("student_attempts", []) if a.get("lesson") not in names] \
        + record["student_attempts"]
    record["exercise_speed"] = [s for s in old.get("exercise_speed", []) if s.get("lesson") not in names] \
        + record["exercise_speed"]


def slowest(durations):
    top = sorted(durations.items(), key=lambda kv: -kv[1])[:SLOWEST_KEPT]
    return [{"job": job_name(key), "s": round(s, 1)} for key, s in top]


def write_job_log(root, jobs, durations):
    """build/verify-jobs.json: every parallel job's seconds, in the order they were queued (None:
    not started or not finished), for the next change to verify to start from."""
    (Path(root) / "build").mkdir(exist_ok=True)
    rows = [{"job": job_name(key), "s": round(durations[key], 1) if key in durations else None} for key, _, _ in jobs]
    (Path(root) / "build" / "verify-jobs.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def run_verify(root, args, facts, gpu, progs, cats):
    """The whole verification; returns the record it wrote (verify.json and verify.md)."""
    clock = Clock()
    lesson_runs(root)  # a malformed anchor run in course.json: one line now, not after the build
    # The sm_75 tree's programs (and, where nvidia-smi names no compute capability, so no sass is
    # added, every attempt and mutant) are binaries whose PTX the driver compiles at their first run;
    # a cache too small for them all would compile some again.
    os.environ.setdefault("CUDA_CACHE_MAXSIZE", str(4 << 30))
    # A cache of its own, writable wherever verify runs (an unwritable home would cache nothing).
    os.environ.setdefault("CUDA_CACHE_PATH", str(Path(root) / "build" / "jit-cache"))
    partial = bool(args.only)
    with_ctest = not args.no_ctest
    speed_names = [p.name for p in progs if not p.is_starter and p.name in cats and cats[p.name].speed]
    timed_cpus, build_cpus = split_cpus()
    sass = catalogue.native_arch()
    last = (load_record(root, gpu) or {}).get("slowest_jobs", [])
    deadline = clock.t0 + args.deadline
    with tempfile.TemporaryDirectory(prefix="suite-speed-") as tmp:
        # Each attempt, mutant and speed program is built once, in the background, for the job that runs it
        # (a correct or slow attempt the speed phase times too: the same build, from the cache).
        builds.BUILD_CACHE = builds.BuildCache(Path(tmp) / "builds")
        background = None
        try:
            native = clock.run("build", build_native, root, progs)
            background = Background(compile_jobs(root, progs, cats, speed_names, tmp, sass), build_cpus)
            # The timed phases run on cores no compiler uses, with the GPU to themselves.
            os.sched_setaffinity(0, timed_cpus)
            try:
                budget = clock.run("budget", budget_phase, progs, native)
                old = load_record(root, gpu) if partial else None
                # A partial verify measures only its lessons' anchors and keeps the others' as recorded.
                kept = [e for e in (old or {}).get("anchors", []) if e.get("lesson") not in {p.name for p in progs}]
                # The anchors need only the native tree: they run while the speed programs still compile
                # (the H200 record shows the speed phase waiting 22.7 s for them when it came first).
                anchors = clock.run("anchors", lambda: measure_anchors(root, native, gpu, clock.progress, kept=kept))
                built = clock.run("speed-builds", lambda: {name: background.result(("speed-build", name, ""), deadline)
                                                           for name in speed_names})
                timed = clock.run("speed", speed.speed_phase, root, cats, speed_names, clock.progress, None, built)
            finally:
                os.sched_setaffinity(0, timed_cpus | build_cpus)
            # What the background builds have left: the sm_75 tree, then every attempt and mutant.
            ptx75 = clock.run("compile", lambda: (background.result(("build", "verify-sm75", ""), deadline),
                                                  background.wait(deadline))[0])
            if isinstance(ptx75, str):
                raise SuiteError(ptx75)
            jobs = parallel_jobs(root, progs, native, ptx75, gpu, cats, with_ctest, last, sass, budget)
            clock.progress(f"parallel: {len(jobs)} jobs")
            results, durations = clock.run("parallel", run_jobs, jobs, deadline, clock.progress)
        finally:
            if background is not None:
                background.pool.shutdown(wait=False, cancel_futures=True)
            builds.BUILD_CACHE = None
    entries = [program_entry(p, results, cats) for p in progs]
    for e in entries:
        if e["program"] in budget:
            runs_budget = {rid: {k: b[k] for k in BUDGET_KEYS} for rid, b in budget[e["program"]].items()}
            e.update(runs_budget[next(iter(runs_budget))])  # the default run's, as the budget check reads it
            e["runs_budget"] = runs_budget
    record = {"gpu": facts.name, "toolkit": facts.toolkit,
              "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "command": "scripts/suite.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
              "partial": {"only": sorted(p.rel for p in progs)} if partial else False,
              "budget": BUDGET, "programs": entries, "student_attempts": attempts_of(results, progs, cats)}
    record["exercise_speed"] = timed
    record["common_kernels"] = probe_entries(root, results)
    if old:
        merge_partial(record, old, progs, speed_names)
    if partial:  # the last whole run's time stays the record's: check holds it to WHOLE_RUN_LIMIT_S
        record["whole_run"] = whole_run(old) if old else None
    record["anchors"] = anchors
    kept = (old or {}).get("ctest_gpu")  # --no-ctest: the last run's counts, marked as kept
    record["ctest_gpu"] = results.get(("ctest", "gpu", "")) if with_ctest else (dict(kept, kept=True) if kept else None)
    if with_ctest and record["ctest_gpu"] is None:
        record["ctest_gpu"] = {"passed": 0, "failed": 1, "skipped": 0, "note": "not finished by the deadline"}
    record["phases_s"] = dict(clock.phases)
    record["slowest_jobs"] = slowest(durations)
    write_job_log(root, jobs, durations)
    record["total_wall_s"] = clock.total()
    log = [n for p in progs for r in p.runs()
           for n in (results.get(("run", p.rel, r.id)) or {"notes": [f"{r.id}: not finished"]})["notes"]]
    verified = {run.transcript_path(gpu).relative_to(root).as_posix() for p in progs for run in p.runs()}
    verified |= {f"expected/{gpu}/data/{csv}" for name, _, csv, _, _ in data_recordings(root)
                 for p in progs if p.name == name and not p.is_starter}
    write_record(root, gpu, record, log, rehash=True if not partial else verified | {f"expected/{gpu}/data/anchors.csv"})
    return record
