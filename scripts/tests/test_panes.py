"""Tests of the exercise verdict from Compiler Explorer panes (exercise check --pane): only the executor
pane saved whole is judged, the compiler's Output pane is refused, passed runs are remembered for the
exercise file's source key until the verdict says every run a pane can judge has passed, several
panes are judged together, a pane of another run or lesson is named, and nothing is written through
a symbolic link. Each test plants the defect the issue found and sees it refused, caught or named."""

import json
import os
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, as_printed, no_gpu, patched, real_transcripts
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_USAGE, SuiteError, transcripts
from suitelib.model import Program
from suitelib.pane import PANE_LIMIT, classify, read_pane
from suitelib.transcripts import MASK_TOKEN_RE, parse_transcript
from test_exercises import STAND_IN, WRITTEN, ExerciseScratch

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
        self.write_exercise()
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
                      "of padding after every allocation on the lesson's first Run: (it has no Sanitize: line) ./demo", done[0])
        self.assertNotIn("Still to pass", out)

    def test_a_change_to_the_code_forgets_the_passes_and_a_comment_does_not(self):
        self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")))
        self.edit("exercises/demo.cu", "// exercise: twice", "// exercise: twice\n// my note")
        status, out, _ = self.judge("--pane", self.write("b.txt", pane(T4 + "answer 84\n")), "--args", "--twice")
        self.assertIn("Every run a pane can judge has passed", out)
        self.edit("exercises/demo.cu", WRITTEN, "int twice(int v) { return v + v; }")
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


class TestPaneSource(PaneScratch):
    """Found 1 (second round): the student's file was never looked at on the pane route; a pane of the
    lesson's correct output passed beside the untouched starter, an empty file, `int main(){}` or a link
    to the lesson. Each is planted here and refused before anything is judged or recorded."""

    def test_the_starters_stand_in_is_refused_beside_a_correct_pane(self):
        self.edit("exercises/demo.cu", WRITTEN, STAND_IN)
        status, out, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
        self.assertOneLineError(status, err, EXIT_FAIL)
        self.assertIn("exercises/demo.cu still holds the starter's stand-in in region 'twice': write the exercise "
                      "first", err)
        self.assertEqual(out, "")
        self.assertIsNone(self.passes())

    def test_comments_and_blanks_do_not_make_a_stand_in_written(self):
        written = (self.root / "exercises/demo.cu").read_text()
        self.assertIn(WRITTEN, written)
        for stand_in in ("// my plan: double it\nint  twice(int v)\n{ return v; }  /* soon */\n",
                         "int twice(int v){return v;}\n", "int twice(\n    int v) {\n  return v;\n}\n"):
            with self.subTest(stand_in=stand_in):
                (self.root / "exercises/demo.cu").write_text(written.replace(WRITTEN, stand_in))
                status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
                self.assertOneLineError(status, err, EXIT_FAIL)
                self.assertIn("still holds the starter's stand-in in region 'twice'", err)

    def test_a_file_that_is_not_the_lessons_exercise_is_not_judged(self):
        starter = (self.root / "starter/demo.cu").read_text()
        other = (self.root / "exercises/demo.cu").read_text().replace("./demo", "./other")
        for text, said in (("", "its header lacks a '// Build:' line or a '// Run:   ./demo' line"),
                           ("int main() { return 0; }\n", "its header lacks"),
                           (other, "its header lacks"),
                           (starter.replace("// exercise: twice\n", "").replace("// end exercise\n", ""),
                            "it lacks the exercise region(s) 'twice' of starter/demo.cu"),
                           (starter.replace("// end exercise\n", ""), "(exercises/demo.cu:")):
            with self.subTest(said=said):
                (self.root / "exercises/demo.cu").write_text(text)
                status, out, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn("exercises/demo.cu is not the demo exercise: ", err)
                self.assertIn(said, err)
                self.assertIsNone(self.passes())

    def test_a_linked_exercise_file_is_refused_wherever_it_points(self):
        """The contract: the tool refuses a link at exercises/NAME.cu wherever it points; the pane route
        judges (and keeps its record beside) the student's own file, so a link into exercises/ is refused too."""
        written = (self.root / "exercises/demo.cu").read_text()
        (self.root / "exercises/mine.cu").write_text(written)
        for target, where in (("../lessons/demo.cu", ", inside lessons/"), ("mine.cu", "")):
            with self.subTest(target=target):
                link = self.root / "exercises/demo.cu"
                link.unlink()
                os.symlink(target, link)
                status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn(f"exercises/demo.cu is a symbolic link to {target}{where}: refusing to judge a pane "
                              f"by it", err)
                self.assertIsNone(self.passes())

    def test_a_file_that_is_not_utf8_is_not_judged(self):
        """Found 10: it was a finding (exit 1); a file that cannot be read is not judged (exit 2)."""
        path = self.root / "exercises/demo.cu"
        path.write_bytes(path.read_bytes().replace(b"miniature", b"mini\xe9ture"))
        status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n")), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("not UTF-8 text", err)
        self.assertIn("exercises/demo.cu is not judged; save it as UTF-8", err)

    def test_a_lesson_name_that_is_a_path_is_refused(self):
        """Found 6: '../lessons/demo' judged lessons/demo.cu and wrote lessons/demo.panes.json."""
        for name in ("../lessons/demo", str(self.root / "lessons/demo"), "demo/", "lessons/demo"):
            for argv in (("check", name, "--pane", self.write("a.txt", pane(T4 + "answer 42\n"))), ("start", name)):
                with self.subTest(argv=argv), no_gpu():
                    status, _, err = self.main("exercise", *argv)
                    self.assertOneLineError(status, err, EXIT_USAGE)
                    self.assertIn(f"no exercise called {name!r}: an exercise is a lesson with a starter (have: demo)",
                                  err)
        self.assertFalse((self.root / "lessons/demo.panes.json").exists())


