"""The exercise verdict: one run judged by the one comparison (transcripts.compare, device facts
masked, the catalogue's student-worded lines dropped), and every recorded run of the lesson judged
by the same function (judge_runs), for a student's exercise and a catalogue attempt alike.
"""

from pathlib import Path

from . import EXIT_FAIL, UsageError
from . import catalogue
from .model import lesson
from .transcripts import compare, parse_transcript


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


def worded_of(root, name):
    cats = catalogue.load(root)
    return cats[name].student_worded if name in cats else []


def speed_of(root, name):
    cats = catalogue.load(root)
    return cats[name].speed if name in cats else None
