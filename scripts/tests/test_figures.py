"""Tests of suitelib.figures and the docs check's page rules: figures quoted from records (filled by
sync, compared by check), the unit rule (a measured figure with no record fails), and the spoiler
rule (a snippet that shows a solution region sits inside <details>)."""

import tempfile
import unittest
from pathlib import Path

from helpers import Scratch
from suitelib import EXIT_FAIL, EXIT_OK
from suitelib.figures import FigureError, Records, bare_figures, figure_value, parse_spec

ANCHORS = """# a comment line
lesson,kernel,n,gflops,cublas_gflops,ratio
gemm_ladder,tiled,4096,8125.2,51214.1,0.159
gemm_ladder,tiled,2048,7000.0,40000.0,0.175
gemm_ladder,vectorized,4096,34932.9,51214.1,0.682
"""
OUT = """GPU: NVIDIA H200 (compute capability 9.0)
naive   0.0136 ms   309.1 GFLOP/s
bandwidth 3951.9 GB/s (copy kernel)
"""


VERIFY = """{
  "exercise_speed": [
    {"lesson": "project_template", "slow_ratio": 1.059},
    {"lesson": "gemm_ladder", "slow_ratio": 6.8605},
    {"lesson": "twice", "slow_ratio": 1.0},
    {"lesson": "twice", "slow_ratio": 2.0}
  ]
}
"""


def write_records(root):
    data = Path(root) / "expected/h200/data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "anchors.csv").write_text(ANCHORS)
    (data / "demo.out").write_text(OUT)
    (Path(root) / "expected/h200/verify.json").write_text(VERIFY)


