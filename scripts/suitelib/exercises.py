"""The student's loop and its one verdict.

`exercise start` copies a starter into exercises/ (never over work, never through a symbolic link,
never outside exercises/). `exercise check` judges the student's program by what it does, over EVERY
run the lesson records: at each Run: line it must exit as the lesson does and print the LESSON
transcript's result lines (measurements and device facts masked, the catalogue's student-worded
lines dropped on both sides; judge.py). On a GPU it then runs compute-sanitizer (sanitize.py) and,
where speed is the point, times the student's kernel (speed.py). The catalogue's student attempts
are judged by the same functions (run_attempt).
Without a GPU the same verdict comes from Compiler Explorer's executor panes, one run per pane
(check_panes; pane.py reads them; panerecord.py remembers the runs passed and says what is left).
"""

import os
import shlex
import sys
import tempfile
from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, EXIT_SKIP, SuiteError, UsageError, read_text, write_file
from . import builds, catalogue, panerecord, running, sanitize
from .judge import (decided, exercise_lesson, exit_hint, expected_of, first_difference, judge_runs, lesson_runs,
                    report, run_label, speed_of, verdict, which_run, worded_of)
from .model import Program, code_lines, find_lesson_run, lesson, parse_header, parse_regions
from .pane import read_pane
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


def refuse_links(root, name, doing="write through it", then="start again"):
    """exercises/ and exercises/NAME.cu must not be symbolic links: everything the tool writes for a
    student stays inside a real exercises/ folder of this checkout, and the pane route judges the
    student's own file, the one its record is kept beside (UsageError otherwise, wherever a link points)."""
    folder, target = Path(root) / "exercises", Path(root) / "exercises" / (name + ".cu")
    if os.path.islink(folder):
        raise UsageError(f"exercises/ is a symbolic link (to {os.readlink(folder)}): the tool writes only inside a "
                         f"real exercises/ folder of this checkout (make it a folder, then {then})")
    if os.path.islink(target):
        inside = protected_target(root, target)
        where = f", inside {inside}/" if inside else ""
        raise UsageError(f"exercises/{name}.cu is a symbolic link to {os.readlink(target)}{where}: refusing to "
                         f"{doing} (remove the link, then {then})")


def start(root, name, force):
    les = exercise_lesson(root, name)
    starter = lesson(root, name, starter=True)
    target = Path(root) / "exercises" / (name + ".cu")
    refuse_links(root, name)
    if target.exists() and not force:
        raise SuiteError(f"exercises/{name}.cu already exists; not overwriting your work "
                         f"(add --force to replace it with a fresh copy of the starter)")
    target.parent.mkdir(exist_ok=True)
    write_file(target, starter.path.read_bytes(), "the exercise file")
    print(f"copied {starter.rel} to exercises/{name}.cu (lesson: {les.rel}); edit the '// exercise:' "
          f"regions, then: scripts/suite.py exercise check {name}  (no GPU: scripts/suite.py exercise check "
          f"{name} --pane FILE, with FILE Compiler Explorer's executor pane saved whole)")
    return EXIT_OK


def exercise_file(root, name):
    """exercises/NAME.cu as a Program; UsageError when it does not exist (a dangling link neither)."""
    path = Path(root) / "exercises" / (name + ".cu")
    if not path.is_file():
        raise UsageError(f"exercise: exercises/{name}.cu does not exist; start it with "
                         f"'scripts/suite.py exercise start {name}'")
    return Program(root, path)


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
    return (f"run it on Compiler Explorer (scripts/suite.py ce-link exercises/{name}.cu), save the executor pane "
            f"whole to a file and check it with: scripts/suite.py exercise check {name} --pane FILE")


def no_gpu(name, result=None):
    """Exit 77 where there is no GPU (one line naming the --pane route); a finding where one is present."""
    if result is not None and running.gpu_present():
        return running.skip_or_fail("your exercise", result)  # raises: the driver or device fails
    print(f"skipped: exercise check needs a CUDA GPU to run your program (exit 77); without one, "
          f"{pane_route(name)}", file=sys.stderr)
    return EXIT_SKIP


def check(root, name, bin_dir, gpu):
    les = exercise_lesson(root, name)
    lesson_runs(root, name)
    source = exercise_file(root, name)
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
    text = read_text(source.path, "exercise")
    clean, lines = sanitize.judge(binary, les, les.text, text)
    print("\n".join(lines))
    if clean is False:
        print("Not there yet: compute-sanitizer found what no recorded output shows (see above).")
        return EXIT_FAIL
    speed = speed_of(root, name)
    if speed is not None:
        if facts is None:
            print(f"skipped: speed is the point of '{speed.region}' and it is judged only where a GPU is "
                  f"detected (nvidia-smi found none)", file=sys.stderr)
            return EXIT_SKIP
        outcome, lines = speed_check(root, name, text, speed)
        print("\n".join(lines))
        if outcome != "passed":
            return EXIT_FAIL
    print("Congratulations: your exercise behaves like the lesson at every recorded run"
          + (", compute-sanitizer found nothing" if clean else "")
          + (" and its kernel is as fast as the design asks." if speed else ".")
          + ("" if clean else " Not run here: the sanitizer checks above (no compute-sanitizer)."))
    return EXIT_OK


