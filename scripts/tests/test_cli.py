"""Tests of suitelib.cli: the command line, `compare` (output obtained elsewhere), usage errors."""

import shutil
import unittest

from helpers import Scratch, no_gpu
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE

H200_OUT = "GPU: NVIDIA H200 (compute capability 9.0)\n[device] 132 SMs, 60 MiB L2\nanswer 42\nk 1.5 ms  40 regs\n"
T4_OUT = "GPU: Tesla T4 (compute capability 7.5)\n[device] 40 SMs, 4 MiB L2\nanswer 42\nk 9.25 ms  64 regs\n"


class TestCommandLine(Scratch):
    def test_no_subcommand_is_usage(self):
        self.assertEqual(self.main()[0], EXIT_USAGE)

    def test_unknown_check_is_usage(self):
        status, _, err = self.main("check", "--only", "nosuch")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("unknown check 'nosuch'", err)

    def test_empty_tree_is_usage(self):
        shutil.rmtree(self.root / "lessons")
        shutil.rmtree(self.root / "starter")
        self.assertEqual(self.main("check", "--only", "markers")[0], EXIT_USAGE)

    def test_bless_needs_a_selection(self):
        self.assertEqual(self.main("bless")[0], EXIT_USAGE)

    def test_bless_without_gpu_records_nothing(self):
        with no_gpu():
            status, _, err = self.main("bless", "--all")
        self.assertEqual(status, EXIT_SKIP)
        self.assertIn("no NVIDIA GPU here", err)

    def test_gpu_commands_without_gpu_skip(self):
        for argv in (("verify",), ("mutate",), ("attempts",)):
            with no_gpu():
                self.assertEqual(self.main(*argv)[0], EXIT_SKIP, argv)

    def test_list_runs(self):
        self.assertEqual(self.main("list-runs")[1].split(), ["demo", "demo@twice", "starter/demo"])

    def test_list_checks(self):
        names = self.main("list-checks")[1].split()
        for name in ("markers", "common", "starters", "build-lines", "transcripts", "verify-record", "docs", "mutants"):
            self.assertIn(name, names)


class TestUserErrors(Scratch):
    """What a user can get wrong is one line and exit 2 (usage) or 1, never a traceback."""

    def test_root_without_lessons_is_usage_and_writes_nothing(self):
        empty = self.root / "empty"
        empty.mkdir()
        status, _, err = self.main("--root", str(empty), "sync")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertEqual(list(empty.iterdir()), [])

    def test_unterminated_quote_in_args_is_usage(self):
        (self.root / "out.txt").write_text("x\n")
        status, _, err = self.main("compare", "demo", "--stdout", str(self.root / "out.txt"), "--args", '"open')
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_exercises_that_is_a_file_is_one_line(self):
        (self.root / "exercises").write_text("not a folder")
        status, _, err = self.main("exercise", "start", "demo")
        self.assertOneLineError(status, err, EXIT_FAIL)

    def test_gpu_commands_check_their_arguments_before_the_gpu(self):
        for argv in (("bless", "nosuch"), ("mutate", "nosuch"), ("attempts", "nosuch"),
                     ("verify", "--only", "nosuch"), ("verify", "--deadline", "-5")):
            with no_gpu():
                status, _, err = self.main(*argv)
            self.assertOneLineError(status, err, EXIT_USAGE)


class TestCompare(Scratch):
    def setUp(self):
        super().setUp()
        self.record(self.run_of("demo"), stdout=H200_OUT)

    def compare(self, stdout, *extra):
        path = self.root / "out.txt"
        path.write_text(stdout)
        return self.main("compare", "demo", "--stdout", str(path), *extra)

    def test_same_gpu_matches(self):
        status, _, err = self.compare(H200_OUT.replace("1.5 ms", "2.5 ms"), "--exit-code", "0")
        self.assertEqual(status, EXIT_OK, err)

    def test_another_gpu_matches_with_one_line_saying_so(self):
        status, _, err = self.compare(T4_OUT, "--exit-code", "0")
        self.assertEqual(status, EXIT_OK, err)
        self.assertIn("note: 3 device-fact lines not compared: recorded on NVIDIA H200, this is Tesla T4", err)
        self.assertIn("1 measurements masked", err)

    def test_compiler_explorer_pane_is_read_whole(self):
        pane = ("ASM generation compiler returned: 0\nExecution build compiler returned: 0\n"
                "Program returned: 0\nProgram stdout\n" + T4_OUT + "Program stderr\n")
        status, _, err = self.compare(pane)
        self.assertEqual(status, EXIT_OK, err)
        self.assertIn("Compiler Explorer's output pane", err)
        self.assertNotIn("exit code not compared", err)
        status, _, err = self.compare(pane.replace("Program returned: 0", "Program returned: 1"))
        self.assertEqual(status, EXIT_FAIL, err)

    def test_bom_crlf_and_trailing_blank_lines_are_tolerated(self):
        status, _, err = self.compare("\ufeff" + T4_OUT.replace("\n", "\r\n") + "\r\n\r\n", "--exit-code", "0")
        self.assertEqual(status, EXIT_OK, err)

    def test_exit_code_out_of_range_is_usage(self):
        status, _, err = self.compare(T4_OUT, "--exit-code", "999")
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_a_transcript_is_not_an_output(self):
        path = self.run_of("demo").transcript_path("h200")
        status, _, err = self.main("compare", "demo", "--stdout", str(path))
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_changed_result_names_the_line(self):
        status, _, err = self.compare(T4_OUT.replace("answer 42", "answer 24"))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("line 3 of stdout: the recording has 'answer 42', this output has 'answer 24'", err)

    def test_exit_code_and_stderr_when_given(self):
        (self.root / "err.txt").write_text("GATE: boom\n")
        status, _, err = self.compare(T4_OUT, "--exit-code", "1", "--stderr", str(self.root / "err.txt"))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit code 1, the recording says 0", err)
        self.assertIn("stderr differs", err)

    def test_run_chosen_by_args(self):
        status, _, err = self.compare("answer 84\n", "--args", "--twice")
        self.assertEqual(status, EXIT_OK, err)
        self.assertIn("expected/h200/demo@twice.txt", err)

    def test_run_id(self):
        path = self.root / "out.txt"
        path.write_text("answer 42\n")
        status, _, err = self.main("compare", "starter/demo", "--stdout", str(path))
        self.assertEqual(status, EXIT_OK, err)

    def test_bad_usage(self):
        path = self.root / "out.txt"
        path.write_text("x\n")
        (self.root / "bad.txt").write_bytes(b"\xff\xfe\n")
        for argv in (("compare", "nosuch", "--stdout", str(path)),
                     ("compare", "demo", "--stdout", str(path), "--args", "--thrice"),
                     ("compare", "demo", "--stdout", str(self.root / "missing.txt")),
                     ("compare", "demo", "--stdout", str(self.root)),
                     ("compare", "demo", "--stdout", str(self.root / "bad.txt")),
                     ("compare", "demo", "--stdout", str(path), "--gpu", "t4")):
            with self.subTest(argv=argv):
                status, _, err = self.main(*argv)
                self.assertOneLineError(status, err, EXIT_USAGE)


if __name__ == "__main__":
    unittest.main()
