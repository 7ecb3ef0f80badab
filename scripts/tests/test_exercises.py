"""Tests of suitelib.exercises: `exercise start` (never into the suite's own files), `exercise check`
judging behaviour against the LESSON's transcripts over EVERY recorded run (device facts masked,
student-worded lines dropped), the same verdict from a pasted Compiler Explorer pane, and the speed
check's decision logic (fake binaries and fake timings: no GPU needed)."""

import json
import os
import unittest
from pathlib import Path

from helpers import REPO, Scratch, no_gpu, patched
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE, SuiteError, catalogue, celink, running, sanitize, speed
from suitelib.judge import verdict
from suitelib.speed import speed_decision
from suitelib.transcripts import parse_transcript

LESSON_OUT = "GPU: NVIDIA H200 (compute capability 9.0)\n[device] 132 SMs\nnote: the lesson's words\nanswer 42\nk 1.5 ms\n"
TWICE_OUT = LESSON_OUT.replace("answer 42", "answer 84")
T4 = "GPU: Tesla T4 (compute capability 7.5)\n[device] 40 SMs\nnote: my own words\n"
FACTS = running.GpuFacts("NVIDIA H200", "h200", "13.0")


def no_sanitizer():
    """compute-sanitizer absent, whatever this machine has (the fake programs cannot run under it)."""
    return patched(sanitize, "available", lambda: False)


def by_arg(default, twice):
    """A fake program printing `default`, or `twice` when given --twice."""
    return (f"if [ \"$1\" = --twice ]; then cat <<'X'\n{twice}X\nelse cat <<'X'\n{default}X\nfi")


STAND_IN, WRITTEN = "int twice(int v) { return v; }  // TODO (exercise)", "int twice(int v) { return 2 * v; }"


class ExerciseScratch(Scratch):
    """exercises/demo.cu copied from the starter; the lesson's two runs recorded with lesson_out."""
    lesson_out = LESSON_OUT

    def setUp(self):
        super().setUp()
        (self.root / "exercises").mkdir()
        (self.root / "exercises/demo.cu").write_text((self.root / "starter/demo.cu").read_text())
        self.record(self.run_of("demo"), stdout=self.lesson_out)
        self.record(self.run_of("demo@twice"), stdout=self.lesson_out.replace("answer 42", "answer 84"))

    def write_exercise(self):
        """exercises/demo.cu with its region written (the pane route judges no starter's stand-in)."""
        self.edit("exercises/demo.cu", STAND_IN, WRITTEN)


