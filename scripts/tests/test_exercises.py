"""Tests of suitelib.exercises: `exercise start`, and `exercise check` judging behaviour against
the LESSON's transcript (device facts masked, student-worded lines dropped, the deciding lines named)."""

import unittest

from helpers import REPO, Scratch, no_gpu, patched
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE, running
from suitelib.exercises import verdict
from suitelib.transcripts import parse_transcript

LESSON_OUT = "GPU: NVIDIA H200 (compute capability 9.0)\n[device] 132 SMs\nnote: the lesson's words\nanswer 42\nk 1.5 ms\n"


class TestExerciseStart(Scratch):
    def test_start_copies_the_starter(self):
        status, _, err = self.main("exercise", "start", "demo", writes=True)
        self.assertEqual(status, EXIT_OK, err)
        self.assertEqual((self.root / "exercises/demo.cu").read_text(), (self.root / "starter/demo.cu").read_text())

    def test_start_never_overwrites_without_force(self):
        (self.root / "exercises").mkdir()
        (self.root / "exercises/demo.cu").write_text("my work\n")
        status, _, err = self.main("exercise", "start", "demo")
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("not overwriting your work", err)
        status, _, _ = self.main("exercise", "start", "demo", "--force", writes=True)
        self.assertEqual(status, EXIT_OK)
        self.assertNotEqual((self.root / "exercises/demo.cu").read_text(), "my work\n")

    def test_unknown_exercise(self):
        status, _, err = self.main("exercise", "start", "nosuch")
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_check_before_start(self):
        status, _, err = self.main("exercise", "check", "demo")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("exercise start demo", err)


class TestExerciseCheck(Scratch):
    def setUp(self):
        super().setUp()
        (self.root / "exercises").mkdir()
        (self.root / "exercises/demo.cu").write_text((self.root / "starter/demo.cu").read_text())
        self.record(self.run_of("demo"), stdout=LESSON_OUT)

    def check(self, script, *extra):
        bin_dir = self.fake("demo_exercise", script)
        with no_gpu(), patched(running, "gpu_present", lambda: False):
            return self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir), *extra)

    def test_exit_77_without_a_gpu_is_a_skip(self):
        status, _, err = self.check('echo "no usable CUDA device: none" >&2; exit 77')
        self.assertEqual(status, EXIT_SKIP, err)
        self.assertIn("needs a CUDA GPU", err)

    def test_exit_77_on_a_gpu_machine_is_a_finding(self):
        bin_dir = self.fake("demo_exercise", 'echo "no usable CUDA device: none" >&2; exit 77')
        with no_gpu(), patched(running, "gpu_present", lambda: True):
            status, _, err = self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir))
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("on a machine with a GPU", err)

    def test_same_behaviour_on_another_gpu_passes(self):
        status, out, err = self.check("printf 'GPU: Tesla T4 (compute capability 7.5)\\n[device] 40 SMs\\n"
                                      "note: my own words\\nanswer 42\\nk 9.9 ms\\n'")
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("Congratulations", out)
        self.assertIn("student-worded ignored", out)
        self.assertIn("2 device facts not compared", out)

    def test_other_register_counts_on_the_recording_gpu_pass(self):
        self.record(self.run_of("demo"), stdout=LESSON_OUT.replace("k 1.5 ms", "k 1.5 ms 40 regs"))
        status, out, err = self.check("cat <<'X'\n" + LESSON_OUT.replace("k 1.5 ms", "k 1.2 ms 64 regs") + "X")
        self.assertEqual(status, EXIT_OK, out + err)

    def test_wrong_result_fails_naming_the_line(self):
        status, out, _ = self.check("printf 'GPU: Tesla T4 (compute capability 7.5)\\n[device] 40 SMs\\nnote: x\\nanswer 41\\nk 1 ms\\n'")
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("the recording has 'answer 42', this output has 'answer 41'", out)

    def test_a_failed_gate_fails(self):
        status, out, _ = self.check("cat <<'X'\n" + LESSON_OUT + "X\necho 'GATE: left to write' >&2; exit 1")
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit code 1, the recording says 0", out)

    def test_compares_with_the_lesson_not_the_starter(self):
        self.record(self.run_of("starter/demo"), stdout="answer 42\n", stderr="Left to write: twice\n", exit_code=1)
        status, out, _ = self.check("echo 'answer 42'; echo 'Left to write: twice' >&2; exit 1")
        self.assertEqual(status, EXIT_FAIL, out)

    def test_bin_dir_without_the_binary(self):
        (self.root / "empty").mkdir()
        with no_gpu():
            status, _, err = self.main("exercise", "check", "demo", "--bin-dir", str(self.root / "empty"))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("holds no demo_exercise", err)

    def test_gpu_without_recordings(self):
        status, _, err = self.main("exercise", "check", "demo", "--gpu", "t4", "--bin-dir", str(self.root))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("no transcripts recorded for GPU 't4'", err)


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