class TestRealStandIns(unittest.TestCase):
    """The stand-in rule on the course itself: every starter is refused, every lesson with its solution
    regions renamed to exercise regions is not, nor is any correct catalogue attempt built on a
    starter (a correct attempt leaves no region as the stand-in: the rule costs no student a pass)."""

    def test_the_course(self):
        from suitelib import catalogue, exercises
        from suitelib.model import lesson
        cats = catalogue.load(REPO)
        for path in sorted((REPO / "starter").glob("*.cu")):
            name = path.stem
            with self.subTest(starter=name):
                starter = lesson(REPO, name, starter=True).text
                exercises.refuse_foreign_exercise(REPO, name, starter)
                with self.assertRaises(SuiteError) as caught:
                    exercises.refuse_stand_ins(REPO, name, starter)
                self.assertIn("still holds the starter's stand-in", str(caught.exception))
                solved = (lesson(REPO, name).text.replace("// solution: ", "// exercise: ")
                          .replace("// end solution", "// end exercise"))
                exercises.refuse_foreign_exercise(REPO, name, solved)
                exercises.refuse_stand_ins(REPO, name, solved)
            for attempt in (a for a in cats[name].attempts if a.kind == "correct" and a.base == "starter"):
                with self.subTest(attempt=attempt.name):
                    exercises.refuse_stand_ins(REPO, name, attempt.apply(starter))


