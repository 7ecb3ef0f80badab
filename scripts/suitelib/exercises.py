"""The student's loop: `exercise start` copies a starter into exercises/ (never deleting work);
`exercise check` judges the student's program by behaviour (PLAN.md B): it exits as the lesson
does (0: every gate held) and, with measurements and device facts masked and the catalogue's
student-worded lines dropped on both sides, prints the lesson transcript's result lines."""

import shutil
from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, EXIT_SKIP, SuiteError, UsageError
from . import catalogue
from .model import lesson
from .running import cmake_build, default_bin_dir, detect_gpu, run_binary, skip_or_fail, transcript_gpu
from .transcripts import compare, parse_transcript


def lesson_transcript(root, name, gpu):
    """The parsed transcript of the LESSON's first run (never the starter's)."""
    run = lesson(root, name).runs()[0]
    path = run.transcript_path(gpu)
    if not path.exists():
        raise UsageError(f"no transcript {path.relative_to(root)} to compare with (recorded GPUs: "
                         + ", ".join(sorted(p.name for p in (Path(root) / "expected").glob("*") if p.is_dir())) + ")")
    return parse_transcript(path)


def verdict(expected, result, worded=()):
    """The exercise verdict: the one comparison, device facts always masked, worded lines dropped."""
    return compare(expected, result, "your exercise", device=False, drop=worded)


def report(cmp, result):
    """Plain words: the verdict, what differs, and which lines decided."""
    if cmp.ok:
        return [f"Congratulations: your exercise behaves like the lesson (exit {result['exit_code']}, "
                f"the same results).", "What decided: " + cmp.decided()]
    lines = ["Not there yet. What still differs from the lesson:"]
    if result["exit_code"] == EXIT_FAIL:
        lines.append("- exit 1: a gate failed or something is left to write (see GATE: / the stderr lines)")
    lines += ["- " + p for p in cmp.problems]
    return lines + ["", "What decided: " + cmp.decided()]


def start(root, name, force):
    les, starter = lesson(root, name), lesson(root, name, starter=True)
    target = Path(root) / "exercises" / (name + ".cu")
    if target.exists() and not force:
        raise SuiteError(f"exercises/{name}.cu already exists; not overwriting your work "
                         f"(add --force to replace it with a fresh copy of the starter)")
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(starter.path, target)
    print(f"copied {starter.rel} to exercises/{name}.cu (lesson: {les.rel}); edit the '// exercise:' "
          f"regions, then: scripts/suite.py exercise check {name}")
    return EXIT_OK


def exercise_binary(root, name, bin_dir):
    target = name + "_exercise"
    if bin_dir is not None:
        binary = Path(bin_dir) / target
        if not binary.is_file():
            raise UsageError(f"{binary} does not exist: the --bin-dir folder holds no {target} "
                             f"(build it with: scripts/suite.py build {target})")
        return binary
    try:
        cmake_build(root, [target])
    except UsageError:
        raise
    except SuiteError:
        raise SuiteError(f"exercises/{name}.cu does not compile (see the compiler output above)")
    return default_bin_dir(root) / target


def check(root, name, bin_dir, gpu):
    lesson(root, name, starter=True)  # an exercise exists only for a lesson with a starter
    if not (Path(root) / "exercises" / (name + ".cu")).exists():
        raise UsageError(f"exercise: exercises/{name}.cu does not exist; start it with "
                         f"'scripts/suite.py exercise start {name}'")
    folder = transcript_gpu(root, gpu, None if gpu else detect_gpu())
    expected = lesson_transcript(root, name, folder)
    binary = exercise_binary(root, name, bin_dir)
    result = run_binary(binary, lesson(root, name).runs()[0].args)
    if result["exit_code"] == EXIT_SKIP:
        return skip_or_fail("your exercise", result)
    cats = catalogue.load(root)
    worded = cats[name].student_worded if name in cats else []
    cmp = verdict(expected, result, worded)
    print("\n".join(report(cmp, result)))
    return EXIT_OK if cmp.ok else EXIT_FAIL
