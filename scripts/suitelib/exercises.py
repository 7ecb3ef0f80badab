"""The student's loop and its one verdict.

`exercise start` copies a starter into exercises/ (never over work, never into the suite's own files).
`exercise check` judges the student's program by what it does, over EVERY run the lesson records: at
each Run: line it must exit as the lesson does and print the LESSON transcript's result lines
(measurements and device facts masked, the catalogue's student-worded lines dropped on both sides).
The catalogue's student attempts are judged by the same function over the same runs (judge_runs).
Where speed is the point (the catalogue's "speed" rule), a GPU check then times the student's kernel
against the lesson's own and a slow reference, alternating, and decides by speed_decision.
Without a GPU the same verdict comes from a pasted Compiler Explorer output pane, one run per pane
(check_pane); the verdict lists the runs still unjudged and how to produce each.
"""

import concurrent.futures
import json
import math
import os
import re
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, EXIT_SKIP, SuiteError, UsageError, read_text
from . import catalogue, running
from .model import find_lesson_run, lesson
from .transcripts import compare, parse_transcript, read_pasted

PROTECTED = ("lessons", "starter", "common", "expected")
# Compiler Explorer's budget for one run (DESIGN: ~20 s wall, half a core, a few hundred MiB, 32 KiB
# of output), as verify measures it on one core of the recording host, with headroom for a T4's
# slower host; verify records every run's figures, and a run within all of them is CE-feasible.
BUDGET = {"wall_s_1core": 5.0, "peak_rss_mib": 200.0, "output_bytes": 32768}


# --- the verdict of one run, and of every run ---------------------------------------------
def lesson_runs(root, name):
    """The lesson's recorded runs; one-line UsageError when its header has no Run: line."""
    runs = lesson(root, name).runs()
    if not runs:
        raise UsageError(f"lessons/{name}.cu has no '// Run:' line, so there is no recorded run to judge "
                         f"an exercise against")
    return runs


def expected_of(root, run, gpu):
    """The parsed LESSON transcript of a run (never the starter's)."""
    path = run.transcript_path(gpu)
    if not path.exists():
        have = sorted(p.name for p in (Path(root) / "expected").glob("*") if p.is_dir())
        raise UsageError(f"no transcript {path.relative_to(root)} to compare with (recorded GPUs: "
                         + (", ".join(have) or "none") + ")")
    return parse_transcript(path)


def verdict(expected, result, worded=(), label="your exercise"):
    """The exercise verdict of one run: the one comparison, device facts always masked, worded lines dropped."""
    return compare(expected, result, label, device=False, drop=worded)


def run_label(run):
    return "run " + run.command()


def judge_runs(root, name, gpu, worded, run_fn):
    """[(run, result, Comparison)] over every recorded run of the lesson; run_fn(args) -> result.

    The one function that judges a student's exercise and a catalogue attempt."""
    judged = []
    for run in lesson_runs(root, name):
        expected = expected_of(root, run, gpu)
        result = run_fn(run.args)
        judged.append((run, result, verdict(expected, result, worded, run_label(run))))
    return judged


def first_difference(run, cmp):
    """The one line a run gets: passed, or its first difference."""
    if cmp.ok:
        return f"{run_label(run)}: passed"
    return cmp.problems[0].splitlines()[0]


def decided(judged):
    """What decided, summed over the runs."""
    keys = ("result_lines", "worded_lines", "device_lines", "measurement_lines")
    n = {k: sum(getattr(c, k) for _, _, c in judged) for k in keys}
    return (f"{len(judged)} runs; {n['result_lines']} result lines compared, {n['worded_lines']} student-worded "
            f"ignored, {n['device_lines']} device facts not compared, {n['measurement_lines']} measurements masked")


def report(judged):
    """One line per run, then the verdict and the details of every run that differs."""
    lines = [first_difference(run, cmp) for run, _, cmp in judged]
    failed = [(run, result, cmp) for run, result, cmp in judged if not cmp.ok]
    if not failed:
        return lines + [f"All {len(judged)} recorded runs behave like the lesson.", "What decided: " + decided(judged)]
    lines += ["", f"Not there yet: {len(failed)} of {len(judged)} recorded runs differ from the lesson."]
    for run, result, cmp in failed:
        lines.append(f"--- {run_label(run)} (recorded as expected/.../{run.id}.txt):")
        if result["exit_code"] == EXIT_FAIL:
            lines.append("- exit 1: a gate failed or something is left to write (see GATE: / the stderr lines)")
        lines += ["- " + p for p in cmp.problems]
    return lines + ["", "What decided: " + decided(judged)]


