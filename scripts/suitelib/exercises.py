"""The student's loop and its one verdict.

`exercise start` copies a starter into exercises/ (never over work, never into the suite's own files).
`exercise check` judges the student's program by what it does, over EVERY run the lesson records: at
each Run: line it must exit as the lesson does and print the LESSON transcript's result lines
(measurements and device facts masked, the catalogue's student-worded lines dropped on both sides).
The catalogue's student attempts are judged by the same function over the same runs (judge.judge_runs).
Where speed is the point (the catalogue's "speed" rule), a GPU check then times the student's kernel
against the lesson's own and a slow reference (speed.py).
Without a GPU the same verdict comes from a pasted Compiler Explorer output pane, one run per pane
(check_pane; pane.py reads it, panerecord.py lists the runs still unjudged and how to produce each).
"""

import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, EXIT_SKIP, SuiteError, UsageError, read_text
from . import catalogue, running
from .judge import (decided, expected_of, first_difference, judge_runs, lesson_runs, report, run_label, speed_of,
                    verdict, worded_of)
from .model import find_lesson_run, lesson
from .pane import read_pane
from .panerecord import unjudged
from .speed import speed_check


PROTECTED = ("lessons", "starter", "common", "expected")


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


# --- the same verdict from a pasted Compiler Explorer pane ----------------------------------

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
