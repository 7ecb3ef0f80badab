"""Tests of suitelib.cli: the command line, `compare` (output obtained elsewhere), usage errors."""

import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, Scratch, no_gpu, patched
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE, UsageError, cli, commands, pane
from suitelib.transcripts import parse_transcript

H200_OUT = "GPU: NVIDIA H200 (compute capability 9.0)\n[device] 132 SMs, 60 MiB L2\nanswer 42\nk 1.5 ms  40 regs\n"
T4_OUT = "GPU: Tesla T4 (compute capability 7.5)\n[device] 40 SMs, 4 MiB L2\nanswer 42\nk 9.25 ms  64 regs\n"


class TestCommandLine(Scratch):

    def test_ce_link_carries_the_run_arguments(self):
        status, plain, _ = self.main("ce-link", "demo")
        status2, with_args, _ = self.main("ce-link", "demo", "--args", "--twice")
        self.assertEqual((status, status2), (EXIT_OK, EXIT_OK))
        self.assertTrue(with_args.startswith("https://godbolt.org/#z:"))
        self.assertNotEqual(plain, with_args)
    def test_help_never_cuts_a_description(self):
        """`suite.py --help`: each subcommand's line is its docstring's whole first paragraph, a sentence."""
        parser = cli.build_parser(self.root)
        sub = next(a for a in parser._actions if getattr(a, "choices", None))
        for action in sub._choices_actions:
            with self.subTest(command=action.dest):
                func = sub.choices[action.dest].get_default("func")
                first = " ".join(func.__doc__.strip().split("\n\n")[0].split())
                self.assertEqual(action.help, first)
                self.assertTrue(action.help.endswith((".", ")")), action.help)
        self.assertIn("from Compiler Explorer executor panes saved whole", sub.choices["exercise"].description)

    def test_help_ends_with_the_exit_codes(self):
        """`exercise check --help` printed the shared help without the exit codes."""
        for argv, said in ((("exercise", "check", "--help"), "77 no GPU (check without --pane)"),
                           (("compare", "--help"), "2 bad usage"), (("--help",), "77 no GPU (skipped)")):
            with self.subTest(argv=argv):
                status, out, _ = self.main(*argv)
                self.assertEqual(status, EXIT_OK)
                self.assertIn("exit codes: 0 ", out)
                self.assertIn(said, " ".join(out.split()))

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
        for name in ("markers", "idea-first", "common", "starters", "build-lines", "transcripts", "verify-record",
                     "docs", "mutants"):
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
        self.assertIn("--args '\"open': cannot split it into arguments", err)

    def test_each_value_error_keeps_its_own_message(self):
        """A ValueError from anywhere (a NaN in a CSV, say) is not reported as an argument-splitting error."""
        def broken(args):
            """Fails."""
            raise ValueError("could not convert string to float: 'nan'")
        with patched(cli, "cmd_list_runs", broken):
            status, _, err = self.main("list-runs")
        self.assertOneLineError(status, err, EXIT_FAIL)
        self.assertIn("could not convert string to float: 'nan'", err)
        self.assertNotIn("cannot split", err)

    def test_unterminated_quote_in_a_cli_row_says_so(self):
        status, _, err = self.main("cli-case", "--bin", "/bin/true", "--row", "2 | -m | -m 'open")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("cannot split the row's arguments", err)

    def test_empty_file_names_are_named_as_such(self):
        """`--pane ''` (and --stdout '', plot --out ''): an empty name, never 'is a directory' (Path('') is '.')."""
        for argv in (("exercise", "check", "demo", "--pane", ""), ("compare", "demo", "--stdout", ""),
                     ("plot", "roofline", "x.csv", "--out", "")):
            with self.subTest(argv=argv):
                status, _, err = self.main(*argv)
                self.assertEqual(status, EXIT_USAGE, err)
                self.assertIn("an empty file name", err)
                self.assertNotIn("is a directory", err)
                self.assertNotIn("Traceback", err)

    def test_args_never_swallows_an_option_of_the_tool(self):
        """`--args --stdout F`: the run's arguments were forgotten; the option is named, not taken as them."""
        (self.root / "out.txt").write_text("answer 42\n")
        for argv in (("compare", "demo", "--args", "--stdout", str(self.root / "out.txt")),
                     ("exercise", "check", "demo", "--pane", str(self.root / "out.txt"), "--args", "--gpu", "h200")):
            with self.subTest(argv=argv):
                status, _, err = self.main(*argv)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn("--args needs the run's arguments as one value", err)
                self.assertIn(f"this tool's option {argv[argv.index('--args') + 1]}", err)
        status, _, err = self.main("compare", "demo", "--stdout", str(self.root / "out.txt"), "--args", "--twice")
        self.assertEqual(status, EXIT_FAIL, err)  # a lesson argument that looks like an option still works
        self.assertIn("expected/h200/demo@twice.txt", err)

    def test_a_lone_double_dash_as_args_is_one_line(self):
        """`--args '--'` (and --args=--): a traceback from shlex in exercise check and compare, arguments
        silently dropped by ce-link (argparse takes a lone '--' for its end-of-options mark)."""
        (self.root / "out.txt").write_text("Program returned: 0\nProgram stdout\nanswer 42\n")
        out = str(self.root / "out.txt")
        for args in (("--args", "--"), ("--args=--",)):
            for argv in (("exercise", "check", "demo", "--pane", out) + args, ("ce-link", "demo") + args,
                         ("compare", "demo", "--stdout", out) + args,
                         ("exercise", "check", "demo") + args + ("--pane", out)):
                with self.subTest(argv=argv), no_gpu():
                    status, stdout, err = self.main(*argv)
                    self.assertOneLineError(status, err, EXIT_USAGE)
                    self.assertIn("--args '--': a lone '--' is no program's arguments", err)
                    self.assertEqual(stdout, "")

    def test_a_lone_double_dash_is_refused_whatever_argparse_hands_over(self):
        """Pythons before gh-109475 hand the command [] for `--args=--`, later ones the text '--':
        both are refused, so the rule holds on every Python the tool runs on."""
        import argparse
        for value in ([], "--", " -- "):
            with self.subTest(value=value):
                with self.assertRaises(UsageError) as caught:
                    cli.refuse_lost_args(argparse.Namespace(args=value, panes=[("p.txt", None)]))
                self.assertIn("a lone '--' is no program's arguments", str(caught.exception))
                with self.assertRaises(UsageError):
                    cli.refuse_lost_args(argparse.Namespace(args=None, panes=[("p.txt", value)]))
        cli.refuse_lost_args(argparse.Namespace(args="-m 1 -- x", panes=[("p.txt", "-n 2")]))

    def test_a_folder_given_as_a_file_reads_well(self):
        status, _, err = self.main("compare", "demo", "--stdout", str(self.root))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("is a directory, not an output file", err)

    def test_start_and_check_name_an_unknown_exercise_alike(self):
        (self.root / "out.txt").write_text("Program returned: 0\n")
        errors = []
        for argv in (("exercise", "start", "Demo"), ("exercise", "check", "Demo"),
                     ("exercise", "check", "Demo", "--pane", str(self.root / "out.txt"))):
            with no_gpu():
                status, _, err = self.main(*argv)
            self.assertOneLineError(status, err, EXIT_USAGE)
            errors.append(err)
        self.assertEqual(len(set(errors)), 1, errors)
        self.assertIn("no exercise called 'Demo': an exercise is a lesson with a starter (have: demo)", errors[0])

    def test_lesson_without_a_run_line_is_one_line_in_compare(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo\n// Run:   ./demo --twice\n", "")
        (self.root / "out.txt").write_text("answer 42\n")
        status, _, err = self.main("compare", "demo", "--stdout", str(self.root / "out.txt"))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("has no Run: line", err)


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


class TestBrokenPipe(unittest.TestCase):
    """`suite.py list-runs | head`: the reader goes away; the tool exits quietly (no traceback, no
    'cannot use' error from the OSError handler that used to catch it first)."""

    def test_closed_stdout_is_quiet(self):
        read_end, write_end = os.pipe()
        os.close(read_end)  # every write now fails with EPIPE
        try:
            # Block-buffered, as in a shell pipe: the write then fails at the last flush.
            quiet = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
            done = subprocess.run([sys.executable, str(SCRIPTS / "suite.py"), "--root", str(REPO), "list-runs"],
                                  stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60, env=quiet)
        finally:
            os.close(write_end)
        self.assertEqual(done.returncode, EXIT_OK, done.stderr)
        self.assertEqual(done.stderr, "")


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
        self.assertIn("read as Compiler Explorer's executor pane", err)
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
        self.assertIn("out.txt:3 (line 3 of stdout): the recording has 'answer 42', this output has 'answer 24'", err)

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

    def test_copy_from_program_stdout_on(self):
        """A copy that starts at 'Program stdout' (no 'Program returned' line) is partial: refused in one
        line, unless the user states the exit code (--exit-code N)."""
        status, _, err = self.compare("Program stdout\n" + T4_OUT)
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("a partial pane", err)
        self.assertIn("--exit-code N", err)
        status, _, err = self.compare("Program stdout\n" + T4_OUT, "--exit-code", "0")
        self.assertEqual(status, EXIT_OK, err)
        self.assertIn("with the exit code you gave (--exit-code 0)", err)
        status, _, err = self.compare("Program stdout\n" + T4_OUT + "Program stderr\nGATE: boom\n", "--exit-code", "0")
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("out.txt:7 (line 1 of stderr)", err)

    def test_absent_stream_headings_mean_empty_streams(self):
        """Compiler Explorer omits the heading of an empty stream: a pane without 'Program stderr' says
        the program wrote nothing to stderr, which is compared (never taken from the recording)."""
        status, _, err = self.compare("Program returned: 0\nProgram stdout\n" + T4_OUT)
        self.assertEqual(status, EXIT_OK, err)
        self.assertNotIn("stderr not compared", err)
        self.record(self.run_of("demo"), stdout=H200_OUT, stderr="note: recorded words\n")
        status, _, err = self.compare("Program returned: 0\nProgram stdout\n" + T4_OUT)
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("stderr differs from the recording", err)
        self.record(self.run_of("demo"), stdout="", stderr="")
        status, _, err = self.compare("Program returned: 0\n")
        self.assertEqual(status, EXIT_OK, err)

    def test_exit_code_against_a_panes_own(self):
        """--exit-code never silently overrides a pane's 'Program returned: N', nor --stderr its stderr."""
        pane = "Program returned: 1\nProgram stdout\n" + T4_OUT + "Program stderr\nGATE: boom\n"
        status, _, err = self.compare(pane, "--exit-code", "0")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("--exit-code 0: ", err)
        self.assertIn("says 'Program returned: 1'", err)
        status, _, err = self.compare(pane, "--exit-code", "1")  # agrees with the pane: judged as it says
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("exit code 1, the recording says 0", err)
        (self.root / "err.txt").write_text("")
        status, _, err = self.compare(pane, "--stderr", str(self.root / "err.txt"))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("drop --stderr", err)

    def test_trailing_spaces_are_not_compared(self):
        spaced = "".join(line + "  \t\n" for line in T4_OUT.splitlines())
        pane = "Program returned: 0\r\nProgram stdout\r\n" + spaced.replace("\n", "\r\n") + "\r\n\r\n"
        status, _, err = self.compare(pane)
        self.assertEqual(status, EXIT_OK, err)
        status, _, err = self.compare(pane.replace("answer 42", "answer 43"))
        self.assertEqual(status, EXIT_FAIL, err)

    def test_blank_lines_inside_the_output_are_compared(self):
        """Decision: a blank line the program printed is part of its output (transcripts keep them);
        only blank lines after the last line are tolerated (a copy adds or drops them)."""
        self.record(self.run_of("demo"), stdout="answer 42\n\ndone\n")
        self.assertEqual(self.compare("answer 42\n\ndone\n\n\n")[0], EXIT_OK)
        status, _, err = self.compare("answer 42\ndone\n")
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("out.txt:2 (line 2 of stdout): the recording has '', this output has 'done'", err)

    def test_line_numbers_are_lines_of_the_users_file(self):
        pane = ("Compiler stderr\nwarning: unused variable\nProgram returned: 0\nProgram stdout\n"
                + T4_OUT.replace("answer 42", "answer 24"))
        status, _, err = self.compare(pane)
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("out.txt:7 (line 3 of stdout): the recording has 'answer 42'", err)
        self.assertIn("this output " + str(self.root / "out.txt") + ":6 (line 2 of stdout) @@", err)

    def test_failed_compile_pane_is_one_line(self):
        executor = ("Could not execute the program\nBuild failed\nCompiler returned: 2\nCompiler stderr\n"
                    "<source>(12): error: identifier \"x\" is undefined\n1 error detected in the compilation.\n")
        output_pane = ("<source>(12): error: identifier \"x\" is undefined\nASM generation compiler returned: 2\n"
                       "<source>(12): error: identifier \"x\" is undefined\nExecution build compiler returned: 2\n")
        for text in (executor, output_pane):
            with self.subTest(pane=text.splitlines()[0]):
                status, _, err = self.compare(text)
                self.assertOneLineError(status, err, EXIT_FAIL)
                self.assertIn("this pane is a compile error: fix it first", err)
                self.assertIn('identifier "x" is undefined', err)

    def test_the_compilers_output_pane_is_refused(self):
        """The compiler's Output pane: 'Program returned: N', then the program's stderr and stdout
        unlabelled (static/panes/output.ts): refused in one line naming the executor pane."""
        for text in ("ASM generation compiler returned: 0\nExecution build compiler returned: 0\nProgram returned: 0\n"
                     + "GATE: boom\n" + T4_OUT,
                     "Program returned: 0\n" + T4_OUT,
                     "Compiler returned: 0\nProgram returned: 0\n"):
            with self.subTest(pane=text[:40]):
                status, _, err = self.compare(text)
                self.assertOneLineError(status, err, EXIT_USAGE)
                self.assertIn("is the compiler's Output pane", err)
                self.assertIn("copy Compiler Explorer's executor pane whole", err)

    def test_a_copy_of_the_recording_is_not_an_output(self):
        """A recording's placeholders in --stdout or --stderr: no program prints them (a copy passed)."""
        self.record(self.run_of("demo"), stdout=H200_OUT, stderr="took 1.5 ms\n")
        info = parse_transcript(self.run_of("demo").transcript_path("h200"))
        status, _, err = self.compare(info["stdout"], "--exit-code", "0")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("out.txt:4: '[MS]' is a placeholder of the recorded transcript", err)
        (self.root / "err.txt").write_text(info["stderr"])
        status, _, err = self.compare(T4_OUT, "--stderr", str(self.root / "err.txt"))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("err.txt:1: '[MS]' is a placeholder", err)

    def test_stderr_heading_above_stdout_is_read(self):
        status, _, err = self.compare("Program returned: 0\nProgram stderr\nGATE: boom\nProgram stdout\n" + T4_OUT)
        self.assertEqual(status, EXIT_FAIL, err)
        self.assertIn("out.txt:3 (line 1 of stderr)", err)

    def test_pane_without_execution_is_one_line(self):
        """A build that was not run is no evidence: not judged (exit 2), where a compile error is a finding."""
        status, _, err = self.compare("Could not execute the program\nCompiler returned: 0\n")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("not judged: this pane holds no program output", err)

    def test_at_most_20_differences_then_a_count(self):
        self.record(self.run_of("demo"), stdout="".join(f"row {i}\n" for i in range(100)))
        status, _, err = self.compare("".join(f"row {i + 1000}\n" for i in range(100)))
        self.assertEqual(status, EXIT_FAIL)
        shown = [line for line in err.splitlines() if line.startswith(("-row", "+row"))]
        self.assertEqual(len(shown), 20, err)
        self.assertIn("... 180 more differing lines not shown (200 in all)", err)
        self.assertLess(len(err), 4000)

    def test_a_huge_file_is_refused_without_reading_it(self):
        path = self.root / "big.txt"
        with open(path, "wb") as f:
            f.truncate(5 * 2**20)  # sparse: costs no disk
        real = pane.read_bytes

        def reader(where, *rest):
            self.assertNotEqual(Path(where), path, "read a refused file")
            return real(where, *rest)
        with patched(pane, "read_bytes", reader):
            status, _, err = self.main("compare", "demo", "--stdout", str(path))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("5.0 MiB is more than any lesson prints", err)

    def test_a_fifo_is_refused_without_hanging(self):
        fifo = self.root / "pipe"
        os.mkfifo(fifo)
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from suitelib import cli; "
                "sys.exit(cli.main(sys.argv[2:]))")
        done = subprocess.run([sys.executable, "-c", code, str(SCRIPTS), "--root", str(self.root), "compare", "demo",
                               "--stdout", str(fifo)], capture_output=True, text=True, timeout=60)
        self.assertOneLineError(done.returncode, done.stderr, EXIT_USAGE)
        self.assertIn("is not a regular file", done.stderr)

    def test_the_pane_reader_keeps_its_shape(self):
        """commands.pasted_result: a plain stdout read with the recording's stderr and exit code noted."""
        (self.root / "out.txt").write_text("answer 42\n")
        args = type("Args", (), {"stdout": self.root / "out.txt", "stderr": None, "exit_code": None})
        result, notes = commands.pasted_result(args, {"stderr": "", "exit_code": 0})
        self.assertEqual((result["stdout"], result["stderr"], result["exit_code"]), ("answer 42\n", "", 0))
        self.assertIn("exit code not compared (give --exit-code N)", notes)

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