class TestExerciseStart(ExerciseScratch):
    def setUp(self):
        super().setUp()
        (self.root / "exercises/demo.cu").unlink()

    def test_start_copies_the_starter(self):
        status, out, err = self.main("exercise", "start", "demo", writes=True)
        self.assertEqual(status, EXIT_OK, err)
        self.assertEqual((self.root / "exercises/demo.cu").read_text(), (self.root / "starter/demo.cu").read_text())
        self.assertIn("--pane FILE", out)

    def test_start_never_overwrites_without_force(self):
        (self.root / "exercises/demo.cu").write_text("my work\n")
        status, _, err = self.main("exercise", "start", "demo")
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("not overwriting your work", err)
        status, _, _ = self.main("exercise", "start", "demo", "--force", writes=True)
        self.assertEqual(status, EXIT_OK)
        self.assertNotEqual((self.root / "exercises/demo.cu").read_text(), "my work\n")

    def test_force_refuses_a_link_into_the_lessons(self):
        """exercises/demo.cu a symlink to lessons/demo.cu: --force must not overwrite the lesson."""
        os.symlink(self.root / "lessons/demo.cu", self.root / "exercises/demo.cu")
        for extra in ((), ("--force",)):
            status, _, err = self.main("exercise", "start", "demo", *extra)
            self.assertOneLineError(status, err, EXIT_USAGE)
            self.assertIn("inside lessons/", err)

    def test_force_refuses_every_protected_folder(self):
        for sub in ("starter", "common", "expected"):
            with self.subTest(sub=sub):
                target = self.root / sub / "x.cu"
                target.write_text("x\n")
                link = self.root / "exercises/demo.cu"
                if link.is_symlink():
                    link.unlink()
                os.symlink(os.path.relpath(target, link.parent), link)
                status, _, err = self.main("exercise", "start", "demo", "--force")
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn(f"inside {sub}/", err)

    def test_force_refuses_an_exercises_folder_linked_to_lessons(self):
        (self.root / "exercises").rmdir()
        os.symlink(self.root / "lessons", self.root / "exercises")
        status, _, err = self.main("exercise", "start", "demo", "--force")
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_start_never_writes_through_a_link_anywhere(self):
        """Found 6: --force wrote through a link to ../.git/config or ../CMakeLists.txt (outside the folders
        it protected). A link at exercises/NAME.cu is refused wherever it points, dangling too."""
        (self.root / ".git").mkdir()
        for rel in ("CMakeLists.txt", ".git/config"):
            (self.root / rel).write_text("keep me\n")
        link = self.root / "exercises/demo.cu"
        for target in ("../CMakeLists.txt", "../.git/config", "../nowhere/x.cu"):
            for extra in ((), ("--force",)):
                with self.subTest(target=target, extra=extra):
                    if os.path.lexists(link):
                        link.unlink()
                    os.symlink(target, link)
                    status, _, err = self.main("exercise", "start", "demo", *extra)
                    self.assertOneLineError(status, err, EXIT_USAGE)
                    self.assertIn("exercises/demo.cu is a symbolic link to " + target, err)
                    self.assertIn("refusing to write through it", err)
        for rel in ("CMakeLists.txt", ".git/config"):
            self.assertEqual((self.root / rel).read_text(), "keep me\n")
        self.assertFalse((self.root / "nowhere").exists())

    def test_start_refuses_an_exercises_folder_that_is_a_link_anywhere(self):
        import tempfile
        outside = Path(tempfile.mkdtemp(prefix="suite-outside-"))
        try:
            (self.root / "exercises").rmdir()
            os.symlink(outside, self.root / "exercises")
            for extra in ((), ("--force",)):
                status, _, err = self.main("exercise", "start", "demo", *extra)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn("exercises/ is a symbolic link", err)
            self.assertEqual(list(outside.iterdir()), [])
        finally:
            outside.rmdir()

    def test_start_writes_a_real_file(self):
        status, _, err = self.main("exercise", "start", "demo", writes=True)
        self.assertEqual(status, EXIT_OK, err)
        path = self.root / "exercises/demo.cu"
        self.assertFalse(path.is_symlink())
        self.assertEqual(sorted(p.name for p in path.parent.iterdir()), ["demo.cu"])  # no temporary left

    def test_unknown_exercise(self):
        status, _, err = self.main("exercise", "start", "nosuch")
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_check_before_start(self):
        status, _, err = self.main("exercise", "check", "demo")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("exercise start demo", err)