# --- exercise start -------------------------------------------------------------------------
def protected_target(root, target):
    """The suite folder a target resolves into (symlinks followed), or None."""
    resolved = Path(target).resolve()
    for sub in PROTECTED:
        try:
            resolved.relative_to((Path(root) / sub).resolve())
            return sub
        except ValueError:
            continue
    return None


def start(root, name, force):
    les, starter = lesson(root, name), lesson(root, name, starter=True)
    target = Path(root) / "exercises" / (name + ".cu")
    inside = protected_target(root, target)
    if inside:
        raise UsageError(f"exercises/{name}.cu resolves to {target.resolve()}, inside {inside}/: refusing to "
                         f"write there (remove the link, then start again)")
    if (target.exists() or target.is_symlink()) and not force:
        raise SuiteError(f"exercises/{name}.cu already exists; not overwriting your work "
                         f"(add --force to replace it with a fresh copy of the starter)")
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(starter.path, target)
    print(f"copied {starter.rel} to exercises/{name}.cu (lesson: {les.rel}); edit the '// exercise:' "
          f"regions, then: scripts/suite.py exercise check {name}  (no GPU: scripts/suite.py exercise check "
          f"{name} --pane FILE, with FILE Compiler Explorer's output pane)")
    return EXIT_OK


# --- exercise check on a GPU ----------------------------------------------------------------
def exercise_binary(root, name, bin_dir):
    target = name + "_exercise"
    if bin_dir is not None:
        binary = Path(bin_dir) / target
        if not binary.is_file():
            raise UsageError(f"{binary} does not exist: the --bin-dir folder holds no {target} "
                             f"(build it with: scripts/suite.py build {target})")
        return binary
    try:
        running.cmake_build(root, [target])
    except UsageError:
        raise
    except SuiteError:
        raise SuiteError(f"exercises/{name}.cu does not compile (see the compiler output above)")
    return running.default_bin_dir(root) / target


def pane_route(name):
    return (f"run it on Compiler Explorer (scripts/suite.py ce-link exercises/{name}.cu), save the whole output "
            f"pane to a file and check it with: scripts/suite.py exercise check {name} --pane FILE")


def no_gpu(name, result=None):
    """Exit 77 where there is no GPU (one line naming the --pane route); a finding where one is present."""
    if result is not None and running.gpu_present():
        return running.skip_or_fail("your exercise", result)  # raises: the driver or device fails
    print(f"skipped: exercise check needs a CUDA GPU to run your program (exit 77); without one, "
          f"{pane_route(name)}", file=sys.stderr)
    return EXIT_SKIP


def worded_of(root, name):
    cats = catalogue.load(root)
    return cats[name].student_worded if name in cats else []


def speed_of(root, name):
    cats = catalogue.load(root)
    return cats[name].speed if name in cats else None


def check(root, name, bin_dir, gpu):
    lesson(root, name, starter=True)  # an exercise exists only for a lesson with a starter
    lesson_runs(root, name)
    path = Path(root) / "exercises" / (name + ".cu")
    if not path.exists():
        raise UsageError(f"exercise: exercises/{name}.cu does not exist; start it with "
                         f"'scripts/suite.py exercise start {name}'")
    facts = running.detect_gpu()
    folder = running.transcript_gpu(root, gpu, facts)
    if bin_dir is None and facts is None:
        return no_gpu(name)  # before a build that could not be run anyway
    binary = exercise_binary(root, name, bin_dir)
    judged = judge_runs(root, name, folder, worded_of(root, name), lambda args: running.run_binary(binary, args))
    skipped = next((result for _, result, _ in judged if result["exit_code"] == EXIT_SKIP), None)
    if skipped is not None:
        return no_gpu(name, skipped)
    print("\n".join(report(judged)))
    if not all(cmp.ok for _, _, cmp in judged):
        return EXIT_FAIL
    speed = speed_of(root, name)
    if speed is not None:
        if facts is None:
            print(f"skipped: speed is the point of '{speed.region}' and it is judged only where a GPU is "
                  f"detected (nvidia-smi found none)", file=sys.stderr)
            return EXIT_SKIP
        outcome, lines = speed_check(root, name, read_text(path, "exercise"), speed)
        print("\n".join(lines))
        if outcome != "passed":
            return EXIT_FAIL
    print("Congratulations: your exercise behaves like the lesson at every recorded run"
          + (" and its kernel is as fast as the design asks." if speed else "."))
    return EXIT_OK