# --- the same verdict from Compiler Explorer's executor panes --------------------------------
def pane_runs(root, name, panes):
    """[(pane path, run)] for the --pane files and the --args each was given; UsageError for args
    that name no recorded run, or two panes of one run (several panes are judged together)."""
    runs = lesson_runs(root, name)
    picked, seen = [], {}
    for path, args_text in panes:
        try:
            argv = None if args_text is None else shlex.split(args_text)
        except ValueError as exc:
            raise UsageError(f"--args {args_text!r}: cannot split it into arguments ({exc})")
        run = runs[0] if argv is None else find_lesson_run(root, name, argv)
        if run.id in seen:
            raise UsageError(f"--pane {seen[run.id]} and --pane {path} are both for the run {run.command()}: give "
                             f"one pane per run (each --pane takes the --args that follow it)")
        seen[run.id] = path
        picked.append((path, run))
    return picked


def judge_pane(root, name, path, run, result, folder):
    """(passed, lines) of one pane against its run, by the exercise rules."""
    cmp = verdict(expected_of(root, run, folder), result, worded_of(root, name), run_label(run))
    lines = [f"--- pane {path}, judged as {run_label(run)}:"] + ["note: " + n for n in cmp.notes]
    lines.append(first_difference(run, cmp))
    if not cmp.ok:
        named = which_run(root, name, result, run, folder)
        lines += ([named] if named else []) + [f"Not there yet at {run.command()}:"] + exit_hint(result)
        lines += ["- " + p for p in cmp.problems]
    lines.append("What decided: " + cmp.decided())
    return cmp.ok, lines


def exercise_text(root, name):
    """(Program, text) of exercises/NAME.cu for the pane route: UsageError (exit 2, nothing judged) where it
    is a symbolic link, missing, or not UTF-8 text (its source key, which the pane record keeps, needs its text)."""
    refuse_links(root, name, doing="judge a pane by it: the pane route judges and records your own file",
                 then=f"copy your work to exercises/{name}.cu and check again")
    source = exercise_file(root, name)
    try:
        return source, read_text(source.path, "exercise file")
    except UsageError:
        raise
    except SuiteError as exc:  # not UTF-8: a file that cannot be read is no input, not a finding
        raise UsageError(f"{exc}: exercises/{name}.cu is not judged; save it as UTF-8")


def exercise_regions(rel, text):
    """({name: body} of a file's exercise regions, its marker errors)."""
    regions, errors = parse_regions(rel, text)
    return {r.name: r.body for r in regions if r.kind == "exercise"}, errors


def refuse_foreign_exercise(root, name, text):
    """UsageError (exit 2, nothing judged) where exercises/NAME.cu is not this lesson's exercise: its
    leading comment block lacks a Build: line or a Run: line of ./NAME, or it lacks an exercise region
    of the starter (by name; a broken marker is named). A pane cannot show which source made it: the
    file must at least be the exercise its record is kept for (an empty file, `int main(){}` or another
    lesson's are not)."""
    header = parse_header(text)
    if not header["Build"] or not any(cmd.split()[:1] == ["./" + name] for _, cmd in header["Run"]):
        raise UsageError(f"exercises/{name}.cu is not the {name} exercise: its header lacks a "
                         f"'// Build:' line or a '// Run:   ./{name}' line (start it again with: scripts/suite.py "
                         f"exercise start {name} --force, then write its exercise regions)")
    starter = lesson(root, name, starter=True)
    want = exercise_regions(starter.rel, starter.text)[0]
    have, errors = exercise_regions(f"exercises/{name}.cu", text)
    missing = [region for region in want if region not in have]
    if missing:
        broken = f" ({errors[0]})" if errors else ""
        raise UsageError(f"exercises/{name}.cu is not the {name} exercise: it lacks the exercise region(s) "
                         + ", ".join(f"'{region}'" for region in missing) + f" of {starter.rel}{broken}; keep "
                         f"your code between the '// exercise: NAME' and '// end exercise' markers the starter has")


def refuse_stand_ins(root, name, text):
    """SuiteError (exit 1, nothing judged) naming the exercise regions of exercises/NAME.cu whose code is
    still the starter's stand-in: comments aside, as the source key sees code, and every blank and line
    break too (a stand-in reformatted, spaces squeezed out or spread over more lines, is the same code;
    only a string literal's spacing could tell two such apart, and a stand-in's is still a stand-in).
    Every stand-in trips a gate of the lesson, so such a file cannot pass on a GPU; a pane of the
    lesson's correct output pasted beside it must not pass either."""
    def code(body):
        return "".join("".join(code_lines(body)).split())
    starter = lesson(root, name, starter=True)
    stand_ins = exercise_regions(starter.rel, starter.text)[0]
    written = exercise_regions(f"exercises/{name}.cu", text)[0]
    left = [region for region, body in stand_ins.items() if code(written[region]) == code(body)]
    if left:
        raise SuiteError(f"exercises/{name}.cu still holds the starter's stand-in in region "
                         + ", ".join(f"'{region}'" for region in left)
                         + ": write the exercise first (no pane is judged against an unwritten exercise)")


