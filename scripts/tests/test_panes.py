"""Tests of the exercise verdict from Compiler Explorer panes (exercise check --pane): only the executor
pane saved whole is judged, the compiler's Output pane is refused, passed runs are remembered for the
exercise file's source key until the verdict says every run a pane can judge has passed, several
panes are judged together, a pane of another run or lesson is named, and nothing is written through
a symbolic link. Each test plants the defect the issue found and sees it refused, caught or named."""

import json
import os
import tempfile
from pathlib import Path

from helpers import no_gpu
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_USAGE
from suitelib.model import Program
from test_exercises import ExerciseScratch

LESSON_OUT = "GPU: NVIDIA H200 (compute capability 9.0)\n[device] 132 SMs\nnote: the lesson's words\nanswer 42\n"
TWICE_OUT = LESSON_OUT.replace("answer 42", "answer 84")
T4 = "GPU: Tesla T4 (compute capability 7.5)\n[device] 40 SMs\nnote: my own words\n"


def pane(stdout, stderr="", code=0):
    """Compiler Explorer's executor pane, as static/panes/executor.ts prints it: the exit code, then
    each stream under its heading, the heading left out where the stream is empty."""
    text = f"Program returned: {code}\n"
    text += f"Program stdout\n{stdout}" if stdout else ""
    text += f"Program stderr\n{stderr}" if stderr else ""
    return text


class PaneScratch(ExerciseScratch):
    lesson_out = LESSON_OUT

    def setUp(self):
        super().setUp()
        self.record(self.run_of("starter/demo"), stdout=LESSON_OUT, stderr="Left to write: twice\n", exit_code=1)

    def write(self, name, text):
        path = self.root / name
        path.write_text(text)
        return str(path)

    def judge(self, *argv, writes=True):
        with no_gpu():
            return self.main("exercise", "check", "demo", *argv, writes=writes)

    def passes(self):
        path = self.root / "exercises/demo.panes.json"
        return sorted(json.loads(path.read_text())["passed"]) if path.exists() else None


