"""Speed where speed is the point (the catalogue's "speed" rule): on a GPU, the student's kernel is
timed against the lesson's own and a slow reference, alternating, and decided by speed_decision;
verify's serial speed phase times every correct and slow attempt the same way, and `check`
re-judges the recorded measurements (speed_problems).
"""

import concurrent.futures
import math
import os
import re
import shlex
import statistics
import tempfile
from pathlib import Path

from . import EXIT_OK, EXIT_USAGE, SuiteError
from . import catalogue, running
from .model import find_lesson_run, lesson


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


def time_rounds(binaries, args, speed, run_fn=None, dropped=None):
    """{key: [figure per round]} of binaries [(key, path)], run serially in `speed.rounds` rounds, the
    order rotated each round so no program always runs first (clocks warm up, a neighbour job ends).

    SuiteError naming the program when a run fails or prints no figure; with `dropped` (a dict), a
    program whose key starts with "attempt " is dropped instead, its reason kept in dropped[key], so
    one failing attempt does not leave the references and the other attempts untimed."""
    run_fn = run_fn or running.run_binary
    figures = {key: [] for key, _ in binaries}
    for r in range(speed.rounds):
        order = binaries[r % len(binaries):] + binaries[:r % len(binaries)]
        for key, path in order:
            if dropped is not None and key in dropped:
                continue
            result = run_fn(path, args)
            value = figure_of(result["stdout"], speed) if result["exit_code"] == EXIT_OK else None
            if value is None:
                why = (f"speed: {key} ({' '.join(args) or 'no arguments'}) exited {result['exit_code']} "
                       f"or printed no figure matching {speed.figure!r}: " + catalogue.one_line(result))
                if dropped is None or not key.startswith("attempt "):
                    raise SuiteError(why)
                dropped[key] = why
                continue
            figures[key].append(value)
    return figures


def speed_decision(student, solution, slow, better="lower", bar=None):
    """Decide from the rounds' figures (one per round, same round = same index).

    Work in cost (a time; 1/rate where higher is better). Per round, the student's cost and the slow
    reference's over the solution's; S and W are their medians; the spread is the largest max/min of
    one program's rounds. speed_outcome decides from S, W, the spread and the exercise's bar alone, so
    check re-judges a record's measurements with the rule of today."""
    cost = (lambda v: v) if better == "lower" else (lambda v: 1.0 / v)
    stu, sol, slo = ([cost(v) for v in xs] for xs in (student, solution, slow))
    S = statistics.median(a / b for a, b in zip(stu, sol))
    W = statistics.median(a / b for a, b in zip(slo, sol))
    spread = max(max(xs) / min(xs) for xs in (stu, sol, slo))
    outcome, T = speed_outcome(S, W, spread, bar)
    return {"ratio": round(S, 4), "slow_ratio": round(W, 4), "threshold": round(T, 4),
            "spread": round(spread, 4), "separated": W > spread, "outcome": outcome,
            "bar": SPEED_BAR if bar is None else bar}


# Where the bar sits between the solution (cost 1) and the slow reference (cost W), in log terms,
# unless an exercise's catalogue sets its own ("bar"). Measured on the H200 (expected/h200/verify.json,
# exercise_speed, with its margins): report_data's correct tiled kernels reach 1.48 times the
# solution (an A tile stored transposed, with a bank conflict this lesson does not teach) against
# the untiled slow reference's 1.64, 0.79 of the way, so its bar sits at 0.9; gemm_ladder's slow
# reference (sums output by output, no fragment loops) is only about 1.3 times its solution, which
# its correct attempts never exceed, so its bar sits halfway. Both set their own: no exercise uses
# this default today (the value an earlier record chose, when correct variants reached 0.55 of
# the way to report_data's slow reference).
SPEED_BAR = 0.75


def bar_of(spec):
    """The exercise's bar (its catalogue's "bar", else SPEED_BAR)."""
    return SPEED_BAR if spec is None or spec.bar is None else spec.bar


def speed_outcome(S, W, spread, bar=None):
    """(outcome, bar T = W ** bar). The verdict is only as sure as the runs are steady:
      - W <= spread: the two references are not told apart on this GPU now: inconclusive;
      - S below T by more than half the spread (in log terms): passed;
      - S above T by more than half the spread: failed;
      - else inconclusive.
    With W > spread, S = 1 (the solution's own speed) passes; S = W fails once
    W > spread ** (1 / (2 (1 - bar))): spread squared at the default bar of 0.75, spread itself at 0.5."""
    bar = SPEED_BAR if bar is None else bar
    T = W ** bar if W > 0 else 0.0
    half = math.sqrt(spread)
    if W <= spread:
        return "inconclusive", T
    if S * half < T:
        return "passed", T
    if S > T * half:
        return "failed", T
    return "inconclusive", T