class TestExerciseCheck(ExerciseScratch):
    def check(self, script, *extra, gpu=False):
        bin_dir = self.fake("demo_exercise", script)
        with patched(running, "detect_gpu", lambda: FACTS if gpu else None), \
                patched(running, "gpu_present", lambda: gpu), no_sanitizer():
            return self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir), *extra)

    def test_every_recorded_run_is_judged_and_passes(self):
        status, out, err = self.check(by_arg(T4 + "answer 42\nk 9.9 ms\n", T4 + "answer 84\nk 9 ms\n"))
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("run ./demo: passed\nrun ./demo --twice: passed\n", out)
        self.assertIn("Congratulations", out)
        self.assertIn("2 runs; ", out)
        self.assertIn("student-worded ignored", out)

    def test_wrong_only_at_one_recorded_run_is_rejected_naming_it(self):
        status, out, _ = self.check(by_arg(T4 + "answer 42\nk 1 ms\n", T4 + "answer 85\nk 1 ms\n"))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("run ./demo: passed\n", out)
        self.assertIn("run ./demo --twice: stdout differs", out)
        self.assertIn("the recording has 'answer 84', this output has 'answer 85'", out)
        self.assertIn("1 of 2 recorded runs differ", out)
        self.assertNotIn("Congratulations", out)

    def test_other_register_counts_on_the_recording_gpu_pass(self):
        self.record(self.run_of("demo"), stdout=LESSON_OUT.replace("k 1.5 ms", "k 1.5 ms 40 regs"))
        status, out, err = self.check(by_arg(LESSON_OUT.replace("k 1.5 ms", "k 1.2 ms 64 regs"), TWICE_OUT))
        self.assertEqual(status, EXIT_OK, out + err)

    def test_a_failed_gate_fails(self):
        status, out, _ = self.check("cat <<'X'\n" + LESSON_OUT + "X\necho 'GATE: left to write' >&2; exit 1")
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit code 1, the recording says 0", out)

    def test_what_is_left_is_shown_past_the_diff_cap(self):
        """Found 8: sweep's 'Left to write: ...' line, last of a long stdout, fell under the 20-line cap."""
        rows = "".join(f"echo 'row {i}'; " for i in range(30))
        status, out, _ = self.check(rows + "echo 'Left to write: the coarsened loop'; echo 'GATE: point 2' >&2; exit 1")
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("more differing lines not shown", out)
        self.assertIn("- exit 1: a gate failed or something is left to write", out)
        self.assertIn("- your program says: Left to write: the coarsened loop", out)

    def test_compares_with_the_lesson_not_the_starter(self):
        self.record(self.run_of("starter/demo"), stdout="answer 42\n", stderr="Left to write: twice\n", exit_code=1)
        status, out, _ = self.check("echo 'answer 42'; echo 'Left to write: twice' >&2; exit 1")
        self.assertEqual(status, EXIT_FAIL, out)

    def test_exit_77_without_a_gpu_is_a_skip_naming_the_pane_route(self):
        status, _, err = self.check('echo "no usable CUDA device: none" >&2; exit 77')
        self.assertEqual(status, EXIT_SKIP, err)
        self.assertIn("needs a CUDA GPU", err)
        self.assertIn("--pane FILE", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_no_gpu_and_no_pane_is_one_line_77_before_any_build(self):
        with no_gpu(), patched(running, "cmake_build", lambda *a, **k: self.fail("built without a GPU")):
            status, _, err = self.main("exercise", "check", "demo")
        self.assertEqual(status, EXIT_SKIP, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("exercise check demo --pane FILE", err)

    def test_exit_77_on_a_gpu_machine_is_a_finding(self):
        bin_dir = self.fake("demo_exercise", 'echo "no usable CUDA device: none" >&2; exit 77')
        with no_gpu(), patched(running, "gpu_present", lambda: True):
            status, _, err = self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir))
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("on a machine with a GPU", err)

    def test_a_lesson_without_a_run_line_is_one_line(self):
        for rel in ("lessons/demo.cu", "starter/demo.cu"):
            self.edit(rel, "// Run:   ./demo\n// Run:   ./demo --twice\n", "")
        status, _, err = self.check("true")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("no '// Run:' line", err)
        (self.root / "pane.txt").write_text("Program returned: 0\nProgram stdout\nanswer 42\n")
        status, _, err = self.main("exercise", "check", "demo", "--pane", str(self.root / "pane.txt"))
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_bin_dir_without_the_binary(self):
        (self.root / "empty").mkdir()
        with no_gpu():
            status, _, err = self.main("exercise", "check", "demo", "--bin-dir", str(self.root / "empty"))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("holds no demo_exercise", err)

    def test_gpu_without_recordings(self):
        with no_gpu():
            status, _, err = self.main("exercise", "check", "demo", "--gpu", "t4", "--bin-dir", str(self.root))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("no transcripts recorded for GPU 't4'", err)

    def test_args_without_pane_is_a_usage_error(self):
        status, _, err = self.check("true", "--args", "--twice")
        self.assertOneLineError(status, err, EXIT_USAGE)


def pane(stdout, stderr="", code=0):
    return f"Program returned: {code}\nProgram stdout\n{stdout}Program stderr\n{stderr}"


