"""The exercise verdict: one run judged by the one comparison (transcripts.compare, device facts
masked, the catalogue's student-worded lines dropped), and every recorded run of the lesson judged
by the same function (judge_runs), for a student's exercise and a catalogue attempt alike.
"""

import re
from pathlib import Path

from . import EXIT_FAIL, SuiteError, UsageError
from . import catalogue
from .model import lesson
from .transcripts import compare, parse_transcript

# How a starter (or a gate) says what is left: the first such line is shown beside an exit 1, so
# a diff cut at 20 lines never hides it.
LEFT_TO_WRITE = re.compile(r"^\s*(?:Left to write|[Ww]hat is left)\b")
GATE_LINE = re.compile(r"^\s*GATE:")


def exercise_lesson(root, name):
    """The lesson of exercise NAME (one with a starter), with the same words for every exercise command.
    NAME is a name from that list, never a path: '../lessons/x' or '/tmp/x' would judge, and write
    beside, a file outside exercises/."""
    have = sorted(p.stem for p in (Path(root) / "starter").glob("*.cu") if (Path(root) / "lessons" / p.name).is_file())
    if name not in have:
        raise UsageError(f"no exercise called {name!r}: an exercise is a lesson with a starter "
                         f"(have: {', '.join(have) or 'none'})")
    return lesson(root, name)


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


def judge_runs(root, name, gpu, worded, run_fn, stop_at_failure=False):
    """[(run, result, Comparison)] over every recorded run of the lesson (up to the first that
    fails, with stop_at_failure: verify's attempts, whose verdict that run already decides);
    run_fn(args) -> result.

    The one function that judges a student's exercise and a catalogue attempt."""
    judged = []
    for run in lesson_runs(root, name):
        expected = expected_of(root, run, gpu)
        result = run_fn(run.args)
        judged.append((run, result, verdict(expected, result, worded, run_label(run))))
        if stop_at_failure and not judged[-1][2].ok:
            break
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
        lines += exit_hint(result) + ["- " + p for p in cmp.problems]
    return lines + ["", "What decided: " + decided(judged)]


def exit_hint(result):
    """What an exit 1 means, and the program's own line saying what is left (or its first GATE line)."""
    if result["exit_code"] != EXIT_FAIL:
        return []
    lines = ["- exit 1: a gate failed or something is left to write (see GATE: / the stderr lines)"]
    printed = (result.get("stdout") or "").splitlines() + (result.get("stderr") or "").splitlines()
    said = next((ln for ln in printed if LEFT_TO_WRITE.match(ln)), None) or \
        next((ln for ln in printed if GATE_LINE.match(ln)), None)
    if said:
        said = said.strip()
        lines.append("- your program says: " + (said if len(said) <= 400 else said[:400] + "..."))
    return lines


def worded_of(root, name):
    cats = catalogue.load(root)
    return cats[name].student_worded if name in cats else []


def speed_of(root, name):
    cats = catalogue.load(root)
    return cats[name].speed if name in cats else None


def all_recorded_runs(root, gpu):
    """[(lesson name, run, parsed transcript)] of every lesson run and starter run recorded under expected/<gpu>/."""
    found = []
    for path in sorted((Path(root) / "lessons").glob("*.cu")):
        for prog in (lesson(root, path.stem),) + ((lesson(root, path.stem, starter=True),)
                                                   if (Path(root) / "starter" / path.name).is_file() else ()):
            try:
                runs = prog.runs()
            except SuiteError:  # a malformed Run: line: the checks name it
                continue
            for run in runs:
                if run.transcript_path(gpu).is_file():
                    found.append((path.stem, run, parse_transcript(run.transcript_path(gpu))))
    return found


def which_run(root, name, result, judged_run, gpu):
    """The line naming the recorded run a failing pane matches instead (another run of this lesson,
    its untouched starter, or another lesson's run), by the exercise rules of that lesson; None if none.
    A recording of another exit code cannot match and is passed over unmasked; the pane itself is
    masked once for all recordings (transcripts' cache), so a large pane stays quick."""
    for other, run, expected in all_recorded_runs(root, gpu):
        if run.id == judged_run.id or int(expected["exit_code"]) != int(result["exit_code"]):
            continue
        if not verdict(expected, result, worded_of(root, other)).ok:
            continue
        args = " ".join(run.args)
        if run.program.is_starter and other == name:
            return (f"this pane is the untouched starter's recorded output (expected/{gpu}/{run.id}.txt): "
                    f"write the exercise regions of exercises/{name}.cu first")
        if run.program.is_starter:
            return f"this pane is the untouched starter of another lesson, {other} (expected/{gpu}/{run.id}.txt)"
        if other == name:
            how = f"add --args '{args}'" if args else "drop --args (it is the default run)"
            return f"this is the run `{run.command()}`: {how}"
        return (f"this pane is another lesson's run, {other}'s `{run.command()}`: judge it with "
                f"scripts/suite.py exercise check {other} --pane FILE" + (f" --args '{args}'" if args else ""))
    return None
