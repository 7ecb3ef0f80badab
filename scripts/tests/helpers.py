"""Shared fixtures of the tool's tests: a scratch suite built from fixtures/mini, fake binaries,
and the `optional` skip that the class runner (run.py) turns into a CTest skip (exit 77)."""

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))
# The real suite whose recordings some tests read (a temp copy of the tool, as the tool-mutant
# test makes, points here through SUITE_REPO).
REPO = Path(os.environ.get("SUITE_REPO", SCRIPTS.parent))
MINI = SCRIPTS / "fixtures" / "mini"

import suitelib  # noqa: E402
from suitelib import cli, running, transcripts  # noqa: E402
from suitelib.model import all_runs, find_run  # noqa: E402

OPTIONAL = "optional dependency missing: "


def optional(available, what):
    """Skip a test or class when an optional dependency is missing (a CTest skip, not a pass)."""
    return unittest.skipUnless(available, OPTIONAL + what)


def has_module(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


needs_nvcc = optional(shutil.which("nvcc"), "nvcc is not installed")
needs_matplotlib = optional(has_module("matplotlib"), "matplotlib is not installed (scripts/install-deps.sh)")


def snapshot(root):
    """sha256 of every file under root, to prove a command wrote nothing."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# A number for each placeholder a recording holds, as a program prints it (a recording's own
# placeholders are refused where output is expected: no program prints them).
FILL = {"[MS]": "1.234", "[US]": "12.5", "[S]": "0.25", "[GFLOPS]": "1234.5", "[TFLOPS]": "1.2", "[GBS]": "250.5",
        "[TBS]": "0.3", "[SPEEDUP]": "1.07", "[PCT]": "41.5", "[VAR]": "2.5", "[MEASURED]": "a ranked row"}
PLACEHOLDER = re.compile("|".join(re.escape(k) for k in FILL))


def as_printed(text):
    """A recorded stream with its masked measurements filled in with numbers, as a program prints them."""
    return PLACEHOLDER.sub(lambda m: FILL[m.group(0)], text)


def real_transcripts(pattern="*.txt"):
    """Every recorded transcript of the real suite (parsed), for tests that work on any lesson."""
    base = REPO / "expected" / suitelib.DEFAULT_GPU
    return {p.relative_to(base).as_posix(): transcripts.parse_transcript(p) for p in sorted(base.rglob(pattern))}


class Scratch(unittest.TestCase):
    """A scratch suite: the miniature lesson, its starter, common block, catalogue and transcripts."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-test-")
        self.root = Path(self.tmp.name)
        for sub in ("lessons", "starter", "common"):
            shutil.copytree(MINI / sub, self.root / sub)
        shutil.copytree(MINI / "catalogue", self.root / "scripts" / "catalogue")
        for run in all_runs(self.root):
            self.record(run, stdout="answer 42\n" if not run.args else "answer 84\n")

    def tearDown(self):
        self.tmp.cleanup()

    def record(self, run, stdout, stderr="", exit_code=0, gpu_name="NVIDIA H200"):
        path = run.transcript_path(suitelib.DEFAULT_GPU)
        path.parent.mkdir(parents=True, exist_ok=True)
        result = {"stdout": stdout, "stderr": stderr, "exit_code": exit_code}
        path.write_text(transcripts.format_transcript(run, gpu_name, "13.0", result))

    def run_of(self, run_id):
        return find_run(self.root, run_id)

    def edit(self, rel, old, new, count=1):
        path = self.root / rel
        text = path.read_text()
        self.assertIn(old, text, f"fixture {rel} lacks {old!r}")
        path.write_text(text.replace(old, new, count))

    def edit_catalogue(self, fn):
        """fn(data) edits the miniature catalogue's JSON in place."""
        path = self.root / "scripts/catalogue/demo.json"
        data = json.loads(path.read_text())
        fn(data)
        path.write_text(json.dumps(data))

    def line_of(self, rel, text):
        """'rel:N:' for the first line of rel that contains text."""
        for no, line in enumerate((self.root / rel).read_text().splitlines(), 1):
            if text in line:
                return f"{rel}:{no}:"
        self.fail(f"{rel} has no line containing {text!r}")

    def main(self, *argv, writes=False):
        """Run the tool in-process; return (status, stdout, stderr); unless writes, assert no file changed."""
        before = snapshot(self.root)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["--root", str(self.root)] + list(argv))
        if not writes:
            self.assertEqual(before, snapshot(self.root), "the command changed files")
        return status, out.getvalue(), err.getvalue()

    def assertOneLineError(self, status, err, code):
        self.assertEqual(status, code, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, f"want one line, got:\n{err}")
        self.assertTrue(err.startswith("error: "), err)

    def assertCheckFails(self, check, *needles):
        status, out, err = self.main("check", "--only", check)
        self.assertEqual(status, suitelib.EXIT_FAIL, f"check {check} should fail:\n{out}{err}")
        for needle in needles:
            self.assertIn(needle, err)
        return err

    def assertCheckPasses(self, check):
        status, out, err = self.main("check", "--only", check)
        self.assertEqual(status, suitelib.EXIT_OK, f"check {check} should pass:\n{out}{err}")

    def fake(self, target, script, bin_dir="fakebin"):
        """A program replaced by a shell script (run/compare logic tested without a GPU)."""
        folder = self.root / bin_dir
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / target
        path.write_text("#!/bin/sh\n" + script + "\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        return folder


@contextlib.contextmanager
def patched(obj, name, value):
    saved = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, saved)