# --- speed where speed is the point ---------------------------------------------------------
def figure_of(text, speed):
    """The measured figure of the region's kernel in a program's stdout, or None."""
    lines = text.splitlines()
    if speed.after:
        k = next((i for i, line in enumerate(lines) if re.search(speed.after, line)), None)
        if k is None:
            return None
        lines = lines[k + 1:]
    for line in lines:
        m = re.search(speed.figure, line)
        if m:
            try:
                value = float(m.group(1))
            except ValueError:
                return None
            return value if math.isfinite(value) and value > 0 else None
    return None


def time_rounds(binaries, args, speed, run_fn=None):
    """{key: [figure per round]} of binaries [(key, path)], run serially in `speed.rounds` rounds, the
    order rotated each round so no program always runs first (clocks warm up, a neighbour job ends).

    SuiteError naming the program when a run fails or prints no figure."""
    run_fn = run_fn or running.run_binary
    figures = {key: [] for key, _ in binaries}
    for r in range(speed.rounds):
        order = binaries[r % len(binaries):] + binaries[:r % len(binaries)]
        for key, path in order:
            result = run_fn(path, args)
            value = figure_of(result["stdout"], speed) if result["exit_code"] == EXIT_OK else None
            if value is None:
                raise SuiteError(f"speed: {key} ({' '.join(args) or 'no arguments'}) exited {result['exit_code']} "
                                 f"or printed no figure matching {speed.figure!r}: " + catalogue.one_line(result))
            figures[key].append(value)
    return figures


def speed_decision(student, solution, slow, better="lower"):
    """Decide from the rounds' figures (one per round, same round = same index).

    Work in cost (a time; 1/rate where higher is better). Per round, the student's cost and the slow
    reference's over the solution's; S and W are their medians; the spread is the largest max/min of
    one program's rounds. speed_outcome decides from S, W and the spread alone, so check re-judges a
    record's measurements with the rule of today."""
    cost = (lambda v: v) if better == "lower" else (lambda v: 1.0 / v)
    stu, sol, slo = ([cost(v) for v in xs] for xs in (student, solution, slow))
    S = statistics.median(a / b for a, b in zip(stu, sol))
    W = statistics.median(a / b for a, b in zip(slo, sol))
    spread = max(max(xs) / min(xs) for xs in (stu, sol, slo))
    outcome, T = speed_outcome(S, W, spread)
    return {"ratio": round(S, 4), "slow_ratio": round(W, 4), "threshold": round(T, 4),
            "spread": round(spread, 4), "separated": W > spread, "outcome": outcome}


# Where the bar sits between the solution (cost 1) and the slow reference (cost W), in log terms.
# Measured on the H200 (expected/h200/verify.json, exercise_speed): correct kernels of the same
# design written another way reach up to 0.55 of the way (report_data's padded tiles: 1.31 times
# the solution, the slow reference 1.64), so a bar at the midpoint (0.5) fails correct work; at
# three quarters it passes every correct attempt measured and still fails a kernel nearer the slow
# reference than that.
SPEED_BAR = 0.75


def speed_outcome(S, W, spread):
    """(outcome, bar T = W ** SPEED_BAR). The verdict is only as sure as the runs are steady:
      - W <= spread: the two references are not told apart on this GPU now: inconclusive;
      - S below T by more than half the spread (in log terms): passed;
      - S above T by more than half the spread: failed;
      - else inconclusive.
    With W > spread, S = 1 (the solution's own speed) passes and S = W fails."""
    T = W ** SPEED_BAR if W > 0 else 0.0
    half = math.sqrt(spread)
    if W <= spread:
        return "inconclusive", T
    if S * half < T:
        return "passed", T
    if S > T * half:
        return "failed", T
    return "inconclusive", T


def speed_message(d, speed, who="your kernel"):
    """Plain words for one speed decision, with what to look at."""
    unit = "time" if speed.better == "lower" else "cost (1 / rate)"
    facts = (f"{who}'s median {unit} is {d['ratio']:.2f} times the lesson's solution; {speed.slow_description} "
             f"is at {d['slow_ratio']:.2f} times; the bar is {d['threshold']:.2f} times (three quarters of the way "
             f"there, in log terms); "
             f"run-to-run spread {100 * (d['spread'] - 1):.1f}%")
    if d["outcome"] == "passed":
        return f"speed: passed: {facts}"
    if d["outcome"] == "failed":
        return f"speed: FAILED: {facts}. Look at: {speed.look_at}"
    why = ("the solution and the slow reference are not told apart by more than the spread"
           if not d["separated"] else f"{who} sits within the spread of the bar")
    return f"speed: inconclusive: re-run on an idle GPU ({why}): {facts}"


