"""Tests of suitelib.checks and suitelib.generate: each check fails on a planted defect, and
`sync` writes exactly what `check` compares (both directions)."""

import re
import shutil
import unittest

from helpers import Scratch, needs_nvcc, patched
from suitelib import EXIT_OK, checks, generate, plots


class TestCommonCopies(Scratch):
    def test_clean_fixture_passes(self):
        self.assertCheckPasses("common")

    def test_one_byte_changed_in_a_copy(self):
        self.edit("lessons/demo.cu", "std::exit(EXIT_FAILURE);", "std::exit(EXIT_FAILURX);")
        err = self.assertCheckFails("common", "lessons/demo.cu:", "differs from common/cuda_check.cuh")
        line = int(err.split("lessons/demo.cu:")[1].split(":")[0])
        self.assertIn("EXIT_FAILURX", (self.root / "lessons/demo.cu").read_text().splitlines()[line - 1])

    def test_unknown_block(self):
        self.edit("lessons/demo.cu", "// snippet: answer", "// common: nosuch\n// end common: nosuch\n// snippet: answer")
        self.assertCheckFails("common", "unknown common block 'nosuch'")

    def test_error_macro_missing(self):
        self.edit("lessons/demo.cu", "// common: cuda_check", "// not common")
        self.edit("lessons/demo.cu", "// end common: cuda_check", "// not common end")
        self.assertCheckFails("common", "lessons/demo.cu:1:", "does not carry the common block 'cuda_check'")


class TestIdeaFirst(Scratch):
    """A lesson opens with its idea: its first kernel or exercise region by line 120, and no toolkit
    declarations (a `common: *_decl` block) before it. The fixture's idea is its solution region."""

    FILLER = "// a line of the header\n" * 100  # pushes what follows past line 120
    KERNEL = "__global__ void idea(int* x) { *x = 42; }\n"
    DECL = "// common: tiny_decl\nint tiny();\n// end common: tiny_decl\n"

    def test_clean_fixture_passes(self):
        self.assertCheckPasses("idea-first")

    def test_first_region_past_line_120_fails(self):
        self.edit("lessons/demo.cu", "// snippet: answer", self.FILLER + "// snippet: answer")
        where = self.line_of("lessons/demo.cu", "// solution: twice")
        self.assertCheckFails("idea-first", where, "past line 120")

    def test_an_early_kernel_is_the_idea(self):
        self.edit("lessons/demo.cu", "// snippet: answer", self.KERNEL + self.FILLER + "// snippet: answer")
        self.assertCheckPasses("idea-first")

    def test_a_kernel_in_a_comment_or_a_common_block_is_not_the_idea(self):
        self.edit("lessons/demo.cu", "// end common: cuda_check", self.KERNEL + "// end common: cuda_check")
        self.edit("lessons/demo.cu", "// snippet: answer", "// " + self.KERNEL + self.FILLER + "// snippet: answer")
        self.assertCheckFails("idea-first", self.line_of("lessons/demo.cu", "// solution: twice"), "past line 120")

    def test_declarations_before_the_first_kernel_fail(self):
        self.edit("lessons/demo.cu", "// snippet: answer", self.DECL + "// snippet: answer")
        where = self.line_of("lessons/demo.cu", "// common: tiny_decl")
        self.assertCheckFails("idea-first", where, "common block 'tiny_decl'", "come before the first kernel")

    def test_declarations_after_the_first_kernel_pass(self):
        self.edit("lessons/demo.cu", "// end solution\n", "// end solution\n" + self.DECL)
        self.assertCheckPasses("idea-first")

    def test_a_lesson_without_kernel_or_region_fails(self):
        self.edit("lessons/demo.cu", "// solution: twice\n", "")
        self.edit("lessons/demo.cu", "// end solution\n", "")
        self.assertCheckFails("idea-first", "lessons/demo.cu:1:", "no __global__ kernel")

    def test_starters_are_not_judged(self):
        self.edit("starter/demo.cu", "// snippet: answer", self.FILLER + "// snippet: answer")
        self.assertCheckPasses("idea-first")


class TestAnchorCopies(Scratch):
    """The anchors (anchors/*.cu, no lessons) carry the common blocks too: check sees a drifted copy."""

    def test_drifted_copy_in_an_anchor(self):
        canon = (self.root / "common/cuda_check.cuh").read_text()
        (self.root / "anchors").mkdir()
        anchor = self.root / "anchors/lib_anchor.cu"
        anchor.write_text("// common: cuda_check\n" + canon + "// end common: cuda_check\nint main() {}\n")
        self.assertCheckPasses("common")
        anchor.write_text(anchor.read_text().replace("none (exit 77", "nothing (exit 77"))
        self.assertCheckFails("common", "anchors/lib_anchor.cu:")


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


