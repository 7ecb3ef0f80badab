"""The student without a GPU, start to finish (a scripted walk; no GPU, no nvcc, no network).

A fresh temp copy of the suite (lessons, starters, common blocks, the H200 recordings, the catalogue)
goes from `exercise start` to "every run a pane can judge has passed" for three lessons. The panes
are written in the format of Compiler Explorer's executor pane (static/panes/executor.ts: 'Program
returned: N', then 'Program stdout' and 'Program stderr' each above its lines, a heading left out
where its stream is empty) from the recorded runs, with a T4's GPU line and the masked
measurements filled in with other numbers, as a T4 would print them. On the way: the untouched
exercise file is refused (its regions are the starter's stand-ins), the starter's pane is rejected
and named, a pane pasted without its --args is named as the run it is, and the closing line names
what only a GPU can judge.

What this walk cannot show of Compiler Explorer itself (it is not reachable from here): that its
executor still prints exactly these headings and omits an empty stream's heading, how a browser's
copy of the pane spaces its lines, that the link's execArgs reach the program, and that each run
fits its time and memory limits on the T4 (verify measures the budget on the H200's host).
"""

import contextlib
import io
import shlex
import shutil
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, as_printed, no_gpu
from suitelib import EXIT_FAIL, EXIT_OK, cli
from suitelib.model import lesson
from suitelib.transcripts import parse_transcript

GPU = "h200"
T4_LINE = "GPU: Tesla T4 (compute capability 7.5)"


def as_a_t4_prints(text):
    lines = as_printed(text).splitlines()
    lines = [T4_LINE if line.startswith("GPU: ") else line for line in lines]
    return "\n".join(lines) + "\n" if lines else ""


def executor_pane(transcript):
    """Compiler Explorer's executor pane of a recorded run."""
    info = parse_transcript(transcript)
    out, err = as_a_t4_prints(info["stdout"]), as_a_t4_prints(info["stderr"])
    return (f"Program returned: {info['exit_code']}\n" + (f"Program stdout\n{out}" if out else "")
            + (f"Program stderr\n{err}" if err else ""))


def solved(root, name):
    """The exercise as a student who wrote the lesson's regions would have it."""
    text = lesson(root, name).text
    return text.replace("// solution: ", "// exercise: ").replace("// end solution", "// end exercise")


class TestStudentWalk(unittest.TestCase):
    LESSONS = ("testing", "project_template", "gemm_ladder")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-walk-")
        self.root = Path(self.tmp.name)
        for sub in ("lessons", "starter", "common"):
            shutil.copytree(REPO / sub, self.root / sub)
        shutil.copytree(REPO / "scripts" / "catalogue", self.root / "scripts" / "catalogue")
        (self.root / "expected" / GPU).mkdir(parents=True)
        shutil.copy(REPO / "expected" / GPU / "verify.json", self.root / "expected" / GPU)
        shutil.copytree(REPO / "expected" / GPU / "starter", self.root / "expected" / GPU / "starter")
        for path in (REPO / "expected" / GPU).glob("*.txt"):
            shutil.copy(path, self.root / "expected" / GPU)

    def tearDown(self):
        self.tmp.cleanup()

    def suite(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), no_gpu():
            status = cli.main(["--root", str(self.root)] + list(argv))
        return status, out.getvalue(), err.getvalue()

    def paste(self, run_id, name="pane.txt"):
        path = self.root / name
        path.write_text(executor_pane(self.root / "expected" / GPU / f"{run_id}.txt"))
        return str(path)

    def walk(self, name):
        status, out, err = self.suite("exercise", "start", name)
        self.assertEqual(status, EXIT_OK, err)
        runs = lesson(self.root, name).runs()

        # The untouched file, with the lesson's own correct pane beside it: refused, nothing judged.
        status, out, err = self.suite("exercise", "check", name, "--pane", self.paste(runs[0].id))
        self.assertEqual(status, EXIT_FAIL, out + err)
        self.assertIn(f"exercises/{name}.cu still holds the starter's stand-in in region", err)
        self.assertEqual(out, "")

        # The starter's pane pasted for a written file: rejected, named, with what the program says is left.
        (self.root / "exercises" / f"{name}.cu").write_text(solved(self.root, name))
        status, out, err = self.suite("exercise", "check", name, "--pane", self.paste(f"starter/{name}"))
        self.assertEqual(status, EXIT_FAIL, out + err)
        self.assertIn("this pane is the untouched starter's recorded output", out)
        self.assertIn("- exit 1: a gate failed or something is left to write", out)

        if len(runs) > 1:  # a pane of the second run, pasted without its --args: named
            status, out, _ = self.suite("exercise", "check", name, "--pane", self.paste(runs[1].id))
            self.assertEqual(status, EXIT_FAIL, out)
            self.assertIn(f"this is the run `{runs[1].command()}`: add --args '{' '.join(runs[1].args)}'", out)

        done = None
        for run in runs:
            if f"- {run.command()}: " not in out:  # not among the runs still to pass: only a GPU judges it
                self.assertIn(f"the run {run.command()} (over Compiler Explorer's budget", out)
                continue
            argv = ["--args", " ".join(run.args)] if run.args else []
            status, out, err = self.suite("exercise", "check", name, "--pane", self.paste(run.id), *argv)
            self.assertEqual(status, EXIT_OK, f"{run.id}:\n{out}{err}")
            self.assertIn(f"run {run.command()}: passed", out)
            done = [line for line in out.splitlines() if line.startswith("Every run a pane can judge has passed")]
            if done:
                break
        self.assertEqual(len(done or []), 1, out)
        self.assertNotIn("Still to pass", out)
        return done[0]

    def test_testing(self):
        line = self.walk("testing")
        self.assertIn("(1 of the 1 recorded runs); only a GPU can judge: compute-sanitizer memcheck with 64 KiB of "
                      "padding after every allocation on the lesson's first Run: (it has no Sanitize: line) ./testing", line)

    def test_project_template(self):
        line = self.walk("project_template")
        self.assertIn("(6 of the 6 recorded runs)", line)
        self.assertIn("and racecheck (the exercise has a __syncthreads barrier)", line)

    def test_gemm_ladder(self):
        line = self.walk("gemm_ladder")
        self.assertIn("(3 of the 5 recorded runs)", line)
        self.assertNotIn("the run ./gemm_ladder -n 2048 ", line, "its recorded peak memory fits the budget")
        self.assertIn("the run ./gemm_ladder -m 2000 -n 4000 -k 64 (over Compiler Explorer's budget: recorded", line)
        self.assertIn("the run ./gemm_ladder -n 4096 (over Compiler Explorer's budget: recorded", line)
        self.assertIn("the speed of 'register-blocking'", line)
        self.assertIn("racecheck", line)
        self.assertIn(shlex.quote("-m 130 -n 132 -k 512 -iters 1").strip("'"), line)


if __name__ == "__main__":
    unittest.main()