# What slows a correct kernel of the exercise's design, each with a way to see it that needs no
# profiler. The check times programs and nothing else, so a failed verdict offers these as
# possibilities; it never says which one it was.
USUAL_CAUSES = (
    ("operands read again instead of reused", "count the loads from global and from shared memory "
     "per multiply-add in your inner loop, against the lesson's"),
    ("shared-memory bank conflicts", "write down the word each of a warp's 32 threads touches in one "
     "shared-memory access: it is conflict-free when no two threads touch different words of one bank "
     "(bank = word index mod 32)"),
    ("extra barriers", "count the __syncthreads() each K step runs, against the lesson's"),
    ("lost occupancy", "compare the registers and shared memory per block that `nvcc -Xptxas -v` "
     "prints for your kernel with the lesson's"),
)


def speed_message(d, speed, who="your kernel"):
    """Plain words for one speed decision: what was measured, and on a failure the possible
    causes (this exercise's point first) with how to look at each, none named as the cause."""
    unit = "time" if speed.better == "lower" else "cost (1 / rate)"
    facts = (f"on this GPU, {who}'s median {unit} is {d['ratio']:.2f} times the lesson's solution; "
             f"{speed.slow_description} is at {d['slow_ratio']:.2f} times; the bar is {d['threshold']:.2f} times "
             f"({d['bar']:.2f} of the way from the solution to it, in log terms); run-to-run spread {100 * (d['spread'] - 1):.1f}%")
    if d["outcome"] == "passed":
        return f"speed: passed: {facts}"
    if d["outcome"] == "failed":
        causes = ([f"what this exercise teaches: {speed.look_at}"] if speed.look_at else []) + \
                 [f"{cause}: {how}" for cause, how in USUAL_CAUSES]
        return (f"speed: FAILED: {facts}.\n  This check measured time only, so it cannot tell why; "
                f"possible causes, with how to look at each:" + "".join(
                    f"\n  ({i}) {c}" for i, c in enumerate(causes, 1)))
    why = ("the solution and the slow reference are not told apart by more than the spread"
           if not d["separated"] else f"{who} sits within the spread of the bar")
    return f"speed: inconclusive: re-run on an idle GPU ({why}): {facts}"


def speed_run(root, name, speed):
    return find_lesson_run(root, name, speed.args)


def timed_args(run, speed):
    """The arguments the speed check times: the run's, with the rule's time_args after them."""
    return run.args + speed.time_args


def timed_command(run, speed):
    return " ".join([run.command()] + [shlex.quote(a) for a in speed.time_args])


def reference_texts(root, name, speed):
    """(solution text, slow reference text): the lesson, and the lesson with the region made slow."""
    text = lesson(root, name).text
    return text, catalogue.replace_region(text, speed.region, speed.slow)


def build_all(prog, texts, tmp, sass=None):
    """{key: binary} of texts {key: source}, each built with the lesson's Build: line in its own folder
    (the builds in parallel: compiling is CPU work; only the timing must run alone), plus the machine
    code of sass (the GPU at hand, catalogue.native_arch) where given: a GPU newer than the line's
    -arch would otherwise compile each program's PTX at every start, a second or more of a timed run."""
    folders = {key: Path(tmp) / key.replace(" ", "_") for key in texts}
    for folder in folders.values():
        folder.mkdir()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(texts), os.cpu_count() or 1))) as pool:
        built = dict(zip(texts, pool.map(lambda key: catalogue.build_in_scratch(prog, texts[key], folders[key], None, sass),
                                         texts)))
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
    sass = catalogue.native_arch()
    lines = [f"speed ('{speed.region}' is about speed): timing your program, the lesson's and {speed.slow_description} "
             f"at {timed_command(run, speed)}, {speed.rounds} alternating rounds each (all three built with the lesson's "
             f"Build: line"
             + (f" plus {sass} machine code)" if sass else ")")]
    with tempfile.TemporaryDirectory(prefix="suite-speed-") as tmp:
        bins = build_all(lesson(root, name), {"your program": student_text, "solution": solution,
                                              "slow reference": slow}, tmp, sass)
        args = timed_args(run, speed)
        if speed.time_args and (run_fn or running.run_binary)(bins["your program"], args)["exit_code"] == EXIT_USAGE:
            # A copy made before the lesson had these options: time all three at the run itself.
            args = list(run.args)
            lines.append(f"speed: your program refuses {' '.join(speed.time_args)} (a copy older than the "
                         f"lesson's options?), so all three are timed at {run.command()}, every step")
        figures = time_rounds(list(bins.items()), args, speed, run_fn)
    d = speed_decision(figures["your program"], figures["solution"], figures["slow reference"], speed.better,
                       bar_of(speed))
    return d["outcome"], lines + [speed_message(d, speed)]


def speed_texts(root, cats, name):
    """{key: source} a speed exercise times: the solution, the slow reference, each correct and slow attempt."""
    speed = cats[name].speed
    solution, slow = reference_texts(root, name, speed)
    texts = {"solution": solution, "slow reference": slow}
    texts.update({"attempt " + a.name: a.apply(catalogue.base_program(root, a).text) for a in speed_attempts(cats, name)})
    return texts