class TestExercisePane(ExerciseScratch):
    def setUp(self):
        super().setUp()
        self.write_exercise()

    def judge(self, text, *extra):
        path = self.root / "pane.txt"
        path.write_text(text)
        with no_gpu():
            return self.main("exercise", "check", "demo", "--pane", str(path), *extra, writes=True)

    def record_budget(self, twice_wall):
        entry = {"program": "lessons/demo.cu", "wall_s_1core": 1.0, "peak_rss_mib": 50.0, "output_bytes": 100,
                 "runs_budget": {"demo": {"wall_s_1core": 1.0, "peak_rss_mib": 50.0, "output_bytes": 100},
                                 "demo@twice": {"wall_s_1core": twice_wall, "peak_rss_mib": 50.0, "output_bytes": 100}}}
        (self.root / "expected/h200/verify.json").write_text(json.dumps({"programs": [entry]}))

    def test_a_pane_is_judged_by_the_exercise_rules(self):
        """Another GPU and the student's own words: the lesson's rules (compare) would reject it."""
        status, out, err = self.judge(pane(T4 + "answer 42\nk 3 ms\n"))
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("run ./demo: passed", out)
        self.assertIn("1 student-worded ignored", out)
        status, _, _ = self.main("compare", "demo", "--stdout", str(self.root / "pane.txt"))
        self.assertEqual(status, EXIT_FAIL, "compare applies the lesson's rules")

    def test_a_wrong_pane_fails_naming_the_line(self):
        status, out, _ = self.judge(pane(T4 + "answer 41\nk 3 ms\n"))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("the recording has 'answer 42', this output has 'answer 41'", out)

    def test_a_failed_gate_in_a_pane_fails(self):
        status, out, _ = self.judge(pane(T4 + "answer 42\n", "GATE: twice is not written\n", code=1))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit code 1, the recording says 0", out)

    def test_args_pick_the_recorded_run(self):
        status, out, err = self.judge(pane(T4 + "answer 84\nk 3 ms\n"), "--args", "--twice")
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("run ./demo --twice: passed", out)
        status, out, _ = self.judge(pane(T4 + "answer 42\nk 3 ms\n"), "--args", "--twice")
        self.assertEqual(status, EXIT_FAIL, out)

    def test_unknown_args_are_one_line_listing_the_runs(self):
        status, _, err = self.judge(pane(T4 + "answer 84\n"), "--args", "--thrice")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("--twice", err)
        self.assertIn("(no arguments)", err)

    def test_unjudged_runs_get_a_link_carrying_their_arguments(self):
        self.record_budget(twice_wall=2.0)
        status, out, _ = self.judge(pane(T4 + "answer 42\nk 3 ms\n"))
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("Still to pass from a pane: 1 of the 2 runs a pane can judge (1 passed; one pane per run):", out)
        self.assertIn("- ./demo --twice: fits Compiler Explorer's budget", out)
        self.assertIn("open: scripts/suite.py ce-link exercises/demo.cu --args --twice", out)
        status, link, _ = self.main("ce-link", "exercises/demo.cu", "--args", "--twice")
        state = celink.ce_decode(link.strip())
        row = state["content"][0]["content"]
        panes = {p["componentName"]: p["componentState"] for p in row}
        self.assertEqual(panes["executor"]["execArgs"], "--twice")
        self.assertEqual(panes["codeEditor"]["source"], (self.root / "exercises/demo.cu").read_text())
        self.assertIn("exercise check demo --pane FILE --args --twice", out)

    def test_a_run_over_the_budget_needs_a_real_gpu(self):
        self.record_budget(twice_wall=12.0)
        status, out, _ = self.judge(pane(T4 + "answer 42\nk 3 ms\n"))
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("Every run a pane can judge has passed (1 of the 2 recorded runs); only a GPU can judge: "
                      "the run ./demo --twice (over Compiler Explorer's budget: recorded wall_s_1core 12.0 > 5.0)", out)
        self.assertNotIn("- ./demo --twice", out)
        status, out, _ = self.judge(pane(T4 + "answer 84\nk 3 ms\n"), "--args", "--twice")  # it fit after all
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("Every run a pane can judge has passed (2 of the 2 recorded runs); only a GPU can judge: "
                      "compute-sanitizer", out)
        self.assertNotIn("godbolt.org", out)

    def test_without_a_record_the_budget_is_said_to_be_unknown(self):
        status, out, _ = self.judge(pane(T4 + "answer 42\nk 3 ms\n"))
        self.assertIn("budget is not recorded yet", out)

    def test_speed_is_not_judged_from_a_pane_and_it_says_so(self):
        self.edit_catalogue(lambda d: d["exercise"].update(speed=SPEED))
        status, out, _ = self.judge(pane(T4 + "answer 42\nk 3 ms\n"))
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("Only a GPU can judge: the speed of 'twice' (timed against the lesson's own kernel)", out)

    def test_a_file_without_program_returned_is_not_judged(self):
        """No verdict without evidence: a plain stdout file or a copy from 'Program stdout' on has no exit
        code (the untouched starter's stdout alone would pass); not judged, nothing recorded."""
        path = self.root / "pane.txt"
        for text, said in ((T4 + "answer 42\nk 3 ms\n", "it has no 'Program returned: N' line"),
                           ("Program stdout\n" + T4 + "answer 42\nk 3 ms\n", "a partial pane")):
            with self.subTest(said=said):
                path.write_text(text)
                with no_gpu():
                    status, out, err = self.main("exercise", "check", "demo", "--pane", str(path))
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn("not judged: " + said, err)
                self.assertIn("copy Compiler Explorer's executor pane whole", err)
                self.assertEqual(out, "")


