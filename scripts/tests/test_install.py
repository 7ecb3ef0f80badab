"""Tests of scripts/install-deps.sh: it never fails the test command (no apt-get, no sudo, no node)."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from helpers import SCRIPTS


class TestInstallDeps(unittest.TestCase):
    def run_script(self, tools):
        with tempfile.TemporaryDirectory() as tmp:
            for tool in tools:
                found = shutil.which(tool)
                if found:
                    os.symlink(found, Path(tmp) / tool)
            env = dict(os.environ, PATH=tmp, INSTALL_DEPS_PYTHONS="/bin/false")
            return subprocess.run(["/bin/bash", str(SCRIPTS / "install-deps.sh")], capture_output=True, text=True,
                                  env=env, timeout=120)

    def test_without_apt_get_it_says_so_and_succeeds(self):
        done = self.run_script(["dirname", "id", "sh", "cat", "cut", "tr"])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("no apt-get here: matplotlib not installed; the plot tests will be skipped", done.stderr)


class TestClassRunner(unittest.TestCase):
    """tests/run.py: a class skipped for a missing optional dependency exits 77 (a CTest skip)."""

    def run_demo(self, body):
        import contextlib
        import io
        import sys
        import run
        demo = type("DemoCase", (unittest.TestCase,), {"test_it": body})
        module = sys.modules[__name__]
        setattr(module, "DemoCase", demo)
        try:
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                return run.run_class(f"{__name__}.DemoCase")
        finally:
            delattr(module, "DemoCase")

    def test_optional_skip_is_77(self):
        from helpers import OPTIONAL
        self.assertEqual(self.run_demo(lambda self: self.skipTest(OPTIONAL + "matplotlib")), 77)

    def test_pass_and_failure(self):
        self.assertEqual(self.run_demo(lambda self: None), 0)
        self.assertEqual(self.run_demo(lambda self: self.fail("x")), 1)

    def test_listing_names_every_module(self):
        import run
        listed = {name.split(".")[0] for name in run.classes()}
        self.assertEqual(listed, set(run.modules()))


if __name__ == "__main__":
    unittest.main()