class TestSync(Scratch):
    """check fails on what sync would change; sync then fixes it; the student's bodies are kept."""

    def sync(self):
        status, out, err = self.main("sync", writes=True)
        self.assertEqual(status, EXIT_OK, err)
        return out

    def test_common_block_change_is_one_edit_and_one_command(self):
        canon = self.root / "common/cuda_check.cuh"
        canon.write_text(canon.read_text().replace("none (exit 77", "no device (exit 77"))
        self.assertCheckFails("common", "lessons/demo.cu:", "starter/demo.cu:")
        out = self.sync()
        self.assertIn("updated lessons/demo.cu", out)
        self.assertIn("updated starter/demo.cu", out)
        self.assertCheckPasses("common")
        self.assertCheckPasses("starters")

    def test_lesson_edit_regenerates_the_starter_keeping_exercise_bodies(self):
        self.edit("lessons/demo.cu", "int answer() { return 42; }", "int answer() { return 6 * 7; }")
        self.edit("starter/demo.cu", "return v; }  // TODO (exercise)", "return v + v; }  // my work")
        self.assertCheckFails("starters", "drifted from lessons/demo.cu")
        self.sync()
        self.assertCheckPasses("starters")
        starter = (self.root / "starter/demo.cu").read_text()
        self.assertIn("return 6 * 7;", starter)
        self.assertIn("return v + v; }  // my work", starter)
        self.assertIn("// exercise: twice", starter)
        self.assertNotIn("solution", starter)

    def test_sync_on_a_clean_tree_writes_nothing_to_sources(self):
        before = {p: (self.root / p).read_text() for p in ("lessons/demo.cu", "starter/demo.cu")}
        self.sync()
        self.assertEqual(before, {p: (self.root / p).read_text() for p in before})

    def test_check_is_sync_in_dry_run(self):
        # Defects in a common copy, a starter and a page: check names exactly the files sync then writes.
        (self.root / "README.md").write_text("# Suite\n<!-- lesson-table: -->\n<!-- end lesson-table -->\n")
        (self.root / "lessons/demo.md").write_text("# Demo\n<!-- snippet: demo answer -->\n<!-- end snippet -->\n")
        self.sync()
        self.edit("lessons/demo.cu", "std::exit(EXIT_FAILURE);", "std::exit(EXIT_FAILURX);")
        self.edit("starter/demo.cu", "int answer() { return 42; }", "int answer() { return 41; }")
        page = self.root / "lessons/demo.md"
        page.write_text(page.read_text().replace("return 42;", "return 40;"))
        status, out, err = self.main("check", "--only", "common", "--only", "starters", "--only", "docs")
        self.assertEqual(status, 1, out + err)
        reported = set(re.findall(r"\] ([\w/-]+\.(?:cu|md)):\d+:", err))
        # Not the link file: the lesson's link is planned from the lesson as sync leaves it (unchanged).
        self.assertEqual(reported, {"lessons/demo.cu", "starter/demo.cu", "lessons/demo.md"})
        # The plan is what both use: its writable files are the reported ones, its texts are what sync writes.
        plan = {p.rel: p.new for p in generate.sync_plan(self.root) if p.writable}
        self.assertEqual(set(plan), reported)
        written = set(re.findall(r"updated (\S+)", self.sync()))
        self.assertEqual(written, reported)
        for rel in ("lessons/demo.cu", "starter/demo.cu"):
            self.assertEqual((self.root / rel).read_text(), plan[rel])
        for check in ("common", "starters", "docs"):
            self.assertCheckPasses(check)

    def test_every_difference_is_printed_once_in_one_check(self):
        self.edit("lessons/demo.cu", "std::exit(EXIT_FAILURE);", "std::exit(EXIT_FAILURX);")
        self.edit("starter/demo.cu", "int answer() { return 42; }", "int answer() { return 41; }")
        err = self.assertCheckFails("common", "lessons/demo.cu:", "expected '      std::exit(EXIT_FAILURE);")
        self.assertNotIn("starter/demo.cu", err)
        err = self.assertCheckFails("starters", "starter has 'int answer() { return 41; }'")
        self.assertNotIn("EXIT_FAILURX", err)

    def test_sync_refuses_mismatched_region_names(self):
        self.edit("starter/demo.cu", "// exercise: twice", "// exercise: thrice")
        status, _, err = self.main("sync", writes=True)
        self.assertOneLineError(status, err, 1)
        self.assertIn("do not match", err)


