"""The tool's own mutation test: every planted bug of scripts/tool_mutants/*.json, applied to a temp
copy of scripts/suitelib, must make the named tool tests fail (only those, to stay fast)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS


def catalogue():
    found = []
    for path in sorted((SCRIPTS / "tool_mutants").glob("*.json")):
        found += json.loads(path.read_text(encoding="utf-8"))["mutants"]
    return found


class TestToolMutants(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-tool-mutant-")
        self.scripts = Path(self.tmp.name) / "scripts"
        for sub in ("suitelib", "tests", "fixtures"):
            shutil.copytree(SCRIPTS / sub, self.scripts / sub, ignore=shutil.ignore_patterns("__pycache__"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_catalogue_has_the_required_mutants(self):
        names = {m["name"] for m in catalogue()}
        for required in ("exercise-vs-starter", "exercise-always-0", "default-folder", "run-ignores-stderr",
                         "record-ignores-repeats", "no-us-rule", "build-lines-no-binary", "device-facts-always-exact"):
            self.assertIn(required, names)

    def run_tests(self, tests):
        return subprocess.run([sys.executable, "tests/run.py"] + tests, cwd=self.scripts, capture_output=True,
                              text=True, timeout=300, env=dict(os.environ, SUITE_REPO=str(REPO)))

    def test_unmutated_copy_passes(self):
        tests = sorted({t for m in catalogue() for t in m["tests"] if not m.get("needs") or shutil.which(m["needs"])})
        done = self.run_tests(tests)
        self.assertEqual(done.returncode, 0, done.stdout[-1500:] + done.stderr[-1500:])

    def test_every_mutant_is_killed(self):
        for mutant in catalogue():
            with self.subTest(mutant=mutant["name"]):
                if mutant.get("needs") and not shutil.which(mutant["needs"]):
                    self.skipTest(f"optional dependency missing: {mutant['needs']} (mutant {mutant['name']})")
                path = self.scripts / "suitelib" / mutant["file"]
                original = (SCRIPTS / "suitelib" / mutant["file"]).read_text(encoding="utf-8")
                self.assertEqual(original.count(mutant["old"]), 1, f"{mutant['name']}: anchor must occur once")
                path.write_text(original.replace(mutant["old"], mutant["new"]), encoding="utf-8")
                try:
                    done = self.run_tests(mutant["tests"])
                finally:
                    path.write_text(original, encoding="utf-8")
                self.assertEqual(done.returncode, 1, f"mutant {mutant['name']} survived {mutant['tests']}:\n"
                                 + done.stdout[-1500:] + done.stderr[-1500:])


if __name__ == "__main__":
    unittest.main()