def speed_attempts(cats, name):
    """The attempts the speed phase times: the region's correct ones (each must pass) and slow ones (each must fail)."""
    return [a for a in cats[name].attempts if a.region == cats[name].speed.region and a.kind in ("correct", "slow")]


def speed_phase(root, cats, names, progress=print, run_fn=None, built=None):
    """verify's serial speed phase: per speed exercise, the solution, the slow reference and every
    correct and slow attempt of its region timed in alternating rounds; one record entry each. built: {name:
    {key: binary} or an error text} from verify's background builds; a name not in it is built here."""
    out = []
    for name in names:
        speed = cats[name].speed if name in cats else None
        if speed is None:
            continue
        run = speed_run(root, name, speed)
        timed_attempts = speed_attempts(cats, name)
        entry = {"lesson": name, "region": speed.region, "run": run.id, "time_args": speed.time_args, "figure": speed.figure,
                 "better": speed.better, "rounds": speed.rounds, "bar": bar_of(speed)}
        try:
            with tempfile.TemporaryDirectory(prefix="suite-speed-") as tmp:
                bins = (built or {}).get(name)
                if bins is None:
                    progress(f"speed {name}/{speed.region}: building")
                    bins = build_all(lesson(root, name), speed_texts(root, cats, name), tmp, catalogue.native_arch())
                if isinstance(bins, str):
                    raise SuiteError(bins)
                progress(f"speed {name}/{speed.region}: timing {len(bins)} programs, {speed.rounds} rounds")
                dropped = {}
                figures = time_rounds(list(bins.items()), timed_args(run, speed), speed, run_fn, dropped)
        except SuiteError as exc:
            entry.update(error=str(exc), attempts=[{"name": a.name, "kind": a.kind, "outcome": "not timed"}
                                                   for a in timed_attempts])
            out.append(entry)
            continue
        ref = speed_decision(figures["slow reference"], figures["solution"], figures["slow reference"], speed.better,
                             bar_of(speed))
        entry.update(solution_ratio=1.0, slow_ratio=ref["slow_ratio"], threshold=ref["threshold"],
                     spread=ref["spread"], separated=ref["separated"],
                     medians={k: statistics.median(v) for k, v in figures.items() if v and k not in dropped},
                     attempts=[])
        for a in timed_attempts:
            if "attempt " + a.name in dropped:
                entry["attempts"].append({"name": a.name, "kind": a.kind, "outcome": "not timed",
                                          "error": dropped["attempt " + a.name][:300]})
                continue
            d = speed_decision(figures["attempt " + a.name], figures["solution"], figures["slow reference"],
                               speed.better, bar_of(speed))
            entry["attempts"].append({"name": a.name, "kind": a.kind, "ratio": d["ratio"], "outcome": d["outcome"]})
        out.append(entry)
    return out


def speed_problems(record, cats, rel):
    """check verify-record: every speed exercise recorded, its references told apart, its bar able to
    fail its own slow reference, every correct attempt passed and every slow one failed, re-judged
    from the recorded measurements by today's rule."""
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
        if e.get("time_args", []) != cat.speed.time_args:
            errors.append(f"{rel}: speed exercise {name}/{cat.speed.region} was timed with the arguments "
                          f"{e.get('time_args', [])} added, the catalogue now adds {cat.speed.time_args} (run verify)")
            continue  # its figures are of another command line: nothing more to judge from them
        W, spread = e.get("slow_ratio") or 0.0, e.get("spread") or float("inf")
        if not W > spread:  # from the measurements
            errors.append(f"{rel}: speed exercise {name}/{cat.speed.region}: the slow reference ({e.get('slow_ratio')} "
                          f"times the solution) is not told apart from it by more than the spread {e.get('spread')}")
        elif speed_outcome(W, W, spread, bar_of(cat.speed))[0] != "failed":
            errors.append(f"{rel}: speed exercise {name}/{cat.speed.region}: at its bar of {bar_of(cat.speed)} the rule "
                          f"would not fail its own slow reference ({W} times the solution, spread {spread}): "
                          f"it needs W > spread ** (1 / (2 (1 - bar)))")
        recorded = {a.get("name"): a for a in e.get("attempts", [])}
        for a in speed_attempts(cats, name):
            want = "passed" if a.kind == "correct" else "failed"
            got = recorded.get(a.name)
            if got is None:
                errors.append(f"{rel}: {a.kind} attempt {name}/{a.name} has no speed record (run verify)")
                continue
            if not isinstance(got.get("ratio"), (int, float)):
                errors.append(f"{rel}: {a.kind} attempt {name}/{a.name} was not timed: "
                              f"{str(got.get('error', 'no ratio recorded'))[:200]}")
                continue
            outcome, bar = speed_outcome(got["ratio"], e.get("slow_ratio") or 0.0,
                                         e.get("spread") or float("inf"), bar_of(cat.speed))
            if outcome != want:
                errors.append(f"{rel}: {a.kind} attempt {name}/{a.name} should have {want} the speed check: "
                              f"{outcome} at {got.get('ratio')} times the solution (bar {bar:.4f})")
    return errors