class TestBuildLines(Scratch):
    @needs_nvcc
    def test_clean_fixture_compiles(self):
        self.assertCheckPasses("build-lines")

    @needs_nvcc
    def test_build_line_that_needs_another_file(self):
        self.edit("lessons/demo.cu", "#include <cstring>", "#include <cstring>\n#include \"helpers.h\"")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "fails alone in an empty folder")

    @needs_nvcc
    def test_build_line_that_produces_no_binary(self):
        self.edit("lessons/demo.cu", "-o demo demo.cu", "--dryrun -o demo demo.cu")
        self.edit("starter/demo.cu", "-o demo demo.cu", "--dryrun -o demo demo.cu")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "produced no 'demo'")

    def test_build_line_must_be_nvcc(self):
        self.edit("lessons/demo.cu", "// Build: nvcc", "// Build: make")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "must start with nvcc")

    def test_build_line_must_name_its_file(self):
        self.edit("lessons/demo.cu", "-o demo demo.cu", "-o demo other.cu")
        self.assertCheckFails("build-lines", "lessons/demo.cu:3:", "must compile demo.cu")

    def test_findings_keep_the_programs_order_whatever_compiles_first(self):
        # The larger file starts first (the starter here); its finding still comes second.
        self.edit("lessons/demo.cu", "// Build: nvcc", "// Build: make")
        self.edit("starter/demo.cu", "// Build: nvcc", "// Build: cc")
        path = self.root / "starter" / "demo.cu"
        path.write_text(path.read_text(encoding="utf-8") + "// padding\n" * 400, encoding="utf-8")
        found = checks.check_build_lines(self.root)
        self.assertEqual(len(found), 2, found)
        self.assertIn("lessons/demo.cu:3:", found[0])
        self.assertIn("starter/demo.cu:3:", found[1])


class TestTranscripts(Scratch):
    def test_clean_fixture_passes(self):
        self.assertCheckPasses("transcripts")

    def test_lesson_edited_after_recording(self):
        self.edit("lessons/demo.cu", "return 42;", "return 43;")
        self.assertCheckFails("transcripts", "expected/h200/demo.txt:4:", "stale", "expected/h200/demo@twice.txt:4:")

    def test_comment_edit_in_common_then_sync_needs_no_recording(self):
        # One comment line in a common block reaches every copy through sync, and no recording goes stale.
        canon = self.root / "common/cuda_check.cuh"
        canon.write_text("// A comment that changes nothing the program does.\n" + canon.read_text())
        self.assertCheckFails("common", "lessons/demo.cu:")
        self.main("sync", writes=True)
        self.assertIn("A comment that changes nothing", (self.root / "lessons/demo.cu").read_text())
        for check in ("common", "starters", "transcripts"):
            self.assertCheckPasses(check)

    def test_comment_and_blank_lines_in_a_lesson_keep_it_fresh(self):
        self.edit("lessons/demo.cu", "return 42;", "return 42; /* the answer */")
        self.edit("lessons/demo.cu", "int answer()", "// Why 42: a comment line, then a blank one.\n\nint answer()")
        self.assertCheckPasses("transcripts")

    def test_slashes_inside_a_string_are_code(self):
        self.edit("lessons/demo.cu", '"answer %d\\n"', '"answer // %d\\n"')
        self.assertCheckFails("transcripts", "expected/h200/demo.txt:4:", "stale")

    def test_build_line_is_part_of_the_key(self):
        self.edit("lessons/demo.cu", "-O0", "-O3")
        self.assertCheckFails("transcripts", "expected/h200/demo.txt:4:", "stale")

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

    def test_non_utf8_transcript_is_one_finding(self):
        path = self.root / "expected/h200/demo.txt"
        path.write_bytes(path.read_bytes().replace(b"answer 42", b"answer \xff2"))
        err = self.assertCheckFails("transcripts", "expected/h200/demo.txt:9: not UTF-8 text")
        self.assertNotIn("Traceback", err)

    def test_run_line_changed_under_transcript(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo --twice", "// Run:   ./demo --thrice")
        self.assertIn("demo@thrice", self.assertCheckFails("transcripts", "orphan"))



class TestCharts(Scratch):
    """The charts check is plots.check_charts (recorded chart hashes), run as its own quick check."""

    def test_listed_and_quiet_without_charts(self):
        self.assertIn("charts", self.main("list-checks")[1].split())
        self.assertCheckPasses("charts")

    def test_reports_what_plots_finds(self):
        finding = "expected/h200/data/roofline.png:1: sha256 differs from expected/h200/data/charts.json"
        with patched(plots, "check_charts", lambda root, gpu: [finding]) if hasattr(plots, "check_charts") \
                else _added(plots, "check_charts", lambda root, gpu: [finding]):
            self.assertCheckFails("charts", finding)
        self.assertEqual(checks.registry()["charts"], checks.check_charts)


class _added:
    """Set an attribute that does not exist yet, and remove it after."""

    def __init__(self, obj, name, value):
        self.obj, self.name, self.value = obj, name, value

    def __enter__(self):
        setattr(self.obj, self.name, self.value)

    def __exit__(self, *exc):
        delattr(self.obj, self.name)


class TestRepositoryFiles(unittest.TestCase):
    def test_line_endings_are_pinned(self):
        from helpers import REPO
        text = (REPO / ".gitattributes").read_text()
        self.assertIn("* text=auto eol=lf", text)
        self.assertIn("*.png binary", text)


if __name__ == "__main__":
    unittest.main()