# --- speed ------------------------------------------------------------------------------------
SPEED = {"region": "twice", "figure": r"^k (\S+) ms", "slow": "int twice(int v) { return v + v; /* SLOW */ }",
         "slow_description": "the slow reference", "look_at": "the loop", "rounds": 5}


class TestSpeedDecision(unittest.TestCase):
    def test_the_solutions_own_speed_passes_and_the_slow_ones_fails(self):
        sol, slow = [1.0, 1.01, 0.99, 1.0, 1.0], [3.0, 3.02, 2.98, 3.0, 3.0]
        self.assertEqual(speed_decision(sol, sol, slow)["outcome"], "passed")
        self.assertEqual(speed_decision(slow, sol, slow)["outcome"], "failed")
        d = speed_decision([1.2] * 5, sol, slow)
        self.assertEqual((d["outcome"], d["slow_ratio"], d["threshold"]), ("passed", 3.0, round(3 ** 0.75, 4)))
        self.assertEqual(speed_decision([2.0] * 5, sol, slow)["outcome"], "passed", "0.63 of the way: passes")
        self.assertEqual(speed_decision([2.6] * 5, sol, slow)["outcome"], "failed")

    def test_near_the_bar_within_the_spread_is_inconclusive(self):
        sol, slow = [1.0, 1.05, 1.0, 1.0, 1.0], [4.0] * 5  # bar 4 ** 0.75 = 2.83, half the spread 2.5%
        self.assertEqual(speed_decision([2.8] * 5, sol, slow)["outcome"], "inconclusive")

    def test_references_not_told_apart_is_inconclusive(self):
        sol, slow = [1.0, 1.3, 1.0, 1.0, 1.0], [1.25] * 5
        d = speed_decision(sol, sol, slow)
        self.assertEqual(d["outcome"], "inconclusive")
        self.assertFalse(d["separated"])

    def test_a_rate_counts_higher_as_better(self):
        sol, slow = [900.0, 910.0, 905.0, 900.0, 902.0], [300.0, 301.0, 300.0, 299.0, 300.0]
        self.assertEqual(speed_decision([880.0] * 5, sol, slow, "higher")["outcome"], "passed")
        self.assertEqual(speed_decision([310.0] * 5, sol, slow, "higher")["outcome"], "failed")

    def test_the_median_ignores_one_disturbed_round(self):
        sol, slow = [1.0] * 5, [3.0] * 5
        self.assertEqual(speed_decision([1.0, 1.0, 9.0, 1.0, 1.0], sol, slow)["outcome"], "inconclusive")
        self.assertEqual(speed_decision([1.0, 1.0, 1.0, 1.0, 1.0], sol, slow)["outcome"], "passed")

    def test_messages_say_what_to_look_at(self):
        spec = catalogue.Speed(SPEED)
        sol, slow = [1.0] * 5, [3.0] * 5
        failed = speed.speed_message(speed_decision(slow, sol, slow), spec)
        self.assertIn("(1) what this exercise teaches: the loop", failed)
        self.assertIn("inconclusive: re-run on an idle GPU",
                      speed.speed_message(speed_decision(sol, sol, [1.0] * 5), spec))

    def test_an_exercises_own_bar_moves_the_verdict_and_the_words(self):
        """report_data sets its bar at 0.9 of the way: 2.5 times the solution against a slow reference
        at 3 passes there (bar 2.69) and fails at the default 0.75 (bar 2.28); the message says which bar."""
        sol, slow = [1.0] * 5, [3.0] * 5
        self.assertEqual(speed_decision([2.5] * 5, sol, slow)["outcome"], "failed")
        d = speed_decision([2.5] * 5, sol, slow, bar=0.9)
        self.assertEqual((d["outcome"], d["threshold"]), ("passed", round(3 ** 0.9, 4)))
        said = speed.speed_message(d, catalogue.Speed(dict(SPEED, bar=0.9)))
        self.assertIn("the bar is 2.69 times (0.90 of the way from the solution to it, in log terms)", said)

    def test_a_failed_verdict_names_no_cause_it_did_not_measure(self):
        """The check times programs only: it states the times, and offers causes as possibilities,
        each with a way to look, none as the cause (a kernel slow for another reason was once told
        to look at the one thing it did right)."""
        spec = catalogue.Speed(SPEED)
        sol, slow = [1.0] * 5, [3.0] * 5
        failed = speed.speed_message(speed_decision(slow, sol, slow), spec)
        measured, _, offered = failed.partition("This check measured time only, so it cannot tell why; ")
        self.assertTrue(offered, failed)
        self.assertIn("on this GPU", measured)
        self.assertIn("3.00 times the lesson's solution", measured)
        self.assertNotIn("the loop", measured, "a cause stated as a finding")
        items = ["what this exercise teaches: the loop"] + [f"{cause}: {how}" for cause, how in speed.USUAL_CAUSES]
        self.assertEqual(offered, "possible causes, with how to look at each:"
                         + "".join(f"\n  ({i}) {item}" for i, item in enumerate(items, 1)),
                         "every cause offered as a possibility, none as the finding")