class TestPaneReading(PaneScratch):
    """Found 2, 3, 4, 7, 8, 9 and 10 (second round): what a pane holds, and how it is read."""

    def test_a_copy_of_the_recording_is_refused(self):
        """Found 2: the transcript's stdout pasted under the headings, placeholders and all, passed."""
        self.record(self.run_of("demo"), stdout=LESSON_OUT + "k 1.5 ms, 1234.5 GFLOP/s\n")
        copy = pane(parse_transcript(self.run_of("demo").transcript_path("h200"))["stdout"])
        self.assertIn("[MS] ms", copy)
        status, out, err = self.judge("--pane", self.write("a.txt", copy), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("a.txt:7: '[MS]' is a placeholder of the recorded transcript, which no program prints", err)
        self.assertIsNone(self.passes())
        status, _, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\nk 2.5 ms, 99.5 GFLOP/s\n")))
        self.assertEqual(status, EXIT_OK)

    def test_a_misshapen_exit_code_line_is_named(self):
        """Not 'a partial pane': the line is there, its exit code is not an integer."""
        for line in ("Program returned: abc", "Program returned: +0", "Program returned:"):
            with self.subTest(line=line):
                status, _, err = self.judge("--pane", self.write("a.txt", line + "\nProgram stdout\n" + T4 + "answer 42\n"),
                                            writes=False)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn(f"a.txt:1: '{line}' is not Compiler Explorer's exit-code line", err)

    def test_stderr_above_stdout_is_read_not_dropped(self):
        """Found 3: with 'Program stderr' above 'Program stdout', its lines were dropped and the pane passed."""
        status, out, _ = self.judge("--pane", self.write("a.txt", "Program returned: 0\nProgram stderr\nGATE: a gate "
                                                         "failed\nProgram stdout\n" + T4 + "answer 42\n"))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("stderr differs from the recording at " + str(self.root / "a.txt") + ":3 (line 1 of stderr)", out)
        texts = ("Program returned: 3\nProgram stdout\na\nb\nProgram stderr\nc\n",
                 "Program returned: 3\nProgram stderr\nc\nProgram stdout\na\nb\n")
        either = [classify(text.splitlines()) for text in texts]
        self.assertEqual([(p.stdout, p.stderr, p.code) for p in either], [(["a", "b"], ["c"], 3)] * 2)
        self.assertEqual([(p.stdout_at, p.stderr_at) for p in either], [(2, 5), (4, 2)])

    def test_a_bare_device_line_is_refused(self):
        """Found 4: a pane cut right after a last line's '[device]' tag passed (device lines are masked whole).
        Only the bare tag is refused: a device line's words differ between GPUs (gemm_ladder's 'B copies: ...'
        on a T4 is not the H200's), so a cut further in cannot be told from another GPU's line."""
        self.record(self.run_of("demo"), stdout=LESSON_OUT + "[device] 60 MiB L2\n")
        for cut in ("[device]", "[device]  ", "  [device]", "# [device]", "GPU:"):
            with self.subTest(cut=cut):
                status, _, err = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n" + cut)), writes=False)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn(f"a.txt:7: a bare '{cut.strip()}' line, which no program prints: the copy looks cut", err)
        status, out, _ = self.judge("--pane", self.write("a.txt", pane(T4 + "answer 42\n[device] 4 MiB L2\n")))
        self.assertEqual(status, EXIT_OK, out)

    def test_a_pane_far_larger_than_compiler_explorer_shows_is_refused(self):
        """Found 7: a 1 MiB pane took 13.7 s (every recording masked it again)."""
        big = pane(T4 + "answer 42\n" + "x\n" * (PANE_LIMIT // 2))
        status, _, err = self.judge("--pane", self.write("a.txt", big), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("is more than a Compiler Explorer executor pane holds: it shows at most 32 KiB of each stream "
                      "(320 KiB at most here)", err)
        one_over = self.write("b.txt", "x" * (PANE_LIMIT + 1))
        status, _, err = self.judge("--pane", one_over, writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn(f"{PANE_LIMIT + 1:,} bytes is more than", err, "a byte over the limit is not rounded to it")
        from suitelib.pane import _size
        self.assertEqual([_size(n) for n in (4 * 2**20, 4 * 2**20 + 1, 320 * 2**10, 5 * 2**20 + 2**19)],
                         ["4.0 MiB", "4,194,305 bytes", "320 KiB", "5,632 KiB"])

    def test_a_failing_pane_is_masked_once_for_every_recording(self):
        """Found 7: which_run masked a failing pane once per recording; now once, whatever their number."""
        text = pane(T4 + "answer 42\nthe marker line 7 ms\n")
        for k in range(4):  # more recordings of exit 0, each a candidate for which_run
            self.record(self.run_of("demo@twice"), stdout=LESSON_OUT + f"other {k}\n")
        masked = []
        real = transcripts._mask_plain

        def counting(line, device):
            masked.append(line) if "marker" in line else None
            return real(line, device)
        with patched(transcripts, "_mask_plain", counting):
            status, out, _ = self.judge("--pane", self.write("a.txt", text))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertEqual(len(masked), 1, masked)

    def test_heading_lines_may_end_in_blanks(self):
        """Found 8: 'Program returned: 0 ', 'Program stdout ', 'Program stderr\\t' were not read as headings."""
        text = ("Program returned: 0 \t\nProgram stdout \n" + T4 + "answer 42\nProgram stderr\t\n")
        status, out, err = self.judge("--pane", self.write("a.txt", text))
        self.assertEqual(status, EXIT_OK, out + err)
        text = "Program returned: 1  \nProgram stdout\n" + T4 + "answer 42\nProgram stderr \nGATE: x\n"
        status, out, _ = self.judge("--pane", self.write("a.txt", text))
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("exit code 1, the recording says 0 (its stderr ends: 'GATE: x')", out)

    def test_a_utf16_pane_is_read_and_one_without_its_mark_is_named(self):
        """Found 9: Windows PowerShell 5.1 writes UTF-16 with a byte-order mark; it was 'not UTF-8 (byte 0)'."""
        text = pane(T4 + "answer 42\n").replace("\n", "\r\n")
        for codec in ("utf-16", "utf-16-be", "utf-32"):
            with self.subTest(codec=codec):
                data = text.encode(codec)
                if codec == "utf-16-be":
                    data = b"\xfe\xff" + data
                (self.root / "a.txt").write_bytes(data)
                status, out, err = self.judge("--pane", str(self.root / "a.txt"))
                self.assertEqual(status, EXIT_OK, out + err)
        (self.root / "a.txt").write_bytes(text.encode("utf-16-le"))
        status, _, err = self.judge("--pane", str(self.root / "a.txt"), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("it looks like UTF-16 text without its byte-order mark, not UTF-8; save it as UTF-8", err)
        (self.root / "a.txt").write_bytes(b"\xff\xfe\n")
        status, _, err = self.judge("--pane", str(self.root / "a.txt"), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("starts with the byte-order mark of UTF-16 but is not UTF-16 text", err)

    def test_a_compile_error_is_a_finding_and_a_pane_that_did_not_run_is_not_judged(self):
        """Found 10: the contract's 'no verdict without evidence' (exit 2) covers a pane that did not run; a
        compile error is a finding about the file (exit 1), as `exercise check` on a GPU says of a failed build."""
        compile_error = ("Could not execute the program\nBuild failed\nCompiler returned: 2\nCompiler stderr\n"
                         "<source>(12): error: identifier \"x\" is undefined\n")
        status, _, err = self.judge("--pane", self.write("a.txt", compile_error), writes=False)
        self.assertOneLineError(status, err, EXIT_FAIL)
        self.assertIn("this pane is a compile error: fix it first", err)
        unrun = "Could not execute the program\nCompiler returned: 0\n"
        status, _, err = self.judge("--pane", self.write("a.txt", unrun), writes=False)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("not judged: this pane holds no program output", err)

    def test_every_recording_as_a_program_prints_it_is_read_without_a_refusal(self):
        """The refusals above on the course's own recordings: none fires on what its programs print."""
        for rel, info in real_transcripts().items():
            with self.subTest(transcript=rel):
                text = pane(as_printed(info["stdout"]), as_printed(info["stderr"]), info["exit_code"])
                self.write("a.txt", text)
                result = read_pane(self.root / "a.txt")
                self.assertEqual((result["stdout"], result["stderr"]),
                                 (as_printed(info["stdout"]), as_printed(info["stderr"])))

    def test_no_lesson_prints_a_placeholder(self):
        """The premise of the copy refusal: no lesson or starter source holds a placeholder of the masking."""
        for path in sorted((REPO / "lessons").glob("*.cu")) + sorted((REPO / "starter").glob("*.cu")):
            with self.subTest(source=path.name):
                self.assertIsNone(MASK_TOKEN_RE.search(path.read_text(encoding="utf-8")))