def recording_compile(compiled, script):
    """A stand-in for catalogue._compile: records each argv in compiled and 'builds' a shell script
    (its body: script) named demo in the build folder."""
    def fake_compile(prog, text, argv, folder):
        compiled.append(list(argv))
        path = Path(folder) / "demo"
        path.write_text("#!/bin/sh\n" + script + "\n")
        path.chmod(0o755)
        return path, None
    return fake_compile


def no_gpu():
    """Pretend this machine has no GPU (tests must not depend on the machine they run on).

    `running.detect_gpu` is replaced, and so is every copy of the name that a suitelib module took
    with `from .running import detect_gpu`: patching only the module left those calling nvidia-smi."""
    return patched_everywhere(running.detect_gpu, lambda: None)


@contextlib.contextmanager
def patched_everywhere(original, value):
    """Replace a function in every loaded suitelib module that holds it, under any name."""
    holders = [(module, name) for module_name, module in list(sys.modules.items())
               if module is not None and (module_name == "suitelib" or module_name.startswith("suitelib."))
               for name, obj in list(vars(module).items()) if obj is original]
    with contextlib.ExitStack() as stack:
        for module, name in holders:
            stack.enter_context(patched(module, name, value))
        yield


def fake_path_with(tmp, programs):
    """A PATH folder holding only the named fake programs {name: shell script}."""
    folder = Path(tmp) / "path"
    folder.mkdir(exist_ok=True)
    for name, script in programs.items():
        p = folder / name
        p.write_text("#!/bin/sh\n" + script + "\n")
        p.chmod(0o755)
    return str(folder)


def env(**kw):
    """Temporarily set environment variables."""
    @contextlib.contextmanager
    def manager():
        saved = {k: os.environ.get(k) for k in kw}
        os.environ.update(kw)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return manager()


def fake_sanitizer(folder, finding_with_padding=False, race=False, wait_for_peer=False):
    """A folder holding a fake `compute-sanitizer` (put it first on PATH): it logs its argv to
    folder/calls.log, prints memcheck's or racecheck's summary and, where asked, a finding: memcheck
    only when given --padding 65536 (as the real one finds gemm_ladder's unguarded reads only with
    padding between allocations), racecheck always. wait_for_peer: each run waits (up to 5 s) until
    the other tool has started, and logs whether it saw it (the two must run at the same time)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    script = f"""#!/bin/sh
echo "$*" >> "{folder}/calls.log"
tool=$2
touch "{folder}/$tool.started"
if [ {int(wait_for_peer)} = 1 ]; then
  peer=memcheck; [ "$tool" = memcheck ] && peer=racecheck
  i=0; while [ ! -e "{folder}/$peer.started" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  if [ -e "{folder}/$peer.started" ]; then echo "$tool saw $peer" >> "{folder}/overlap.log"; fi
fi
echo "========= COMPUTE-SANITIZER"
case " $* " in *" --padding 65536 "*) padded=1;; *) padded=0;; esac
if [ "$tool" = memcheck ]; then
  if [ {int(finding_with_padding)} = 1 ] && [ $padded = 1 ]; then
    echo "========= Invalid __global__ read of size 4 bytes"
    echo "=========     at panelLoad+0x90"
    echo "========= ERROR SUMMARY: 1 error"
  else
    echo "========= ERROR SUMMARY: 0 errors"
  fi
else
  if [ {int(race)} = 1 ]; then
    echo "========= Error: Race reported between Write access and Read access"
    echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
  else
    echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
  fi
fi
"""
    path = folder / "compute-sanitizer"
    path.write_text(script)
    path.chmod(0o755)
    return folder
