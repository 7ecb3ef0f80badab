"""Tests of suitelib.docs: snippets, output excerpts, the lesson table, Compiler Explorer links,
and the docs check's messages (the changed line, and a transcript changed since the GPU record)."""

import json
import re
import unittest

from helpers import REPO, Scratch
from suitelib import EXIT_OK, EXIT_USAGE, docs
from suitelib.model import course
from suitelib.verify import file_hashes

DOC_PAGE = """# Lessons
<!-- commands: demo -->
<!-- end commands -->
<!-- snippet: demo answer -->
<!-- end snippet -->
<!-- output: demo "answer" 1 -->
<!-- end output -->
<!-- ce-link: demo -->
<!-- end ce-link -->
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
        self.assertEqual(status, EXIT_OK)
        self.assertEqual(out, "int answer() { return 42; }\n")

    def test_unknown_snippet_is_usage_error(self):
        status, _, err = self.main("snippet", "demo", "nosuch")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("has no snippet 'nosuch' (snippets: answer)", err)

    def test_snippet_and_ce_link_outside_the_tree(self):
        outside = self.root.parent / (self.root.name + "-outside.cu")
        outside.write_text("int main() {}\n")
        try:
            for argv in (("snippet", str(outside), "x"), ("ce-link", str(outside)), ("ce-link", "../../etc/passwd")):
                status, _, err = self.main(*argv)
                self.assertOneLineError(status, err, EXIT_USAGE)
        finally:
            outside.unlink()

    def test_ce_link_is_the_celink_fragment_link(self):
        status, out, _ = self.main("ce-link", "demo")
        self.assertEqual(status, EXIT_OK)
        self.assertEqual(out.strip(), docs.ce_link((self.root / "lessons/demo.cu").read_text()))
        self.assertTrue(out.startswith("https://godbolt.org/"))


class TestDocs(Scratch):
    def setUp(self):
        super().setUp()
        (self.root / "lessons/README.md").write_text(DOC_PAGE)
        (self.root / "README.md").write_text(TOP_README)
        status, _, err = self.main("sync", writes=True)
        self.assertEqual(status, EXIT_OK, err)

    def test_synced_docs_pass(self):
        self.assertCheckPasses("docs")
        page = (self.root / "lessons/README.md").read_text()
        for text in ("int answer() { return 42; }", "./demo --twice", "answer 42", "in Compiler Explorer](https://godbolt.org/"):
            self.assertIn(text, page)

    def test_readme_stays_plain_text(self):
        readme = (self.root / "README.md").read_text()
        self.assertIn("[open](docs/compiler-explorer.md#demo)", readme)
        self.assertNotIn("godbolt.org", readme)
        self.assertLess(max(len(line) for line in readme.splitlines()), 300)
        self.assertIn("## demo", (self.root / "docs/compiler-explorer.md").read_text())

    def test_the_links_page_opens_with_the_how_to(self):
        """docs/compiler-explorer.md: which pane to copy, a run's arguments, the limits, lesson vs starter,
        before the first link."""
        page = (self.root / "docs/compiler-explorer.md").read_text()
        first_link = page.index("godbolt.org")
        for words in ("executor pane", "Program returned: N", "Output pane", "--args", "limits",
                      "Lesson or starter", "exercise check NAME --pane FILE"):
            with self.subTest(words=words):
                self.assertLess(page.find(words), first_link)
                self.assertGreaterEqual(page.find(words), 0)

    def test_stale_snippet_quote(self):
        self.edit("lessons/demo.cu", "int answer() { return 42; }", "int answer() { return 7 * 6; }")
        self.edit("starter/demo.cu", "int answer() { return 42; }", "int answer() { return 7 * 6; }")
        err = self.assertCheckFails("docs", "lessons/README.md:", "stale generated text under <!-- snippet: demo answer -->")
        self.assertIn("the source gives 'int answer() { return 7 * 6; }'", err)

    def test_stale_output_excerpt(self):
        self.record(self.run_of("demo"), stdout="answer 43\n")
        self.assertCheckFails("docs", "lessons/README.md:", "<!-- output: demo", "'answer 43'")

    def test_hand_edited_transcript_is_not_advised_into_the_page(self):
        record = {"programs": [], "files": file_hashes(self.root, "h200")}
        (self.root / "expected/h200/verify.json").write_text(json.dumps(record))
        path = self.root / "expected/h200/demo.txt"
        path.write_text(path.read_text().replace("answer 42", "answer 43"))
        err = self.assertCheckFails("docs", "the transcript expected/h200/demo.txt changed since the GPU record")
        self.assertNotIn("run scripts/suite.py sync", err)

    def test_stale_link_prints_the_line_not_kilobytes(self):
        self.edit("lessons/demo.cu", "// A miniature lesson", "// A miniature  lesson")
        err = self.assertCheckFails("docs", "docs/compiler-explorer.md:")
        for line in err.splitlines():
            self.assertLess(len(line), 700, "an error line must not carry the whole link")

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


class TestCourse(unittest.TestCase):
    def test_the_lessons_index_lists_every_page_by_its_own_title(self):
        index = (REPO / "lessons/README.md").read_text(encoding="utf-8")
        for c in course(REPO):
            page = REPO / "lessons" / (c.name + ".md")
            if page.exists():
                title = page.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
                self.assertIn(f"[{title}]({c.name}.md)", index, f"lessons/README.md: the entry of {c.name}.md")

    def test_every_lesson_file_is_in_the_course_table(self):
        known = {c.name for c in course(REPO) if c.day != "-"}
        for path in (REPO / "lessons").glob("*.cu"):
            self.assertIn(path.stem, known)
        self.assertIn("gemm_ladder", known)


if __name__ == "__main__":
    unittest.main()


class TestAnEighthLesson(Scratch):
    """A lesson is added by files and one course entry, no Python: it shows in list-runs, the README
    table, the link page, its own page's generated regions and the checks."""

    def setUp(self):
        super().setUp()
        for sub in ("lessons", "starter"):
            text = (self.root / sub / "demo.cu").read_text()
            (self.root / sub / "eighth.cu").write_text(text.replace("./demo", "./eighth").replace("-o demo demo.cu", "-o eighth eighth.cu"))
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "demo", "day": "1", "teaches": "the miniature"},
            {"name": "eighth", "day": "8", "teaches": "an eighth lesson, added as data"}]}))
        (self.root / "README.md").write_text(TOP_README)
        (self.root / "lessons/eighth.md").write_text("# eighth\n<!-- commands: eighth -->\n<!-- end commands -->\n")

    def test_it_appears_everywhere_the_course_is_listed(self):
        status, out, _ = self.main("list-runs")
        self.assertEqual(status, EXIT_OK)
        self.assertIn("eighth\n", out)
        self.assertIn("eighth@twice", out)
        self.assertCheckFails("docs", "README.md")  # the table and the page are stale until sync
        self.main("sync", writes=True)
        table = (self.root / "README.md").read_text()
        self.assertIn("| [`eighth`](lessons/eighth.cu) | 8 | an eighth lesson, added as data |", table)
        self.assertIn("## eighth", (self.root / "docs/compiler-explorer.md").read_text())
        self.assertIn("./eighth --twice", (self.root / "lessons/eighth.md").read_text())
        self.assertCheckPasses("docs")
        self.assertCheckFails("transcripts", "lessons/eighth.cu:", "has no transcript")