def fake_speed_build(prog, text, tmp, arch=None, sass=None):
    """A 'compiler' for the demo: prints what the real program would, and a time that depends on the code."""
    import re
    body = re.search(r"int twice\(int v\) \{ return (.*?); (?:/\* SLOW \*/ )?\}", text).group(1)
    value = eval(body, {}, {"v": 42})
    ms = 3.0 if "SLOW" in text else (2.6 if "1 * v" in text else 1.0)  # bar: 3 ** 0.75 = 2.28
    path = Path(tmp) / "demo"
    path.write_text("#!/bin/sh\n" + by_arg(T4 + f"answer 42\nk {ms} ms\n", T4 + f"answer {value}\nk {ms} ms\n") + "\n")
    path.chmod(0o755)
    return path, None


class TestSpeedCheck(ExerciseScratch):
    def setUp(self):
        super().setUp()
        self.edit_catalogue(lambda d: d["exercise"].update(speed=SPEED))

    def check(self, body):
        self.edit("exercises/demo.cu", "int twice(int v) { return v; }", f"int twice(int v) {{ return {body}; }}")
        text = (self.root / "exercises/demo.cu").read_text()
        (self.root / "fakebuild").mkdir()
        bin_dir = self.fake("demo_exercise", fake_speed_build(None, text, self.root / "fakebuild")[0].read_text())
        with patched(running, "detect_gpu", lambda: FACTS), patched(catalogue, "build_in_scratch", fake_speed_build), \
                no_sanitizer():
            return self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir))

    def test_a_kernel_as_fast_as_the_solution_passes(self):
        status, out, err = self.check("2 * v")
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("speed: passed", out)
        self.assertIn("Congratulations", out)

    def test_right_numbers_far_slower_fail_saying_what_to_look_at(self):
        status, out, err = self.check("1 * v + v")
        self.assertEqual(status, EXIT_FAIL, out + err)
        self.assertIn("run ./demo --twice: passed", out)
        self.assertIn("speed: FAILED", out)
        self.assertIn("what this exercise teaches: the loop", out)
        self.assertIn("measured time only", out)
        self.assertNotIn("Congratulations", out)

    def test_the_timed_programs_carry_the_gpus_own_machine_code(self):
        """A GPU newer than the Build: line's -arch would compile each program's PTX at every timed
        start; the speed check builds all three with the GPU's own code beside it."""
        seen = []

        def recording_build(prog, text, tmp, arch=None, sass=None):
            seen.append(sass)
            return fake_speed_build(prog, text, tmp, arch, sass)
        self.edit("exercises/demo.cu", "int twice(int v) { return v; }", "int twice(int v) { return 2 * v; }")
        text = (self.root / "exercises/demo.cu").read_text()
        with patched(catalogue, "native_arch", lambda: "sm_90"), patched(catalogue, "build_in_scratch", recording_build):
            outcome, _ = speed.speed_check(self.root, "demo", text, catalogue.load(self.root)["demo"].speed)
        self.assertEqual((outcome, seen), ("passed", ["sm_90"] * 3))

    def test_a_copy_that_refuses_the_time_args_is_timed_at_the_run_itself(self):
        """gemm_ladder times step 4 alone (-from 4 -to 4); a student's copy made before those options
        existed exits 2 on them: all three are then timed at the run's own arguments, and it says so."""
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(time_args=["-from", "4"]))
        self.edit("exercises/demo.cu", "int twice(int v) { return v; }", "int twice(int v) { return 2 * v; }")
        text = (self.root / "exercises/demo.cu").read_text()
        seen = []

        def runner(path, args):
            seen.append(list(args))
            if "-from" in args and "student" in str(path):
                return {"exit_code": 2, "stdout": "", "stderr": "error: unknown option \"-from\""}
            return {"exit_code": 0, "stdout": "k 3.0 ms\n" if "slow" in str(path) else "k 1.0 ms\n", "stderr": ""}

        def build(prog, text, tmp, arch=None, sass=None):
            key = "slow" if "SLOW" in text else "student" if "2 * v" in text else "solution"
            return Path(tmp) / key, None
        with patched(catalogue, "build_in_scratch", build):
            outcome, lines = speed.speed_check(self.root, "demo", text, catalogue.load(self.root)["demo"].speed, runner)
        self.assertEqual(outcome, "passed")
        self.assertIn("your program refuses -from 4", "\n".join(lines))
        self.assertTrue(all("-from" not in a for a in seen[1:]), seen)
        seen.clear()
        with patched(catalogue, "build_in_scratch", lambda prog, t, tmp, arch=None, sass=None: (Path(tmp) / "solution", None)):
            speed.speed_check(self.root, "demo", text, catalogue.load(self.root)["demo"].speed, runner)
        self.assertTrue(seen and all(a[-2:] == ["-from", "4"] for a in seen), "a copy that takes them is timed with them")

        def failing(path, args):  # exit 1 (a gate) is a failed run, not an older copy: no fallback
            if "-from" in args and "student" in str(path):
                return {"exit_code": 1, "stdout": "", "stderr": "GATE: step 4"}
            return runner(path, args)
        with patched(catalogue, "build_in_scratch", build), self.assertRaises(SuiteError) as caught:
            speed.speed_check(self.root, "demo", text, catalogue.load(self.root)["demo"].speed, failing)
        self.assertIn("-from 4", str(caught.exception))

    def test_the_exercises_own_bar_decides_the_students_verdict(self):
        """At 2.6 times the solution against a slow reference at 3: failed at the default bar (2.28),
        passed at the exercise's bar of 0.9 (2.69), as report_data's 1.48-times kernel needs."""
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(bar=0.9))
        status, out, err = self.check("1 * v + v")
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("speed: passed", out)
        self.assertIn("the bar is 2.69 times (0.90 of the way", out)

    def test_speed_is_judged_only_after_every_run_passes(self):
        status, out, _ = self.check("v + 1")
        self.assertEqual(status, EXIT_FAIL)
        self.assertNotIn("speed:", out)

    def test_rounds_alternate_and_a_missing_figure_is_named(self):
        calls = []

        def runner(path, args):
            calls.append(Path(path).name)
            return {"exit_code": 0, "stdout": "k 2 ms\n" if Path(path).name != "b" else "no figure\n", "stderr": ""}
        spec = catalogue.Speed(dict(SPEED, rounds=3))
        figures = speed.time_rounds([("a", "a"), ("c", "c")], [], spec, runner)
        self.assertEqual(calls, ["a", "c", "c", "a", "a", "c"])
        self.assertEqual(figures, {"a": [2.0] * 3, "c": [2.0] * 3})
        with self.assertRaisesRegex(SuiteError, "speed: b .* printed no figure"):
            speed.time_rounds([("a", "a"), ("b", "b")], [], spec, runner)

    def test_a_failing_attempt_is_dropped_and_the_rest_still_timed(self):
        """verify's speed phase: an attempt that fails (a gate, no figure) is left out with its reason;
        a reference that fails still stops the exercise's timing."""
        def runner(path, args):
            bad = Path(path).name == "attempt b"
            return {"exit_code": 1 if bad else 0, "stdout": "" if bad else "k 2 ms\n", "stderr": "GATE: x" if bad else ""}
        spec = catalogue.Speed(dict(SPEED, rounds=3))
        dropped = {}
        figures = speed.time_rounds([("solution", "a"), ("attempt b", "attempt b")], [], spec, runner, dropped)
        self.assertEqual(figures["solution"], [2.0] * 3)
        self.assertEqual(list(dropped), ["attempt b"])
        self.assertIn("exited 1", dropped["attempt b"])
        with self.assertRaisesRegex(SuiteError, "speed: slow reference .* exited 1"):
            speed.time_rounds([("solution", "a"), ("slow reference", "attempt b")], [], spec, runner, {})

    def test_figure_after_a_section_line(self):
        spec = catalogue.Speed(dict(SPEED, figure=r"time: median (\S+) ms", after=r"^Step 3 "))
        out = "Step 1\n  time: median 9.0 ms\nStep 3 - x\n  check\n  time: median 2.5 ms\nStep 4\n  time: median 1.0 ms\n"
        self.assertEqual(speed.figure_of(out, spec), 2.5)
        self.assertIsNone(speed.figure_of("Step 1\n  time: median 9.0 ms\n", spec))