def check_panes(root, name, panes, gpu):
    """Judge Compiler Explorer executor panes [(path, args text)], one run each, together: every pane
    is read (and refused in one line) before any is judged; exercises/NAME.cu must be this lesson's
    exercise with every region written; passed runs are remembered for the exercise file's source key;
    the verdict lists the runs still to pass, or says every run a pane can judge has passed and names
    what only a GPU can judge."""
    exercise_lesson(root, name)
    picked = pane_runs(root, name, panes)
    source, text = exercise_text(root, name)
    refuse_foreign_exercise(root, name, text)
    key = source.source_key()
    folder = running.transcript_gpu(root, gpu, None)
    results = [(path, run, read_pane(path)) for path, run in picked]
    refuse_stand_ins(root, name, text)
    passed, forgotten = panerecord.load_passes(root, name, key)
    lines, ok = ([f"note: {forgotten}"] if forgotten else []), True
    for path, run, result in results:
        good, said = judge_pane(root, name, path, run, result, folder)
        lines += said
        ok = ok and good
        if good:
            passed[run.id] = panerecord.pass_entry(path)
        else:
            passed.pop(run.id, None)  # the latest pane of a run decides
    panerecord.save_passes(root, name, key, passed)
    lines += ["", f"Recorded for exercises/{name}.cu (source key {key[:12]}...; a pane cannot show its source, so "
                  f"paste panes of this file only) in exercises/{panerecord.record_path(root, name).name}."]
    lines += panerecord.status(root, name, passed, text)
    print("\n".join(lines))
    return EXIT_OK if ok else EXIT_FAIL


# --- the catalogue's student attempts, judged by the student's functions ---------------------
def attempt_entry_ok(entry):
    """A correct attempt is accepted; a wrong one rejected; a slow one (right outputs from the slow
    design) accepted here, by its outputs, and failed by the speed phase (speed.speed_problems)."""
    return entry.get("accepted") is (entry.get("kind") in ("correct", "slow"))


def run_attempt(root, attempt, gpu, worded, sass=None):
    """Build one attempt with the lesson's Build line (once; plus the machine code of sass, the
    GPU's own, where given), judge it over every recorded run (up to the first that rejects it)
    and, where every run passed, by the exercise's sanitizer checks; return its record entry."""
    entry = {"lesson": attempt.lesson, "region": attempt.region, "name": attempt.name, "kind": attempt.kind,
             "runs": [run.id for run in lesson_runs(root, attempt.lesson)]}
    les, text = catalogue.attempt_program(root, attempt)
    clock = builds.Stopwatch()
    with tempfile.TemporaryDirectory(prefix="suite-attempt-") as tmp:
        binary, failure = clock.lap("build", catalogue.build_in_scratch, les, text, tmp, None, sass)
        entry["seconds"] = clock.laps
        if binary is None:
            entry.update(accepted=False, outcome=failure, runs=[])  # no run was judged
            return entry
        judged = clock.lap("runs", judge_runs, root, attempt.lesson, gpu, worded,
                           lambda args: running.run_binary(binary, args), True)
        entry["runs"] = [run.id for run, _, _ in judged]
        failed = [(run, cmp) for run, _, cmp in judged if not cmp.ok]
        clean = None
        if not failed and attempt.kind != "slow":
            # The attempt is its lesson outside its region: the sanitizers instrument that region's kernels.
            clean, said = clock.lap("sanitize", sanitize.judge, binary, les, les.text, text, region=attempt.region,
                                    only=sanitize.region_kernels(text, region=attempt.region))
            entry["sanitizer"] = said
        elif not failed:  # a slow attempt is there for the speed phase's verdict, not the sanitizers'
            entry["sanitizer"] = ["not run: a slow attempt (right outputs, the slow design) is judged by speed"]
    entry["accepted"] = not failed and clean is not False
    if failed:
        entry["outcome"] = (f"rejected at {failed[0][0].id}: " + failed[0][1].problems[0].splitlines()[0])[:300]
    elif clean is False:
        entry["outcome"] = ("rejected by compute-sanitizer: " + next(s for s in said if "FAILED" in s))[:300]
    else:
        entry["outcome"] = ("accepted: " + decided(judged) + ("" if clean else "; sanitizer checks not run"))[:300]
    return entry


def attempt_table(entries):
    rows = ["| lesson | region | attempt | kind | accepted | as it should | runs | outcome |",
            "|---|---|---|---|---|---|---|---|"]
    for e in entries:
        rows.append(f"| {e['lesson']} | {e['region']} | {e['name']} | {e['kind']} | {e['accepted']} | "
                    f"{'yes' if attempt_entry_ok(e) else 'NO'} | {len(e.get('runs', []))} | {e['outcome'][:120]} |")
    return "\n".join(rows) + "\n"
