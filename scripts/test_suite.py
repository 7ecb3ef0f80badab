#!/usr/bin/env python3
"""Tests of scripts/suite.py. Every check gets a planted defect that must make it fail.

Each test builds a scratch copy of the miniature suite in fixtures/mini (plus the
real common/ blocks), plants one defect, runs suite.main() in-process and asserts
the exit status, the message (file and line) and that no file changed.
Run: python3 -m unittest -v test_suite   (CTest runs one test per class).
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import suite  # noqa: E402

REPO = HERE.parent
MINI = HERE / "fixtures" / "mini"


def snapshot(root):
    """sha256 of every file under root, to prove a command wrote nothing."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


class Scratch(unittest.TestCase):
    """A scratch suite: the miniature lesson and starter, real common blocks, transcripts."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-test-")
        self.root = Path(self.tmp.name)
        shutil.copytree(REPO / "common", self.root / "common")
        for sub in ("lessons", "starter"):
            (self.root / sub).mkdir()
            text = (MINI / sub / "demo.cu").read_text()
            for block in (REPO / "common").glob("*.cuh"):
                text = text.replace(f"@COMMON:{block.stem}@", block.read_text())
            (self.root / sub / "demo.cu").write_text(text)
        for run in suite.all_runs(self.root):
            self.record(run, stdout="answer 42\n" if not run.args else "answer 84\n")

    def tearDown(self):
        self.tmp.cleanup()

    def record(self, run, stdout, stderr="", exit_code=0):
        path = run.transcript_path(suite.DEFAULT_GPU)
        path.parent.mkdir(parents=True, exist_ok=True)
        result = {"stdout": stdout, "stderr": stderr, "exit_code": exit_code}
        path.write_text(suite.format_transcript(run, "NVIDIA H200", "13.0", result))

    def edit(self, rel, old, new, count=1):
        path = self.root / rel
        text = path.read_text()
        self.assertIn(old, text, f"fixture {rel} lacks {old!r}")
        path.write_text(text.replace(old, new, count))

    def line_of(self, rel, text):
        """'rel:N:' for the first line of rel that contains text."""
        for no, line in enumerate((self.root / rel).read_text().splitlines(), 1):
            if text in line:
                return f"{rel}:{no}:"
        self.fail(f"{rel} has no line containing {text!r}")

    def main(self, *argv, writes=False):
        """Run suite.main in-process; return (status, stdout, stderr).

        Unless writes=True, assert that the command changed no file."""
        before = snapshot(self.root)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = suite.main(["--root", str(self.root)] + list(argv))
        if not writes:
            self.assertEqual(before, snapshot(self.root), "the command changed files")
        return status, out.getvalue(), err.getvalue()

    def assertCheckFails(self, check, *needles):
        status, out, err = self.main("check", "--only", check)
        self.assertEqual(status, suite.EXIT_FAIL, f"check {check} should fail:\n{out}{err}")
        for needle in needles:
            self.assertIn(needle, err)
        return err

    def assertCheckPasses(self, check):
        status, out, err = self.main("check", "--only", check)
        self.assertEqual(status, suite.EXIT_OK, f"check {check} should pass:\n{out}{err}")


class TestMasking(unittest.TestCase):
    def test_volatile_values_become_placeholders(self):
        line = "f32 tiled     4.582e-06   0.0348     0.0099 ms   1.08x   3971.2 GFLOP/s  992.9 GB/s"
        self.assertEqual(suite.mask_line(line),
                         "f32 tiled     4.582e-06   0.0348 [MS] ms [SPEEDUP]x [GFLOPS] GFLOP/s [GBS] GB/s")

    def test_alignment_differences_vanish(self):
        self.assertEqual(suite.mask_line("t   0.0099 ms"), suite.mask_line("t  12.3456 ms"))

    def test_deterministic_numbers_stay(self):
        for line in ("gain 40.45 times", "tile 16x16 on 2048x2048x2048", "max err 1.907e-05",
                     "occupancy 75%", "refMax 6.6744"):
            self.assertEqual(suite.mask_line(line), line)

    def test_percent_of_measured_is_masked(self):
        self.assertEqual(suite.mask_line("reached 20.7% of measured peak"),
                         "reached [PCT]% of measured peak")

    def test_csv_columns_by_name(self):
        text = "kernel,size,ms,gflops,check\nnaive,128,0.0100,403.1,PASS\n# note 1.5 ms\n"
        self.assertEqual(suite.mask(text),
                         "kernel,size,ms,gflops,check\nnaive,128,[VAR],[VAR],PASS\n# note [MS] ms\n")

    def test_build_dependent_values_only_across_builds(self):
        line = "  1  128/8/1   40 regs   12 blocks/SM   75.0% occupancy  limited by registers"
        self.assertEqual(suite.mask_line(line), line)
        self.assertEqual(suite.mask_line(line, across_builds=True),
                         "  1  128/8/1   [REGS] regs   [BLOCKS] blocks/SM   [OCC]% occupancy  limited by [LIMIT]")
        csv = "device,point,regs,occupancy,ms\nH200,1,40,0.75,0.1\n"
        self.assertEqual(suite.mask(csv), "device,point,regs,occupancy,ms\nH200,1,40,0.75,[VAR]\n")
        self.assertEqual(suite.mask(csv, True), "device,point,regs,occupancy,ms\nH200,1,[VAR],[VAR],[VAR]\n")

    def test_csv_without_volatile_columns_is_exact(self):
        text = "format,max,rms\nint8,3.937e-3,2.273e-3\n"
        self.assertEqual(suite.mask(text), text)


class TestMarkers(Scratch):
    def test_clean_fixture_passes(self):
        self.assertCheckPasses("markers")

    def test_unterminated_snippet(self):
        self.edit("lessons/demo.cu", "// end snippet\n", "")
        self.assertCheckFails("markers", self.line_of("lessons/demo.cu", "// snippet: answer"), "never closed")

    def test_duplicated_snippet(self):
        self.edit("lessons/demo.cu", "// snippet: answer\nint answer() { return 42; }\n// end snippet\n",
                  "// snippet: answer\nint answer() { return 42; }\n// end snippet\n"
                  "// snippet: answer\nint other() { return 1; }\n// end snippet\n")
        second = int(self.line_of("lessons/demo.cu", "int other()").split(":")[1]) - 1
        self.assertCheckFails("markers", f"lessons/demo.cu:{second}:", "duplicate snippet 'answer'")

    def test_stray_end_marker(self):
        self.edit("lessons/demo.cu", "int main(", "// end snippet\nint main(")
        self.assertCheckFails("markers", "'end snippet' without an open snippet marker")

    def test_nested_same_kind(self):
        self.edit("lessons/demo.cu", "int answer()", "// snippet: inner\nint answer()")
        self.assertCheckFails("markers", self.line_of("lessons/demo.cu", "// snippet: inner"), "do not nest")

    def test_misspelt_marker_is_malformed(self):
        self.edit("lessons/demo.cu", "// end snippet", "// end snipet")
        self.assertCheckFails("markers", "malformed")

    def test_missing_build_line(self):
        self.edit("lessons/demo.cu", "// Build:", "// Bulid:")
        self.assertCheckFails("markers", "lessons/demo.cu:1:", "exactly one '// Build:' line")

    def test_run_line_for_another_program(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo --twice", "// Run:   ./other --twice")
        self.assertCheckFails("markers", "lessons/demo.cu:5:", "must start with ./demo")

    def test_sanitize_line_options_and_args(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo\n", "// Run:   ./demo\n// Sanitize: --launch-count 3 ./demo --twice\n")
        prog = suite.resolve_source(self.root, "demo")
        self.assertEqual(prog.sanitize_spec(), (["--launch-count", "3"], ["--twice"]))

    def test_sanitize_line_must_name_the_program(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo\n", "// Run:   ./demo\n// Sanitize: --launch-count 3\n")
        self.assertCheckFails("markers", "Sanitize: line must name ./demo")

    def test_solution_region_in_starter(self):
        self.edit("starter/demo.cu", "// exercise: twice", "// solution: twice")
        self.edit("starter/demo.cu", "// end exercise", "// end solution")
        self.assertCheckFails("markers", self.line_of("starter/demo.cu", "// solution: twice"),
                              "may not hold 'solution' regions")


class TestCommonCopies(Scratch):
    def test_clean_fixture_passes(self):
        self.assertCheckPasses("common")

    def test_one_byte_changed_in_a_copy(self):
        self.edit("lessons/demo.cu", "std::exit(EXIT_FAILURE);", "std::exit(EXIT_FAILURX);")
        err = self.assertCheckFails("common", "lessons/demo.cu:", "differs from common/cuda_check.cuh")
        line = int(err.split("lessons/demo.cu:")[1].split(":")[0])
        text = (self.root / "lessons/demo.cu").read_text().splitlines()
        self.assertIn("EXIT_FAILURX", text[line - 1], "the reported line must be the changed one")

    def test_unknown_block(self):
        self.edit("lessons/demo.cu", "// snippet: answer", "// common: nosuch\n// end common: nosuch\n// snippet: answer")
        self.assertCheckFails("common", "unknown common block 'nosuch'")

    def test_error_macro_missing(self):
        self.edit("lessons/demo.cu", "// common: cuda_check", "// not common")
        self.edit("lessons/demo.cu", "// end common: cuda_check", "// not common end")
        self.assertCheckFails("common", "lessons/demo.cu:1:", "does not carry the common block 'cuda_check'")


class TestStarterDrift(Scratch):
    def test_clean_fixture_passes(self):
        self.assertCheckPasses("starters")

    def test_non_exercise_line_changed(self):
        self.edit("starter/demo.cu", "int answer() { return 42; }", "int answer() { return 41; }")
        where = self.line_of("starter/demo.cu", "return 41;")
        self.assertCheckFails("starters", where, "drifted from lessons/demo.cu:" + where.split(":")[1])

    def test_exercise_region_may_differ(self):
        self.edit("starter/demo.cu", "return v; }  // TODO (exercise)", "return 0; }  // anything")
        self.assertCheckPasses("starters")

    def test_region_names_must_match(self):
        self.edit("starter/demo.cu", "// exercise: twice", "// exercise: thrice")
        self.assertCheckFails("starters", "do not match the lesson's solution regions")

    def test_lesson_without_starter(self):
        (self.root / "starter/demo.cu").unlink()
        self.assertCheckFails("starters", "lessons/demo.cu:1: lesson has no starter")


class TestBuildLines(Scratch):
    @unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
    def test_clean_fixture_compiles(self):
        self.assertCheckPasses("build-lines")

    @unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
    def test_build_line_that_needs_another_file(self):
        self.edit("lessons/demo.cu", "#include <cstring>", "#include <cstring>\n#include \"helpers.h\"")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "fails alone in an empty folder")

    def test_build_line_must_be_nvcc(self):
        self.edit("lessons/demo.cu", "// Build: nvcc", "// Build: make")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "must start with nvcc")

    def test_build_line_must_name_its_file(self):
        self.edit("lessons/demo.cu", "-o demo demo.cu", "-o demo other.cu")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "must compile demo.cu")


class TestTranscripts(Scratch):
    def test_clean_fixture_passes(self):
        self.assertCheckPasses("transcripts")

    def test_lesson_edited_after_recording(self):
        self.edit("lessons/demo.cu", "return 42;", "return 43;")
        self.assertCheckFails("transcripts", "expected/h200/demo.txt:4:", "stale",
                              "expected/h200/demo@twice.txt:4:")

    def test_missing_transcript(self):
        (self.root / "expected/h200/starter/demo.txt").unlink()
        self.assertCheckFails("transcripts", "starter/demo.cu:1:", "has no transcript")

    def test_orphan_transcript(self):
        shutil.copy(self.root / "expected/h200/demo.txt", self.root / "expected/h200/gone.txt")
        self.assertCheckFails("transcripts", "expected/h200/gone.txt:1: orphan")

    def test_malformed_transcript(self):
        path = self.root / "expected/h200/demo.txt"
        path.write_text(path.read_text().replace("--- stdout: 1 lines", "--- stdout: 9 lines"))
        self.assertCheckFails("transcripts", "malformed transcript")

    def test_run_line_changed_under_transcript(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo --twice", "// Run:   ./demo --thrice")
        err = self.assertCheckFails("transcripts", "orphan")
        self.assertIn("demo@thrice", err)


class FakeBinary(Scratch):
    """Programs replaced by shell scripts, so run/compare logic is tested without a GPU."""

    def fake(self, target, script):
        bin_dir = self.root / "fakebin"
        bin_dir.mkdir(exist_ok=True)
        path = bin_dir / target
        path.write_text("#!/bin/sh\n" + script + "\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        return bin_dir


class TestRunAgainstTranscript(FakeBinary):
    def test_matching_run(self):
        bin_dir = self.fake("demo", 'echo "answer 42"')
        status, out, err = self.main("run", "demo", "--bin-dir", str(bin_dir), "--gpu", "h200")
        self.assertEqual(status, suite.EXIT_OK, err)
        self.assertIn("ok: demo matches", err)

    def test_changed_output_shows_a_diff(self):
        bin_dir = self.fake("demo", 'echo "answer 41"')
        status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir), "--gpu", "h200")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("-answer 42", err)
        self.assertIn("+answer 41", err)

    def test_changed_exit_code(self):
        bin_dir = self.fake("demo", 'echo "answer 42"; exit 1')
        status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir), "--gpu", "h200")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("exit code 1, transcript says 0", err)

    def test_timings_do_not_count(self):
        run = suite.find_run(self.root, "demo")
        self.record(run, stdout="k 0.0099 ms 1.08x\n")
        bin_dir = self.fake("demo", 'echo "k 12.5 ms 0.97x"')
        status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir), "--gpu", "h200")
        self.assertEqual(status, suite.EXIT_OK, err)

    def test_no_gpu_is_skipped(self):
        bin_dir = self.fake("demo", 'echo "no usable CUDA device: x" >&2; exit 77')
        status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir), "--gpu", "h200")
        self.assertEqual(status, suite.EXIT_SKIP)

    def test_stale_transcript_fails_even_when_output_matches(self):
        self.edit("lessons/demo.cu", "return 42;", "return 42 ;")
        bin_dir = self.fake("demo", 'echo "answer 42"')
        status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir), "--gpu", "h200")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("stale", err)

    def test_unknown_run_is_usage_error(self):
        status, _, err = self.main("run", "nosuch", "--bin-dir", str(self.root))
        self.assertEqual(status, suite.EXIT_USAGE)
        self.assertIn("unknown run 'nosuch'", err)


class TestCliCase(FakeBinary):
    def run_row(self, script, row):
        bin_dir = self.fake("demo", script)
        return self.main("cli-case", "--bin", str(bin_dir / "demo"), "--row", row)

    def test_bad_option_with_one_line_and_usage(self):
        status, out, err = self.run_row('echo "error: -m expects an integer, got \\"abc\\"" >&2; echo "usage: demo" >&2; exit 2',
                                        "2 | -m | -m abc")
        self.assertEqual(status, suite.EXIT_OK, err)

    def test_wrong_exit_code_fails(self):
        status, _, err = self.run_row('echo "error: -m bad" >&2; echo usage >&2; exit 1', "2 | -m | -m abc")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("exit 1, expected 2", err)

    def test_message_must_name_the_option(self):
        status, _, err = self.run_row('echo "error: bad value" >&2; echo usage >&2; exit 2', "2 | -m | -m abc")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("does not mention '-m'", err)

    def test_usage_must_follow(self):
        status, _, err = self.run_row('echo "error: -m bad" >&2; exit 2', "2 | -m | -m abc")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("followed by the usage", err)

    def test_good_line_without_gpu(self):
        status, _, err = self.run_row('echo "no usable CUDA device: none" >&2; exit 77', "ok | - | -m 4")
        self.assertEqual(status, suite.EXIT_OK, err)

    def test_help_prints_usage_on_stdout(self):
        status, _, err = self.run_row('echo "usage: demo [-m M]"', "0 |  | -h")
        self.assertEqual(status, suite.EXIT_OK, err)

    def test_help_on_stderr_fails(self):
        status, _, err = self.run_row('echo "usage: demo" >&2', "0 |  | -h")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("usage on stdout", err)

    def test_failing_row_needs_text(self):
        status, _, err = self.run_row("exit 2", "2 |  | -m abc")
        self.assertEqual(status, suite.EXIT_USAGE)

    def test_good_line_skipping_on_a_gpu_machine_fails(self):
        saved = suite.gpu_facts
        suite.gpu_facts = lambda: ("NVIDIA H200", "h200", "13.0")
        try:
            status, _, err = self.run_row('echo "no usable CUDA device: none" >&2; exit 77', "ok | - | -m 4")
        finally:
            suite.gpu_facts = saved
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("this machine has a GPU", err)

    def test_malformed_row(self):
        status, _, err = self.run_row("exit 0", "two | -m")
        self.assertEqual(status, suite.EXIT_USAGE)


class TestVerifyRecord(Scratch):
    def setUp(self):
        super().setUp()
        self.saved = suite.MUTANTS
        suite.MUTANTS = {"demo": [suite.Mutant("m1", "answer off by one", "return 42;", "return 43;", "GATE:")]}

    def tearDown(self):
        suite.MUTANTS = self.saved
        super().tearDown()

    def write_record(self, mutate=None):
        entries = []
        for prog in suite.programs(self.root):
            e = {"program": prog.rel, "source_sha256": prog.sha256(), "exit_code": 0,
                 "transcript_match": True, "sanitizer": {t: 0 for t in suite.SANITIZERS},
                 "repeat_runs": 10, "repeat_identical": True}
            if not prog.is_starter:
                e.update({"sm75_ptx_identical": True, "wall_s_1core": 1.0, "cpu_s_1core": 0.9,
                          "peak_rss_mib": 90.0, "output_bytes": 1000,
                          "mutants": [{"name": "m1", "killed": True}]})
            entries.append(e)
        record = {"gpu": "NVIDIA H200", "toolkit": "13.0", "recorded_at": "x", "total_wall_s": 1,
                  "programs": entries}
        if mutate:
            mutate(record)
        path = self.root / "expected/h200/verify.json"
        path.write_text(json.dumps(record))

    def test_clean_record_passes(self):
        self.write_record()
        self.assertCheckPasses("verify-record")

    def test_missing_record(self):
        self.assertCheckFails("verify-record", "verify.json:1: missing")

    def test_program_missing_from_record(self):
        self.write_record(lambda r: r["programs"].pop())
        self.assertCheckFails("verify-record", "starter/demo.cu: missing")

    def test_edited_lesson_is_stale(self):
        self.write_record()
        self.edit("lessons/demo.cu", "return 42;", "return 43;")
        self.assertCheckFails("verify-record", "lessons/demo.cu: stale")

    def test_sanitizer_finding(self):
        self.write_record(lambda r: r["programs"][0]["sanitizer"].update(racecheck=3))
        self.assertCheckFails("verify-record", "racecheck findings: 3")

    def test_budget_overrun(self):
        self.write_record(lambda r: r["programs"][0].update(wall_s_1core=5.5))
        self.assertCheckFails("verify-record", "wall_s_1core = 5.5 exceeds")

    def test_transcript_mismatch_recorded(self):
        self.write_record(lambda r: r["programs"][1].update(transcript_match=False))
        self.assertCheckFails("verify-record", "starter/demo.cu: transcript_match is not true")

    def test_ptx_difference_recorded(self):
        self.write_record(lambda r: r["programs"][0].update(sm75_ptx_identical=False))
        self.assertCheckFails("verify-record", "sm75_ptx_identical is not true")

    def test_mutants_missing_from_record(self):
        self.write_record(lambda r: r["programs"][0].pop("mutants"))
        self.assertCheckFails("verify-record", "lessons/demo.cu: the record's mutants [] are not the catalogue's ['m1']")

    def test_blind_spot_survivor_is_accepted(self):
        self.write_record(lambda r: r["programs"][0].update(
            mutants=[{"name": "m1", "killed": False, "blind_spot": "the lesson says so"}]))
        self.assertCheckPasses("verify-record")

    def test_surviving_mutant(self):
        self.write_record(lambda r: r["programs"][0].update(mutants=[{"name": "m1", "killed": False}]))
        self.assertCheckFails("verify-record", "mutant 'm1' survived")


class TestCommandLine(Scratch):
    def test_no_subcommand_is_usage(self):
        status, _, err = self.main()
        self.assertEqual(status, suite.EXIT_USAGE)

    def test_unknown_check_is_usage(self):
        status, _, err = self.main("check", "--only", "nosuch")
        self.assertEqual(status, suite.EXIT_USAGE)
        self.assertIn("unknown check 'nosuch'", err)

    def test_empty_tree_is_usage(self):
        shutil.rmtree(self.root / "lessons")
        shutil.rmtree(self.root / "starter")
        status, _, err = self.main("check", "--only", "markers")
        self.assertEqual(status, suite.EXIT_USAGE)

    def test_bless_needs_a_selection(self):
        status, _, err = self.main("bless")
        self.assertEqual(status, suite.EXIT_USAGE)

    @unittest.skipIf(shutil.which("nvidia-smi"), "this machine has a GPU")
    def test_bless_without_gpu_records_nothing(self):
        status, _, err = self.main("bless", "--all")
        self.assertEqual(status, suite.EXIT_SKIP)
        self.assertIn("transcripts come only from real runs", err)

    def test_list_runs(self):
        status, out, _ = self.main("list-runs")
        self.assertEqual(out.split(), ["demo", "demo@twice", "starter/demo"])


DOC_PAGE = """# Lessons
<!-- commands: demo -->
<!-- end commands -->
<!-- snippet: demo answer -->
<!-- end snippet -->
<!-- output: demo "answer" 1 -->
<!-- end output -->
"""
TOP_README = """# Suite
<!-- lesson-table: -->
<!-- end lesson-table -->
"""


class TestSnippetAndLinks(Scratch):
    def test_snippet_is_dedented_without_markers(self):
        self.edit("lessons/demo.cu", "int answer() { return 42; }",
                  "  // solution: inner\n  int answer() { return 42; }\n  // end solution")
        status, out, _ = self.main("snippet", "lessons/demo.cu", "answer")
        self.assertEqual(status, suite.EXIT_OK)
        self.assertEqual(out, "int answer() { return 42; }\n")

    def test_unknown_snippet_is_usage_error(self):
        status, _, err = self.main("snippet", "demo", "nosuch")
        self.assertEqual(status, suite.EXIT_USAGE)
        self.assertIn("has no snippet 'nosuch' (snippets: answer)", err)

    def test_ce_link_round_trips_the_source(self):
        status, out, _ = self.main("ce-link", "demo")
        self.assertEqual(status, suite.EXIT_OK)
        state = suite.ce_decode(out.strip())
        session = state["sessions"][0]
        self.assertEqual(session["language"], "cuda")
        self.assertEqual(session["source"], (self.root / "lessons/demo.cu").read_text())
        self.assertEqual(session["compilers"], [{"id": "nvcc130", "options": "-std=c++17 -O3 -arch=sm_75"}])
        executor = session["executors"][0]
        self.assertEqual(executor["compiler"], {"id": "nvcc130", "options": "-std=c++17 -O3 -arch=sm_75", "libs": []})
        self.assertEqual((executor["arguments"], executor["stdin"]), ("", ""))
        self.assertNotIn("/", out.strip()[len(suite.CE_URL):], "the payload must be URL-safe")

    def test_ce_link_of_the_real_testing_lesson(self):
        link = suite.ce_link((REPO / "lessons/testing.cu").read_text())
        self.assertEqual(suite.ce_decode(link)["sessions"][0]["source"], (REPO / "lessons/testing.cu").read_text())
        self.assertLess(len(link), 16000, "the compressed link should stay usable")


class TestDocs(Scratch):
    def setUp(self):
        super().setUp()
        (self.root / "lessons/README.md").write_text(DOC_PAGE)
        (self.root / "README.md").write_text(TOP_README)
        status, _, err = self.main("sync", writes=True)
        self.assertEqual(status, suite.EXIT_OK, err)

    def test_synced_docs_pass(self):
        self.assertCheckPasses("docs")
        page = (self.root / "lessons/README.md").read_text()
        self.assertIn("int answer() { return 42; }", page)
        self.assertIn("./demo --twice", page)
        self.assertIn("answer 42", page)
        self.assertIn("[ce-demo]: https://godbolt.org/clientstate/", (self.root / "README.md").read_text())

    def test_stale_snippet_quote(self):
        self.edit("lessons/demo.cu", "int answer() { return 42; }", "int answer() { return 7 * 6; }")
        self.edit("starter/demo.cu", "int answer() { return 42; }", "int answer() { return 7 * 6; }")
        err = self.assertCheckFails("docs", "lessons/README.md:", "stale generated text under <!-- snippet: demo answer -->")
        self.assertIn("+int answer() { return 7 * 6; }", err)

    def test_stale_output_excerpt(self):
        run = suite.find_run(self.root, "demo")
        self.record(run, stdout="answer 43\n")
        self.assertCheckFails("docs", "lessons/README.md:", "<!-- output: demo", "+answer 43")

    def test_lesson_table_link_follows_the_file(self):
        self.edit("lessons/demo.cu", "// A miniature lesson", "// A miniature  lesson")
        self.assertCheckFails("docs", "README.md:", "lesson-table")

    def test_unknown_snippet_name(self):
        page = self.root / "lessons/README.md"
        page.write_text(page.read_text().replace("snippet: demo answer", "snippet: demo nosuch"))
        self.assertCheckFails("docs", self.line_of("lessons/README.md", "snippet: demo nosuch") + " unknown snippet")

    def test_duplicate_marker(self):
        page = self.root / "lessons/README.md"
        page.write_text(page.read_text() + "<!-- snippet: demo answer -->\n<!-- end snippet -->\n")
        self.assertCheckFails("docs", "duplicate marker 'snippet: demo answer'")

    def test_unterminated_marker(self):
        page = self.root / "lessons/README.md"
        page.write_text(page.read_text() + "<!-- snippet: demo answer2 -->\ntext\n")
        self.assertCheckFails("docs", "is never closed")

    def test_sync_fixes_what_check_reported(self):
        self.edit("lessons/demo.cu", "int answer() { return 42; }", "int answer() { return 6 * 7; }")
        self.main("sync", writes=True)
        self.assertCheckPasses("docs")


class TestExercise(Scratch):
    def test_start_copies_the_starter(self):
        status, out, err = self.main("exercise", "start", "demo", writes=True)
        self.assertEqual(status, suite.EXIT_OK, err)
        self.assertEqual((self.root / "exercises/demo.cu").read_text(), (self.root / "starter/demo.cu").read_text())

    def test_start_never_overwrites_without_force(self):
        (self.root / "exercises").mkdir()
        (self.root / "exercises/demo.cu").write_text("my work\n")
        status, _, err = self.main("exercise", "start", "demo")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("not overwriting your work", err)
        self.assertEqual((self.root / "exercises/demo.cu").read_text(), "my work\n")
        status, _, _ = self.main("exercise", "start", "demo", "--force", writes=True)
        self.assertEqual(status, suite.EXIT_OK)
        self.assertNotEqual((self.root / "exercises/demo.cu").read_text(), "my work\n")

    def test_unknown_exercise(self):
        status, _, err = self.main("exercise", "start", "nosuch")
        self.assertEqual(status, suite.EXIT_USAGE)

    def test_check_before_start(self):
        status, _, err = self.main("exercise", "check", "demo")
        self.assertEqual(status, suite.EXIT_USAGE)
        self.assertIn("exercise start demo", err)


class TestExerciseReport(unittest.TestCase):
    """The comparison behind 'exercise check', on the real recorded transcripts."""

    def setUp(self):
        self.lesson = suite.parse_transcript(REPO / "expected/h200/testing.txt")
        self.starter = suite.parse_transcript(REPO / "expected/h200/starter/testing.txt")

    def as_result(self, info):
        return {"stdout": info["stdout"], "stderr": info["stderr"], "exit_code": int(info["exit_code"])}

    def test_starter_output_is_explained(self):
        matched, report = suite.explain_exercise(self.lesson, self.as_result(self.starter))
        self.assertFalse(matched)
        self.assertIn("exit code: yours is 1, the lesson's is 0", report)
        self.assertIn("section missing from your output: 'Phase 2:", report)
        self.assertIn("section the lesson does not print: 'The supplied suite: 4 of 4 passed.'", report)
        self.assertIn("+Left to write", report)

    def test_lesson_output_is_congratulated(self):
        matched, report = suite.explain_exercise(self.lesson, self.as_result(self.lesson))
        self.assertTrue(matched)
        self.assertIn("Congratulations", report)

    def test_one_changed_number_is_located(self):
        changed = self.as_result(self.lesson)
        changed["stdout"] = changed["stdout"].replace("got 23995.500000", "got 23995.000000", 1)
        matched, report = suite.explain_exercise(self.lesson, changed)
        self.assertFalse(matched)
        self.assertIn("section differs: 'Phase 2:", report)


class TestMutants(Scratch):
    def setUp(self):
        super().setUp()
        self.saved = suite.MUTANTS
        suite.MUTANTS = {"demo": [
            suite.Mutant("m1", "answer off by one", "return 42;", "return 43;", "GATE:"),
            suite.Mutant("m2", "twice is identity", "return 2 * v;", "return v;", "GATE:"),
            suite.Mutant("m3", "wrong flag", "\"--twice\") == 0", "\"--twice\") != 0", "GATE:"),
            suite.Mutant("m4", "prints nothing", "std::printf(\"answer %d\\n\"", "std::printf(\"\"", "GATE:"),
        ]}

    def tearDown(self):
        suite.MUTANTS = self.saved
        super().tearDown()

    def test_catalogue_applies(self):
        self.assertCheckPasses("mutants")

    def test_anchor_gone(self):
        self.edit("lessons/demo.cu", "return 2 * v;", "return v + v;")
        self.assertCheckFails("mutants", "lessons/demo.cu:1: mutant 'm2' no longer applies", "occurs 0 times")

    def test_anchor_ambiguous(self):
        self.edit("lessons/demo.cu", "int main(", "int other() { return 42; }\nint main(")
        self.assertCheckFails("mutants", "mutant 'm1' no longer applies", "occurs 2 times")

    def test_too_few_killable_mutants(self):
        suite.MUTANTS["demo"][0].blind_spot = "the lesson says so"
        self.assertCheckFails("mutants", "only 3 mutants expected to be killed (need 4)",
                              "blind spot 'm1' cites a sentence the lesson no longer contains")

    def test_lesson_without_catalogue(self):
        suite.MUTANTS = {}
        self.assertCheckFails("mutants", "lessons/demo.cu:1: lesson has no mutants")

    def test_apply_refuses_an_ambiguous_anchor(self):
        with self.assertRaises(suite.SuiteError):
            suite.Mutant("x", "x", "return", "return").apply("return 1; return 2;")

    @unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
    def test_mutant_that_does_not_compile_is_not_killed(self):
        broken = suite.Mutant("m5", "syntax error", "return 42;", "return 42", "GATE:")
        entry = suite.run_mutant(self.root, suite.resolve_source(self.root, "demo"), broken)
        self.assertFalse(entry["killed"])
        self.assertIn("does not compile", entry["outcome"])

    @unittest.skipIf(shutil.which("nvidia-smi"), "this machine has a GPU")
    def test_mutate_without_gpu_is_skipped(self):
        status, _, err = self.main("mutate")
        self.assertEqual(status, suite.EXIT_SKIP)


ROOFLINE_CSV = """# GPU: Test GPU (compute capability 9.0), 132 SMs, 2048 threads/SM
# ceilings, measured on this device by this program (median of 7 launches each): bandwidth 4000.0 GB/s (a copy kernel); FP32 peak 50000.0 GFLOP/s (an FMA kernel)
kernel,m,n,k,check,cpu_elements,verdict,max_abs_err,xcheck_diff,err_frac,ms,min_ms,max_ms,gflops,pct_of_roof,model_load_gb,compulsory_gb,ai_model,ai_compulsory
naive,128,128,128,cpu,16384,PASS,1e-6,,0.1,0.01,0.01,0.01,400.0,1.0,0.01,0.0002,0.25,21.33
tiled,128,128,128,cpu,16384,PASS,1e-6,,0.1,0.01,0.01,0.01,500.0,1.0,0.01,0.0002,4.0,21.33
naive,2048,2048,2048,cpu-rows,16384,PASS,1e-6,,0.1,3.0,3.0,3.0,5400.0,1.0,0.01,0.05,0.25,341.33
tiled,2048,2048,2048,cpu-rows,16384,PASS,1e-6,,0.1,2.0,2.0,2.0,8100.0,1.0,0.01,0.05,4.0,341.33
"""
SWEEP_CSV = """device,m,n,k,point,threads,tk,co,status,gflops,rank,tie
Test GPU,1024,1024,1024,1,128,8,1,PASS,1664.0,3,0
Test GPU,1024,1024,1024,2,256,32,4,PASS,7940.0,1,1
Test GPU,1024,1024,1024,3,256,16,4,PASS,7920.0,1,1
Test GPU,1024,1024,1024,4,512,8,2,FAIL,,,
"""


def has_matplotlib():
    import subprocess
    for python in (sys.executable, suite.FALLBACK_PYTHON):
        if os.path.exists(python) and subprocess.run([python, "-c", "import matplotlib"],
                                                     capture_output=True).returncode == 0:
            return True
    return False


@unittest.skipUnless(has_matplotlib(), "matplotlib is not installed (scripts/install-deps.sh)")
class TestPlot(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-plot-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def plot(self, kind, csv_text=None, csv_path=None):
        path = csv_path or self.dir / "in.csv"
        if csv_text is not None:
            path.write_text(csv_text)
        out = self.dir / (kind + ".png")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()) as so, contextlib.redirect_stderr(err):
            status = suite.main(["plot", kind, str(path), "--out", str(out)])
        return status, out, so.getvalue() + err.getvalue()

    def assertPng(self, path, min_bytes=10000):
        data = path.read_bytes()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", "not a PNG file")
        self.assertGreater(len(data), min_bytes, "implausibly small PNG")
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        self.assertGreater(width, 400)
        self.assertGreater(height, 200)

    def test_roofline_png(self):
        status, out, text = self.plot("roofline", ROOFLINE_CSV)
        self.assertEqual(status, suite.EXIT_OK, text)
        self.assertIn("all under both roofs", text)
        self.assertPng(out)

    def test_point_above_a_roof_fails(self):
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace(",8100.0,", ",90000.0,"))
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("ABOVE a roof", text)

    def test_csv_without_ceilings_is_refused(self):
        status, _, text = self.plot("roofline", "\n".join(ROOFLINE_CSV.splitlines()[2:]) + "\n")
        self.assertEqual(status, suite.EXIT_FAIL)
        self.assertIn("no measured bandwidth", text)

    def test_sweep_bar_chart(self):
        status, out, text = self.plot("sweep", SWEEP_CSV)
        self.assertEqual(status, suite.EXIT_OK, text)
        self.assertIn("3 ranked points", text)
        self.assertPng(out, 5000)

    def test_recorded_h200_csvs_render(self):
        data = REPO / "expected/h200/data"
        for kind, name in (("roofline", "report_data.csv"), ("sweep", "sweep.csv")):
            self.assertTrue((data / name).exists(), f"no recorded {name}: run bless --all on the GPU")
            status, out, text = self.plot(kind, csv_path=data / name)
            self.assertEqual(status, suite.EXIT_OK, text)
            self.assertPng(out)


def list_classes():
    return sorted(name for name, obj in globals().items()
                  if isinstance(obj, type) and issubclass(obj, unittest.TestCase)
                  and name.startswith("Test"))


if __name__ == "__main__":
    if sys.argv[1:] == ["--list-classes"]:
        print("\n".join(list_classes()))
        sys.exit(0)
    unittest.main()