class TestSpec(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        write_records(self.tmp.name)
        self.records = Records(self.tmp.name, "h200")

    def tearDown(self):
        self.tmp.cleanup()

    def value(self, spec):
        return figure_value(self.records, spec)

    def test_csv_row_as_read_and_formatted(self):
        self.assertEqual(self.value("data/anchors.csv gflops kernel=tiled n=4096"), "8125.2")
        self.assertEqual(self.value("data/anchors.csv gflops kernel=tiled n=4096 | ,.0f"), "8,125")
        self.assertEqual(self.value("data/anchors.csv ratio kernel=vectorized n=4096 | .1%"), "68.2%")

    def test_regex_with_slashes_and_a_ratio(self):
        self.assertEqual(self.value(r"data/demo.out /bandwidth ([\d.]+) GB/s/"), "3951.9")
        self.assertEqual(self.value(r"data/demo.out /naive +([\d.]+) ms/ | .3f"), "0.014")
        spec = "data/anchors.csv gflops kernel=vectorized n=4096 over data/anchors.csv gflops kernel=tiled n=4096 | .2f"
        self.assertEqual(self.value(spec), "4.30")
        spec = r"data/demo.out /(\d+\.\d) GFLOP/s/ over data/anchors.csv gflops kernel=tiled n=2048"
        self.assertEqual(self.value(spec), "0.0442")

    def test_errors_name_what_is_wrong(self):
        for spec, needle in (("data/anchors.csv gflops kernel=tiled", "has 2 rows with kernel=tiled"),
                             ("data/anchors.csv gflops kernel=none", "has 0 rows"),
                             ("data/anchors.csv nosuch kernel=tiled n=4096", "no column 'nosuch'"),
                             ("data/missing.csv gflops kernel=tiled", "no record expected/h200/data/missing.csv"),
                             ("../../etc/passwd /(.)/", "not a file under expected/h200/"),
                             ("data/demo.out /nothing here (x)/", "no line of expected/h200/data/demo.out"),
                             ("data/demo.out /GPU/", "no capture group"),
                             ("data/demo.out /(GPU)/ | .2f", "'GPU' is not a number"),
                             ("data/anchors.csv gflops", "KEY=VALUE"),
                             ("data/anchors.csv gflops n=4096 kernel=tiled | .2q", "bad format")):
            with self.subTest(spec=spec):
                with self.assertRaises(FigureError) as ctx:
                    self.value(spec)
                self.assertIn(needle, str(ctx.exception))

    def test_json_entry_by_its_keys_not_the_first_match(self):
        self.assertEqual(figure_value(self.records, "verify.json exercise_speed/slow_ratio lesson=gemm_ladder | .2f"),
                         "6.86")
        # A regex over the same file takes the first lesson's figure: the reason the JSON form exists.
        self.assertEqual(figure_value(self.records, 'verify.json /"slow_ratio": ([0-9.]+)/'), "1.059")
        for spec, says in [("verify.json exercise_speed/slow_ratio lesson=twice", "2 entries"),
                           ("verify.json exercise_speed/slow_ratio lesson=none", "0 entries"),
                           ("verify.json anchors/ratio lesson=x", "no list 'anchors'"),
                           ("verify.json exercise_speed/bar lesson=gemm_ladder", "has no 'bar'"),
                           ("verify.json slow_ratio lesson=gemm_ladder", "LIST/FIELD")]:
            with self.assertRaises(FigureError) as ctx:
                figure_value(self.records, spec)
            self.assertIn(says, str(ctx.exception), spec)

    def test_parse_keeps_a_pipe_inside_the_regex(self):
        terms, fmt = parse_spec(r"data/demo.out /(a | b)/ | .2f")
        self.assertEqual((terms[0][2].pattern, fmt), ("(a | b)", ".2f"))


class TestUnitRule(unittest.TestCase):
    def test_measured_figures_are_found(self):
        line = ("naive runs 0.0136 ms, 3951.9 GB/s, 12.6 % of peak, 1.57x faster, 16 times the bytes, "
                "2 us, 40 TFLOP/s and 9 GFLOP/s; 45%")
        self.assertEqual(bare_figures(line), ["0.0136 ms", "3951.9 GB/s", "12.6 %", "1.57x", "16 times",
                                              "2 us", "40 TFLOP/s", "9 GFLOP/s", "45%"])

    def test_what_is_not_a_figure(self):
        for line in ("a 16x16 tile, 0x1f, sm_75, K = 2048 sums, [MS] ms, 4 x 4 threads",
                     "| step | n = 4096 GFLOP/s | of cuBLAS |",
                     "see `1.57x` in code and [link](https://x.org/a%20b/12%)",
                     "quoted <!-- fig: data/a.csv gflops n=1 -->8125.2 GB/s<!-- end fig --> here",
                     "<!-- stated: H200 datasheet -->4.8 TB/s<!-- end stated --> of HBM3e",
                     "<!-- a note: 3 ms -->"):
            with self.subTest(line=line):
                self.assertEqual(bare_figures(line), [])


PAGE = """# Demo

Runs at <!-- fig: data/anchors.csv gflops kernel=tiled n=4096 | ,.0f --><!-- end fig --> GFLOP/s,
<!-- fig: data/anchors.csv ratio kernel=tiled n=4096 | .1% --><!-- end fig --> of cuBLAS; the HBM's
<!-- stated: H200 datasheet -->4.8 TB/s<!-- end stated --> is a published limit.

```text
a code block may say 3.2 ms
```

Write `twice`, then open the answer:

<details><summary>The answer</summary>

<!-- snippet: demo twice-unit -->
<!-- end snippet -->

</details>
"""


class PageCase(Scratch):
    """The mini suite with records, a page quoting figures, and a snippet of the solution in a fold."""

    def setUp(self):
        super().setUp()
        write_records(self.root)
        self.edit("lessons/demo.cu", "// solution: twice", "// snippet: twice-unit\n// solution: twice")
        self.edit("lessons/demo.cu", "// end solution", "// end solution\n// end snippet")
        self.edit("starter/demo.cu", "// exercise: twice", "// snippet: twice-unit\n// exercise: twice")
        self.edit("starter/demo.cu", "// end exercise", "// end exercise\n// end snippet")
        (self.root / "README.md").write_text("# Suite\n")
        (self.root / "lessons/demo.md").write_text(PAGE)
        status, _, err = self.main("sync", writes=True)
        self.assertEqual(status, EXIT_OK, err)

    def page(self):
        return (self.root / "lessons/demo.md").read_text()

    def set_page(self, old, new):
        self.assertIn(old, self.page())
        (self.root / "lessons/demo.md").write_text(self.page().replace(old, new, 1))


class TestPageFigures(PageCase):
    def test_sync_fills_figures_and_check_passes(self):
        self.assertIn("-->8,125<!-- end fig --> GFLOP/s", self.page())
        self.assertIn("-->15.9%<!-- end fig --> of cuBLAS", self.page())
        self.assertCheckPasses("docs")

    def test_a_planted_figure_fails(self):
        self.set_page("is a published limit.", "is a published limit; tiled takes 1.57x longer.")
        err = self.assertCheckFails("docs", "lessons/demo.md:5: figure '1.57x' is quoted from no record: "
                                            "write it as <!-- fig: ... --> or mark a published constant")
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_changed_record_is_reported_stale_and_sync_fixes_it(self):
        path = self.root / "expected/h200/data/anchors.csv"
        path.write_text(path.read_text().replace("8125.2", "8300.4"))
        self.assertCheckFails("docs", "lessons/demo.md:3: stale figure <!-- fig: data/anchors.csv gflops "
                                      "kernel=tiled n=4096 | ,.0f -->: the page has '8,125', the record gives '8,300'")
        self.main("sync", writes=True)
        self.assertIn("-->8,300<!-- end fig -->", self.page())
        self.assertCheckPasses("docs")

    def test_a_hand_edited_value_is_stale(self):
        self.set_page("-->8,125<!-- end fig -->", "-->9,000<!-- end fig -->")
        self.assertCheckFails("docs", "lessons/demo.md:3: stale figure", "the page has '9,000'")

    def test_bad_figures_are_one_line_each_naming_the_page_line(self):
        for old, new, needle in (
                ("data/anchors.csv gflops kernel=tiled n=4096", "data/none.csv gflops kernel=tiled n=4096",
                 "no record expected/h200/data/none.csv"),
                ("gflops kernel=tiled n=4096", "gflops kernel=tiled", "has 2 rows with kernel=tiled"),
                ("gflops kernel=tiled n=4096", "gflops kernel=tiled n=1", "has 0 rows"),
                ("gflops kernel=tiled n=4096", "gflops", "KEY=VALUE"),
                ("<!-- end fig --> GFLOP/s", " GFLOP/s", "malformed fig marker")):
            with self.subTest(new=new):
                saved = self.page()
                self.set_page(old, new)
                status, out, err = self.main("check", "--only", "docs")
                self.assertEqual(status, EXIT_FAIL, out + err)
                # One line per bad marker (a malformed one also leaves its value bare: a second finding).
                lines = [line for line in err.strip().splitlines() if "is quoted from no record" not in line]
                self.assertEqual(len(lines), 1, err)
                self.assertIn("lessons/demo.md:3: figure", lines[0])
                self.assertIn(needle, lines[0])
                (self.root / "lessons/demo.md").write_text(saved)

    def test_code_is_not_prose(self):
        self.set_page("a code block may say 3.2 ms", "a code block may say 3.2 ms <!-- fig: nonsense -->")
        self.set_page("Write `twice`", "Write `twice` (`<!-- fig: SPEC -->VALUE<!-- end fig -->`, `2 ms`)")
        self.assertCheckPasses("docs")


class TestSpoilerFold(PageCase):
    def test_snippet_of_a_solution_inside_details_passes(self):
        self.assertCheckPasses("docs")

    def test_snippet_of_a_solution_outside_details_fails(self):
        self.set_page("<details><summary>The answer</summary>", "")
        self.set_page("</details>", "")
        self.assertCheckFails("docs", self.line_of("lessons/demo.md", "snippet: demo twice-unit")
                              + " snippet 'demo twice-unit' shows solution region 'twice' (lessons/demo.cu:",
                              "outside a spoiler fold")

    def test_snippet_that_intersects_a_solution_fails(self):
        # The snippet opens inside the solution region and closes after it (no sync: only the page rule is tested).
        self.edit("lessons/demo.cu", "// snippet: twice-unit\n// solution: twice\n", "// solution: twice\n// snippet: twice-unit\n")
        (self.root / "lessons/demo.md").write_text("Text.\n<!-- snippet: demo twice-unit -->\n<!-- end snippet -->\n")
        self.assertCheckFails("docs", "lessons/demo.md:2: snippet 'demo twice-unit' shows solution region 'twice'")

    def test_snippet_of_the_starter_needs_no_fold(self):
        self.set_page("<!-- snippet: demo twice-unit -->", "<!-- snippet: starter/demo twice-unit -->")
        self.set_page("<details><summary>The answer</summary>", "")
        self.set_page("</details>", "")
        self.main("sync", writes=True)
        self.assertCheckPasses("docs")

    def test_a_snippet_without_a_solution_needs_no_fold(self):
        self.set_page("<details><summary>The answer</summary>", "")
        self.set_page("</details>", "")
        self.set_page("<!-- snippet: demo twice-unit -->", "<!-- snippet: demo answer -->")
        self.main("sync", writes=True)
        self.assertCheckPasses("docs")


if __name__ == "__main__":
    unittest.main()