class TestPaneEvidence(PaneScratch):
    """Item 1 and 2: a verdict only from the executor pane with its exit code."""

    def test_the_untouched_starter_stdout_alone_is_not_judged(self):
        """Found 1: the starter's stdout copied without 'Program returned: 1' and its stderr passed."""
        status, out, err = self.judge("--pane", self.write("p.txt", "Program stdout\n" + T4 + "answer 42\n"),
                                      writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("not judged: a partial pane", err)
        self.assertIsNone(self.passes())

    def test_absent_headings_are_empty_streams(self):
        status, out, err = self.judge("--pane", self.write("p.txt", pane(T4 + "answer 42\n")))
        self.assertEqual(status, EXIT_OK, out + err)
        status, out, _ = self.judge("--pane", self.write("p.txt", "Program returned: 0\n"))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("stdout differs", out)

    def test_the_compilers_output_pane_is_refused_naming_the_executor_pane(self):
        """Found 2: the Output pane prints stderr then stdout unlabelled (static/panes/output.ts)."""
        output_pane = ("ASM generation compiler returned: 0\nExecution build compiler returned: 0\n"
                       "Program returned: 0\nnote: to stderr\n" + T4 + "answer 42\n")
        status, out, err = self.judge("--pane", self.write("p.txt", output_pane), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("is the compiler's Output pane", err)
        self.assertIn("copy Compiler Explorer's executor pane whole", err)

    def test_a_failed_gate_names_what_is_left(self):
        """Found 8: a starter's pane gets the GPU route's hint and the program's own 'Left to write' line,
        even where the diff is cut at 20 lines."""
        many = "".join(f"row {i}\n" for i in range(40))
        self.record(self.run_of("demo"), stdout=LESSON_OUT + "".join(f"row {i + 100}\n" for i in range(40)))
        status, out, _ = self.judge("--pane", self.write("p.txt", pane(T4 + "answer 42\n" + many
                                                                      + "Left to write: twice\n", "GATE: x\n", 1)))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("- exit 1: a gate failed or something is left to write", out)
        self.assertIn("- your program says: Left to write: twice", out)
        self.assertIn("more differing lines not shown", out)


class TestPaneRecord(PaneScratch):
    """Item 3 and 5: passes remembered for the file's source key; the verdict ends."""

    def test_passes_are_remembered_and_the_verdict_ends_naming_what_only_a_gpu_judges(self):
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")))
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("Still to pass from a pane: 1 of the 2 runs a pane can judge (1 passed", out)
        self.assertNotIn("- ./demo:", out)
        self.assertEqual(self.passes(), ["demo"])
        status, out, _ = self.judge("--pane", self.write("b.txt", pane(T4 + "answer 84\n")), "--args", "--twice")
        self.assertEqual(status, EXIT_OK, out)
        self.assertEqual(self.passes(), ["demo", "demo@twice"])
        done = [line for line in out.splitlines() if line.startswith("Every run a pane can judge has passed")]
        self.assertEqual(len(done), 1, out)
        self.assertIn("(2 of the 2 recorded runs); only a GPU can judge: compute-sanitizer memcheck with 64 KiB "
                      "of padding after every allocation on the lesson's Sanitize: run ./demo", done[0])
        self.assertNotIn("Still to pass", out)

    def test_a_change_to_the_code_forgets_the_passes_and_a_comment_does_not(self):
        self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")))
        self.edit("exercises/demo.cu", "// exercise: twice", "// exercise: twice\n// my note")
        status, out, _ = self.judge("--pane", self.write("b.txt", pane(T4 + "answer 84\n")), "--args", "--twice")
        self.assertIn("Every run a pane can judge has passed", out)
        self.edit("exercises/demo.cu", "int twice(int v) { return v; }", "int twice(int v) { return v + v; }")
        status, out, _ = self.judge("--pane", self.write("b.txt", pane(T4 + "answer 84\n")), "--args", "--twice")
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("changed since the 2 pass(es)", out)
        self.assertIn("Still to pass from a pane: 1 of the 2", out)
        self.assertEqual(self.passes(), ["demo@twice"])

    def test_a_record_of_no_passes_from_other_code_says_nothing(self):
        import json
        (self.root / "exercises/demo.panes.json").write_text(json.dumps({"source_key": "0" * 64, "passed": {}}))
        status, out, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")))
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertNotIn("changed since", out + err)
        self.assertEqual(self.passes(), ["demo"])

    def test_a_failing_pane_of_a_passed_run_takes_its_pass_back(self):
        self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")))
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 41\n")))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertEqual(self.passes(), [])

    def test_the_verdict_names_the_file_and_its_source_key(self):
        key = Program(self.root, self.root / "exercises/demo.cu").source_key()
        _, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")))
        self.assertIn(f"Recorded for exercises/demo.cu (source key {key[:12]}...", out)
        self.assertEqual(json.loads((self.root / "exercises/demo.panes.json").read_text())["source_key"], key)

    def test_no_exercise_file_no_verdict(self):
        """Found 5: the lesson's own pane passed with no exercises/NAME.cu at all."""
        (self.root / "exercises/demo.cu").unlink()
        status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("exercises/demo.cu does not exist", err)

    def test_several_panes_are_judged_together(self):
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")),
                                    "--pane", self.write("b.txt", pane(T4 + "answer 84\n")), "--args", "--twice")
        self.assertEqual(status, EXIT_OK, out)
        self.assertIn("judged as run ./demo:", out)
        self.assertIn("judged as run ./demo --twice:", out)
        self.assertIn("Every run a pane can judge has passed (2 of the 2", out)

    def test_several_panes_are_refused_together_before_any_is_judged(self):
        """Found 3: a second --pane silently replaced the first."""
        for argv, said in ((("--pane", self.write("a.txt", pane(T4 + "answer 42\n")),
                             "--pane", self.write("b.txt", pane(T4 + "answer 42\n"))), "are both for the run ./demo"),
                           (("--pane", self.write("c.txt", pane(T4 + "answer 42\n")),
                             "--pane", self.write("d.txt", "answer 84\n"), "--args", "--twice"), "not judged"),
                           (("--args", "--twice", "--pane", self.write("e.txt", pane(T4 + "answer 84\n")),
                             "--pane", self.write("f.txt", pane(T4 + "answer 42\n"))), "belongs to no --pane")):
            with self.subTest(said=said):
                status, out, err = self.judge(*argv, writes=False)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn(said, err)
                self.assertEqual(out, "")

    def test_the_record_is_never_written_through_a_link(self):
        outside = Path(tempfile.mkdtemp(prefix="suite-outside-"))
        try:
            (outside / "victim").write_text("keep me\n")
            os.symlink(outside / "victim", self.root / "exercises/demo.panes.json")
            status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
            self.assertOneLineError(status, err, EXIT_USAGE)
            self.assertIn("is a symbolic link", err)
            self.assertEqual((outside / "victim").read_text(), "keep me\n")
        finally:
            for p in outside.iterdir():
                p.unlink()
            outside.rmdir()

    def test_the_record_is_never_written_into_a_linked_exercises_folder(self):
        outside = Path(tempfile.mkdtemp(prefix="suite-outside-"))
        try:
            (outside / "demo.cu").write_text((self.root / "exercises/demo.cu").read_text())
            (self.root / "exercises/demo.cu").unlink()
            (self.root / "exercises").rmdir()
            os.symlink(outside, self.root / "exercises")
            status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
            self.assertOneLineError(status, err, EXIT_USAGE)
            self.assertIn("exercises/ is a symbolic link", err)
            self.assertEqual(sorted(p.name for p in outside.iterdir()), ["demo.cu"])
        finally:
            for p in outside.iterdir():
                p.unlink()
            outside.rmdir()


class TestPaneNaming(PaneScratch):
    """Item 4: a pane that fails its run but is another recorded run, or another lesson's, is named."""

    def test_a_pane_of_another_run_names_its_args(self):
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 84\n")))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("this is the run `./demo --twice`: add --args '--twice'", out)
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), "--args", "--twice")
        self.assertIn("this is the run `./demo`: drop --args (it is the default run)", out)

    def test_the_untouched_starter_is_named(self):
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n", "Left to write: twice\n", 1)))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("this pane is the untouched starter's recorded output", out)

    def test_a_pane_of_another_lesson_is_named(self):
        text = (self.root / "lessons/demo.cu").read_text().replace("./demo", "./other")
        (self.root / "lessons/other.cu").write_text(text)
        self.record(Program(self.root, self.root / "lessons/other.cu").runs()[1], stdout="other 7\n")
        status, out, _ = self.judge("--pane", self.write("a.txt", pane("other 7\n")))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("this pane is another lesson's run, other's `./other --twice`: judge it with "
                      "scripts/suite.py exercise check other --pane FILE --args '--twice'", out)

    def test_a_pane_that_matches_nothing_names_nothing(self):
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 7\n")))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertNotIn("this is the run", out)
        self.assertNotIn("this pane is", out)