def speed_run(root, name, speed):
    return find_lesson_run(root, name, speed.args)


def reference_texts(root, name, speed):
    """(solution text, slow reference text): the lesson, and the lesson with the region made slow."""
    text = lesson(root, name).text
    return text, catalogue.replace_region(text, speed.region, speed.slow)


def build_all(prog, texts, tmp):
    """{key: binary} of texts {key: source}, each built with the lesson's Build: line in its own folder
    (the builds in parallel: compiling is CPU work; only the timing must run alone)."""
    folders = {key: Path(tmp) / key.replace(" ", "_") for key in texts}
    for folder in folders.values():
        folder.mkdir()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(texts), os.cpu_count() or 1))) as pool:
        built = dict(zip(texts, pool.map(lambda key: catalogue.build_in_scratch(prog, texts[key], folders[key]), texts)))
    out = {}
    for key, (binary, failure) in built.items():
        if binary is None:
            raise SuiteError(f"speed: {key}: {failure}")
        out[key] = binary
    return out


def speed_check(root, name, student_text, speed, run_fn=None):
    """(outcome, lines): the student's program against the solution and the slow reference, on this GPU."""
    run = speed_run(root, name, speed)
    solution, slow = reference_texts(root, name, speed)
    lines = [f"speed ('{speed.region}' is about speed): timing your program, the lesson's and {speed.slow_description} "
             f"at {run.command()}, {speed.rounds} alternating rounds each (all three built with the lesson's Build: line)"]
    with tempfile.TemporaryDirectory(prefix="suite-speed-") as tmp:
        bins = build_all(lesson(root, name), {"your program": student_text, "solution": solution,
                                              "slow reference": slow}, tmp)
        figures = time_rounds(list(bins.items()), run.args, speed, run_fn)
    d = speed_decision(figures["your program"], figures["solution"], figures["slow reference"], speed.better)
    return d["outcome"], lines + [speed_message(d, speed)]


# --- the same verdict from a pasted Compiler Explorer pane ----------------------------------
def load_budget_record(root, gpu=DEFAULT_GPU):
    """verify.json's program entries {program: entry}, {} when there is none or it cannot be read."""
    path = Path(root) / "expected" / gpu / "verify.json"
    try:
        record = json.loads(read_text(path, "record"))
        return {e["program"]: e for e in record.get("programs", []) if isinstance(e, dict) and "program" in e}
    except (SuiteError, json.JSONDecodeError, AttributeError, TypeError, KeyError):
        return {}


def run_budget(entries, run):
    """The budget figures verify recorded for a run (the default run's are the entry's own)."""
    entry = entries.get(run.program.rel, {})
    figures = entry.get("runs_budget", {}).get(run.id)
    if figures is None and run.index == 0 and all(k in entry for k in BUDGET):
        figures = {k: entry[k] for k in BUDGET}
    return figures


def ce_feasible(entries, run):
    """(True | False | None, why): a run fits Compiler Explorer when verify's record of it (measured on
    one core of the recording host) is within every limit of BUDGET; None where nothing is recorded."""
    figures = run_budget(entries, run)
    if not figures:
        return None, "its Compiler Explorer budget is not recorded yet (verify on the GPU records it)"
    over = [f"{k} {figures.get(k)} > {limit}" for k, limit in BUDGET.items()
            if not isinstance(figures.get(k), (int, float)) or figures[k] > limit]
    if over:
        return False, "needs a real GPU: it does not fit Compiler Explorer's budget (recorded " + ", ".join(over) + ")"
    return True, "fits Compiler Explorer's budget (recorded on one core: " + ", ".join(
        f"{k} {figures[k]}" for k in BUDGET) + ")"