class TestNewcomerReadme(unittest.TestCase):
    """The real README: the route without a GPU (the test command, its time and skips, then Compiler
    Explorer and panes) sits beside the GPU one, before the lesson table; no command it gives leaves a
    binary in the repository."""

    def setUp(self):
        self.text = (REPO / "README.md").read_text(encoding="utf-8")
        self.start = self.text[:self.text.index("## Lessons")]

    def test_both_routes_come_first(self):
        for words in ("**With an NVIDIA GPU**", "python3 scripts/suite.py run testing", "**Without a GPU**",
                      "scripts/install-deps.sh && cmake --workflow --preset cpu", "a few minutes", "skipped",
                      "docs/compiler-explorer.md", "executor pane", "exercise check NAME --pane FILE",
                      "Every run a pane can judge has passed", "GoogleTest"):
            with self.subTest(words=words):
                self.assertIn(words, self.start)
        self.assertLess(self.start.index("**With an NVIDIA GPU**"), self.start.index("**Without a GPU**"))
        self.assertLess(self.start.index("**Without a GPU**"), self.start.index("Both routes need"))

    def test_no_build_line_writes_into_the_repository(self):
        for m in re.finditer(r"nvcc [^`\n]*?-o (\S+)", self.text):
            with self.subTest(output=m.group(1)):
                self.assertTrue(m.group(1).startswith("/"), f"{m.group(0)} leaves a binary in the working folder")