class TestExerciseVerdictOnRealTranscripts(unittest.TestCase):
    """The real testing lesson: its starter's recorded behaviour is rejected, its own accepted."""

    def setUp(self):
        self.lesson = parse_transcript(REPO / "expected/h200/testing.txt")
        self.starter = parse_transcript(REPO / "expected/h200/starter/testing.txt")

    def as_result(self, info):
        return {"stdout": info["stdout"], "stderr": info["stderr"], "exit_code": info["exit_code"]}

    def test_starter_output_is_rejected(self):
        self.assertFalse(verdict(self.lesson, self.as_result(self.starter)).ok)

    def test_lesson_output_is_accepted(self):
        self.assertTrue(verdict(self.lesson, self.as_result(self.lesson)).ok)

    def test_one_changed_number_is_located(self):
        changed = self.as_result(self.lesson)
        lines = changed["stdout"].splitlines()
        k = next(i for i, line in enumerate(lines) if "rel " in line)
        lines[k] = lines[k].replace("rel ", "rel 1", 1)
        changed["stdout"] = "\n".join(lines) + "\n"
        cmp = verdict(self.lesson, changed)
        self.assertFalse(cmp.ok)
        self.assertIn(f"line {k + 1} of stdout", cmp.problems[0])


if __name__ == "__main__":
    unittest.main()