def unjudged(root, name, done):
    """Lines naming every recorded run other than `done` and how to produce its pane."""
    entries = load_budget_record(root)
    lines = []
    for run in lesson_runs(root, name):
        if run.id == done.id:
            continue
        fits, why = ce_feasible(entries, run)
        args = " ".join(shlex.quote(a) for a in run.args)
        lines.append(f"- {run.command()}: {why}")
        if fits is False:
            lines.append(f"    judge it on a machine with a GPU: scripts/suite.py exercise check {name}")
            continue
        lines.append(f"    open: scripts/suite.py ce-link exercises/{name}.cu --args {shlex.quote(args)}  (a link "
                     f"that opens your file with these arguments in the executor)")
        lines.append(f"    then: scripts/suite.py exercise check {name} --pane FILE --args {shlex.quote(args)}")
    return lines


def read_pane(path, expected):
    """(result, notes) of a saved Compiler Explorer output pane, read by the reader `compare` uses."""
    result, notes = read_pasted(path, None, None, expected)
    # exercise check takes the whole pane, not compare's --stderr / --exit-code files
    return result, [note.replace("(give --stderr FILE)", "(save the whole pane, from 'Program returned:' on)")
                    .replace("(give --exit-code N)", "(save the whole pane, from 'Program returned:' on)")
                    for note in notes]


def check_pane(root, name, pane, args_text, gpu):
    """Judge one pasted Compiler Explorer output pane of the run whose arguments are args_text."""
    lesson(root, name, starter=True)
    runs = lesson_runs(root, name)
    try:
        argv = None if args_text is None else shlex.split(args_text)
    except ValueError as exc:
        raise UsageError(f"--args {args_text!r}: cannot split it into arguments ({exc})")
    run = runs[0] if argv is None else find_lesson_run(root, name, argv)
    folder = running.transcript_gpu(root, gpu, None)
    expected = expected_of(root, run, folder)
    result, notes = read_pane(pane, expected)
    cmp = verdict(expected, result, worded_of(root, name), run_label(run))
    for note in notes + cmp.notes:
        print("note: " + note)
    lines = [first_difference(run, cmp)]
    if not cmp.ok:
        lines += ["", f"Not there yet at {run.command()}:"] + ["- " + p for p in cmp.problems]
    lines.append("What decided: " + cmp.decided())
    speed = speed_of(root, name)
    if speed is not None:
        lines.append(f"speed: not judged from a pasted pane (speed is the point of '{speed.region}': "
                     f"scripts/suite.py exercise check {name} on a machine with a GPU judges it)")
    rest = unjudged(root, name, run)
    if rest:
        lines += ["", f"Not judged by this pane: {len(runs) - 1} of the {len(runs)} recorded runs (the exercise "
                      f"passes only when every run does; one pane per run):"] + rest
        if cmp.ok:
            lines += ["", f"Verdict: this pane's run passed; the exercise is done when the other "
                          f"{len(runs) - 1} pass too."]
    else:
        lines.append("This is the lesson's only recorded run.")
    print("\n".join(lines))
    return EXIT_OK if cmp.ok else EXIT_FAIL


# --- the catalogue's student attempts, judged by the student's function ----------------------
def attempt_entry_ok(entry):
    return entry.get("accepted") is (entry.get("kind") == "correct")


def run_attempt(root, attempt, gpu, worded):
    """Build one attempt with the lesson's Build line (once), judge it over every recorded run; record entry."""
    entry = {"lesson": attempt.lesson, "region": attempt.region, "name": attempt.name, "kind": attempt.kind,
             "runs": [run.id for run in lesson_runs(root, attempt.lesson)]}
    les = lesson(root, attempt.lesson)
    with tempfile.TemporaryDirectory(prefix="suite-attempt-") as tmp:
        binary, failure = catalogue.build_in_scratch(les, attempt.apply(catalogue.base_program(root, attempt).text), tmp)
        if binary is None:
            entry.update(accepted=False, outcome=failure)
            return entry
        judged = judge_runs(root, attempt.lesson, gpu, worded, lambda args: running.run_binary(binary, args))
    failed = [(run, cmp) for run, _, cmp in judged if not cmp.ok]
    entry["accepted"] = not failed
    entry["outcome"] = ("accepted: " + decided(judged)) if not failed else \
        (f"rejected at {failed[0][0].id}: " + failed[0][1].problems[0].splitlines()[0])[:300]
    return entry


def attempt_table(entries):
    rows = ["| lesson | region | attempt | kind | accepted | as it should | runs | outcome |",
            "|---|---|---|---|---|---|---|---|"]
    for e in entries:
        rows.append(f"| {e['lesson']} | {e['region']} | {e['name']} | {e['kind']} | {e['accepted']} | "
                    f"{'yes' if attempt_entry_ok(e) else 'NO'} | {len(e.get('runs', []))} | {e['outcome'][:120]} |")
    return "\n".join(rows) + "\n"


