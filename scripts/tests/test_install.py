"""Tests of scripts/install-deps.sh (it never fails the test command: no apt-get, no sudo, no node; it says
which python can plot), of the CMake build (exercises outside the default build) and of the class runner."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import OPTIONAL, REPO, SCRIPTS


TOOLS = ["dirname", "id", "sh", "cat", "cut", "tr"]


class TestInstallDeps(unittest.TestCase):
    def run_script(self, tools, pythons=None, fakes=None, gtest_dirs=None):
        """install-deps.sh with PATH holding only `tools` and the fake programs {name: sh script};
        gtest_dirs: where it looks for GoogleTest (default: the real places)."""
        self.assertFalse(set(tools) & set(fakes or {}), "a fake must not be written through a tool's link")
        with tempfile.TemporaryDirectory() as tmp:
            for tool in tools:
                found = shutil.which(tool)
                if found:
                    os.symlink(found, Path(tmp) / tool)
            for name, script in (fakes or {}).items():
                (Path(tmp) / name).write_text("#!/bin/sh\n" + script + "\n")
                (Path(tmp) / name).chmod(0o755)
            candidates = " ".join(f"{tmp}/{name}" for name in pythons) if pythons else "/bin/false"
            env = dict(os.environ, PATH=tmp, INSTALL_DEPS_PYTHONS=candidates)
            if gtest_dirs is not None:
                env["INSTALL_DEPS_GTEST_DIRS"] = " ".join(str(d) for d in gtest_dirs)
            done = subprocess.run(["/bin/bash", str(SCRIPTS / "install-deps.sh")], capture_output=True, text=True,
                                  env=env, timeout=120)
            done.tmp = tmp
            return done

    def test_without_apt_get_it_says_so_and_succeeds(self):
        done = self.run_script(TOOLS)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("no apt-get here: matplotlib not installed; the plot tests will be skipped", done.stderr)

    def test_it_names_the_interpreter_that_can_plot(self):
        """The python3 on PATH lacks matplotlib, another interpreter has it: one line says which to use."""
        done = self.run_script(TOOLS, pythons=["python3", "python3-with-mpl"],
                               fakes={"python3": "exit 1", "python3-with-mpl": "exit 0"})
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [line for line in done.stdout.splitlines() if "matplotlib" in line]
        self.assertEqual(len(lines), 1, done.stdout)
        self.assertIn(f"matplotlib is there for {done.tmp}/python3-with-mpl, not for the python3 on PATH "
                      f"({done.tmp}/python3)", lines[0])
        self.assertIn(f"'{done.tmp}/python3-with-mpl scripts/suite.py plot ...'", lines[0])

    def test_it_says_when_the_python3_on_path_can_plot(self):
        done = self.run_script(TOOLS, pythons=["python3"], fakes={"python3": "exit 0"})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn(f"matplotlib is there for {done.tmp}/python3 (the python3 on PATH)", done.stdout)


class TestInstallGoogleTest(unittest.TestCase):
    """install-deps installs GoogleTest where apt-get can (libgtest-dev), else says how to get it."""

    NO_ID = [tool for tool in TOOLS if tool != "id"]

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.lib = Path(self.tmp.name) / "lib"
        self.lib.mkdir()
        self.log = Path(self.tmp.name) / "apt.log"

    def tearDown(self):
        self.tmp.cleanup()

    def apt_get(self, update_ok=True):
        """A fake apt-get that logs its calls and 'installs' libgtest-dev into self.lib."""
        return (f'echo "$*" >> {self.log}\n'
                f'case "$*" in *update*) exit {0 if update_ok else 100};; esac\n'
                f'case "$*" in *libgtest-dev*) : > {self.lib}/libgtest.a;; esac\nexit 0')

    def test_without_apt_get_it_says_how(self):
        done = TestInstallDeps.run_script(self, TOOLS, gtest_dirs=[self.lib])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("GoogleTest not installed (no apt-get here)", done.stderr)
        self.assertIn("'apt-get install libgtest-dev' (Debian/Ubuntu)", done.stderr)

    def test_found_is_said(self):
        (self.lib / "libgtest.a").write_text("")
        done = TestInstallDeps.run_script(self, TOOLS, gtest_dirs=[self.lib])
        self.assertIn("install-deps: GoogleTest is there", done.stdout)

    def test_apt_get_installs_it(self):
        done = TestInstallDeps.run_script(self, self.NO_ID, gtest_dirs=[self.lib],
                                          fakes={"id": "echo 0", "apt-get": self.apt_get()})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("install-deps: installed GoogleTest (libgtest-dev)", done.stdout)
        calls = self.log.read_text().splitlines()
        self.assertEqual(sum("update" in c for c in calls), 1, calls)
        self.assertTrue(any("install" in c and "libgtest-dev" in c for c in calls), calls)

    def test_a_failed_update_is_tried_once(self):
        """No network: apt-get update fails; neither GoogleTest nor matplotlib tries it again."""
        done = TestInstallDeps.run_script(self, self.NO_ID, gtest_dirs=[self.lib],
                                          fakes={"id": "echo 0", "apt-get": self.apt_get(update_ok=False)})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("apt-get could not install libgtest-dev", done.stderr)
        self.assertEqual(self.log.read_text().splitlines(), ["update -qq"])


class TestExerciseTargets(unittest.TestCase):
    """A missing, half-written or non-compiling exercises/*.cu never breaks the build or the test run:
    exercise targets are outside the default build (`exercise check` builds its own by name).
    Checked on the generated build.ninja of a scratch configure of the real CMakeLists.txt and lessons
    (seconds: nothing is compiled), not by a second full workflow."""

    @classmethod
    def setUpClass(cls):
        for tool in ("cmake", "ninja", "nvcc"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest(OPTIONAL + f"{tool} is not installed")
        cls.tmp = tempfile.TemporaryDirectory(prefix="suite-exercise-targets-")
        src, cls.build = Path(cls.tmp.name) / "src", Path(cls.tmp.name) / "build"
        src.mkdir()
        shutil.copy(REPO / "CMakeLists.txt", src)
        for folder in ("lessons", "starter", "scripts"):
            os.symlink(REPO / folder, src / folder)
        exercises = src / "exercises"
        exercises.mkdir()
        (exercises / "broken.cu").write_text("this is not C++ {\n")  # half-written
        (exercises / "my copy.cu").write_text("int main() {}\n")      # no valid target name
        shutil.copy(REPO / "starter" / "testing.cu", exercises / "testing.cu")
        cls.configure = subprocess.run(
            ["cmake", "-S", str(src), "-B", str(cls.build), "-G", "Ninja", "-DCMAKE_CUDA_ARCHITECTURES=90",
             f"-DPython3_EXECUTABLE={sys.executable}"], capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def default_targets(self):
        """The outputs `cmake --build` (ninja's `all`) builds: the inputs of `build all: phony ...`."""
        text = (self.build / "build.ninja").read_text().replace("$\n", " ")
        line = next(line for line in text.splitlines() if line.startswith("build all: phony"))
        return line.split("phony", 1)[1].split("||")[0].split("|")[0].split()

    def test_configure_succeeds(self):
        self.assertEqual(self.configure.returncode, 0, self.configure.stdout + self.configure.stderr)
        self.assertIn("exercises/my copy.cu: not a target name", self.configure.stdout)

    def test_exercises_are_not_in_the_default_build(self):
        self.assertEqual(self.configure.returncode, 0, self.configure.stderr)
        targets = self.default_targets()
        self.assertIn("bin/testing", targets)
        self.assertIn("bin/testing_starter", targets)
        self.assertEqual([t for t in targets if "exercise" in t], [])

    def test_exercise_check_can_still_build_one_by_name(self):
        self.assertEqual(self.configure.returncode, 0, self.configure.stderr)
        text = (self.build / "build.ninja").read_text()
        self.assertIn("build testing_exercise: phony bin/testing_exercise", text)
        self.assertIn("build broken_exercise: phony bin/broken_exercise", text)

    def test_no_test_needs_an_exercise(self):
        tests = (self.build / "CTestTestfile.cmake").read_text()
        self.assertEqual(re.findall(r"\S*bin/\w+_exercise\b", tests), [])


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
