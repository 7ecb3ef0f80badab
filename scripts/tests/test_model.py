"""Tests of suitelib.model and the markers check."""

import unittest

from helpers import Scratch
from suitelib import EXIT_USAGE, UsageError
from suitelib.model import behaviour_text, find_lesson_run, first_difference, lesson, resolve_source, strip_comments


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
        self.assertEqual(resolve_source(self.root, "demo").sanitize_spec(), (["--launch-count", "3"], ["--twice"]))

    def test_sanitize_line_must_name_the_program(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo\n", "// Run:   ./demo\n// Sanitize: --launch-count 3\n")
        self.assertCheckFails("markers", "Sanitize: line must name ./demo")

    def test_solution_region_in_starter(self):
        self.edit("starter/demo.cu", "// exercise: twice", "// solution: twice")
        self.edit("starter/demo.cu", "// end exercise", "// end solution")
        self.assertCheckFails("markers", self.line_of("starter/demo.cu", "// solution: twice"),
                              "may not hold 'solution' regions")

    def test_non_utf8_source_is_one_line(self):
        (self.root / "lessons/demo.cu").write_bytes(b"// \xff\xfe\n")
        err = self.assertCheckFails("markers", "lessons/demo.cu:1: not UTF-8 text")
        self.assertNotIn("Traceback", err)


class TestLookup(Scratch):
    def test_run_by_arguments(self):
        self.assertEqual(find_lesson_run(self.root, "demo", ["--twice"]).id, "demo@twice")
        self.assertEqual(find_lesson_run(self.root, "demo").id, "demo")

    def test_unknown_arguments(self):
        with self.assertRaises(UsageError) as ctx:
            find_lesson_run(self.root, "demo", ["--thrice"])
        self.assertIn("no recorded run with arguments '--thrice'", str(ctx.exception))

    def test_path_outside_the_tree_is_refused(self):
        outside = self.root.parent / "elsewhere.cu"
        with self.assertRaises(UsageError):
            resolve_source(self.root, str(outside))
        with self.assertRaises(UsageError):
            resolve_source(self.root, "../" + self.root.name + "/../x")
        self.assertEqual(EXIT_USAGE, UsageError.code)

    def test_a_lesson_name_is_never_a_path(self):
        """lesson('../lessons/demo') found lessons/demo.cu through the path (found 6: exercise check judged it)."""
        for name in ("../lessons/demo", str(self.root / "lessons/demo"), "./demo"):
            for starter in (False, True):
                with self.subTest(name=name, starter=starter), self.assertRaises(UsageError) as ctx:
                    lesson(self.root, name, starter=starter)
                self.assertIn("(have: demo)", str(ctx.exception))
        self.assertEqual(lesson(self.root, "demo").rel, "lessons/demo.cu")

    def test_first_difference(self):
        self.assertIsNone(first_difference(["a"], ["a"]))
        self.assertEqual(first_difference(["a", "b"], ["a"]), 1)


if __name__ == "__main__":
    unittest.main()


class TestBehaviourKey(unittest.TestCase):
    def test_comments_go_literals_stay(self):
        src = 'int a = 1; // one\n/* two\n lines */ const char* s = "a // b /* c */";\nchar q = \'/\'; int m = 1\'000;\n'
        out = strip_comments(src)
        self.assertNotIn("one", out)
        self.assertNotIn("two", out)
        self.assertIn('"a // b /* c */"', out)
        self.assertIn("'/'", out)
        self.assertIn("1'000", out)

    def test_header_lines_stay_other_comments_and_blanks_go(self):
        src = "// SPDX\n// Build: nvcc -o x x.cu\n// Run: ./x -n 3\n// prose\n\nint main() { }\n"
        self.assertEqual(behaviour_text(src), "// Build: nvcc -o x x.cu\n// Run: ./x -n 3\nint main() { }\n")
        self.assertNotEqual(behaviour_text(src), behaviour_text(src.replace("-n 3", "-n 4")))
        self.assertEqual(behaviour_text(src), behaviour_text(src.replace("// prose", "// other prose\n\n")))