def speed_texts(root, cats, name):
    """{key: source} a speed exercise times: the solution, the slow reference, each correct attempt."""
    speed = cats[name].speed
    solution, slow = reference_texts(root, name, speed)
    texts = {"solution": solution, "slow reference": slow}
    texts.update({"attempt " + a.name: a.apply(catalogue.base_program(root, a).text) for a in speed_attempts(cats, name)})
    return texts


def speed_attempts(cats, name):
    return [a for a in cats[name].attempts if a.region == cats[name].speed.region and a.kind == "correct"]


def speed_phase(root, cats, names, progress=print, run_fn=None, built=None):
    """verify's serial speed phase: per speed exercise, the solution, the slow reference and every
    correct attempt of its region timed in alternating rounds; one record entry each. built: {name:
    {key: binary} or an error text} from verify's parallel phase; a name not in it is built here."""
    out = []
    for name in names:
        speed = cats[name].speed if name in cats else None
        if speed is None:
            continue
        run = speed_run(root, name, speed)
        correct = speed_attempts(cats, name)
        entry = {"lesson": name, "region": speed.region, "run": run.id, "figure": speed.figure,
                 "better": speed.better, "rounds": speed.rounds}
        try:
            with tempfile.TemporaryDirectory(prefix="suite-speed-") as tmp:
                bins = (built or {}).get(name)
                if bins is None:
                    progress(f"speed {name}/{speed.region}: building")
                    bins = build_all(lesson(root, name), speed_texts(root, cats, name), tmp)
                if isinstance(bins, str):
                    raise SuiteError(bins)
                progress(f"speed {name}/{speed.region}: timing {len(bins)} programs, {speed.rounds} rounds")
                figures = time_rounds(list(bins.items()), run.args, speed, run_fn)
        except SuiteError as exc:
            entry.update(error=str(exc), attempts=[{"name": a.name, "outcome": "not timed"} for a in correct])
            out.append(entry)
            continue
        ref = speed_decision(figures["slow reference"], figures["solution"], figures["slow reference"], speed.better)
        entry.update(solution_ratio=1.0, slow_ratio=ref["slow_ratio"], threshold=ref["threshold"],
                     spread=ref["spread"], separated=ref["separated"],
                     medians={k: statistics.median(v) for k, v in figures.items()}, attempts=[])
        for a in correct:
            d = speed_decision(figures["attempt " + a.name], figures["solution"], figures["slow reference"], speed.better)
            entry["attempts"].append({"name": a.name, "ratio": d["ratio"], "outcome": d["outcome"]})
        out.append(entry)
    return out


def speed_problems(record, cats, rel):
    """check verify-record: every speed exercise recorded, its references told apart, every correct attempt passed."""
    entries = {(e.get("lesson"), e.get("region")): e for e in record.get("exercise_speed", []) if isinstance(e, dict)}
    errors = []
    for name, cat in sorted(cats.items()):
        if cat.speed is None:
            continue
        e = entries.get((name, cat.speed.region))
        if e is None:
            errors.append(f"{rel}: speed exercise {name}/{cat.speed.region} has no exercise_speed record (run verify)")
            continue
        if e.get("error"):
            errors.append(f"{rel}: speed exercise {name}/{cat.speed.region} was not timed: {e['error'][:200]}")
            continue
        if not (e.get("slow_ratio") or 0.0) > (e.get("spread") or float("inf")):  # from the measurements
            errors.append(f"{rel}: speed exercise {name}/{cat.speed.region}: the slow reference ({e.get('slow_ratio')} "
                          f"times the solution) is not told apart from it by more than the spread {e.get('spread')}")
        recorded = {a.get("name"): a for a in e.get("attempts", [])}
        for a in cat.attempts:
            if a.region != cat.speed.region or a.kind != "correct":
                continue
            got = recorded.get(a.name)
            if got is None:
                errors.append(f"{rel}: correct attempt {name}/{a.name} has no speed record (run verify)")
            else:  # re-judged from the recorded measurements with today's rule
                outcome, bar = speed_outcome(got.get("ratio") or 0.0, e.get("slow_ratio") or 0.0,
                                             e.get("spread") or float("inf"))
                if outcome != "passed":
                    errors.append(f"{rel}: correct attempt {name}/{a.name} did not pass the speed check: "
                                  f"{outcome} at {got.get('ratio')} times the solution (bar {bar:.4f})")
    return errors
