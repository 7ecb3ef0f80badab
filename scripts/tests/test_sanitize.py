"""Tests of suitelib.sanitize: on a GPU, `exercise check` and the catalogue's attempts run memcheck with
padding between allocations and, where the exercise has a barrier, racecheck, on the lesson's
Sanitize: run, at the same time; a finding rejects; without compute-sanitizer the verdict names the
checks it did not run. A fake compute-sanitizer on PATH stands in (no GPU needed): like the real one
on gemm_ladder's unguarded panel loads, it reports the read only when given the padding."""

import os
import tempfile
import unittest
from pathlib import Path

from helpers import Scratch, env, fake_sanitizer, patched
from suitelib import EXIT_FAIL, EXIT_OK, catalogue, exercises, running, sanitize

T4 = "GPU: Tesla T4 (compute capability 7.5)\n[device] 40 SMs\nnote: my own words\n"
FACTS = running.GpuFacts("NVIDIA H200", "h200", "13.0")
PASSING = f"if [ \"$1\" = --twice ]; then echo 'answer 84'; else echo 'answer 42'; fi"
BARRIER = "int twice(int v) { return v; }"


class TestSanitizeUnits(unittest.TestCase):
    def test_a_barrier_counts_only_inside_a_solution_or_exercise_region(self):
        region = "// exercise: r\n  __syncthreads();\n// end exercise\n"
        self.assertTrue(sanitize.has_barrier(region))
        self.assertTrue(sanitize.has_barrier("x\n", region.replace("exercise", "solution")))
        self.assertFalse(sanitize.has_barrier("__syncthreads();\n// exercise: r\nint x;\n// end exercise\n"))
        self.assertEqual([tool for tool, _, _ in sanitize.checks(region)], ["memcheck", "racecheck"])
        self.assertEqual(sanitize.checks("")[0][1], ["--padding", "65536"])

    def test_the_first_finding_is_named(self):
        log = ("========= COMPUTE-SANITIZER\n========= Invalid __global__ read of size 4 bytes\n"
               "=========     at k+0x10\n========= ERROR SUMMARY: 1 error\n")
        self.assertEqual(sanitize.first_finding(log), "Invalid __global__ read of size 4 bytes")


class SanitizerScratch(Scratch):
    def setUp(self):
        super().setUp()
        (self.root / "exercises").mkdir()
        (self.root / "exercises/demo.cu").write_text((self.root / "starter/demo.cu").read_text())
        self.fakes = Path(tempfile.mkdtemp(prefix="suite-fake-sanitizer-"))

    def tearDown(self):
        for p in sorted(self.fakes.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
        self.fakes.rmdir()
        super().tearDown()

    def on_path(self, **behaviour):
        folder = fake_sanitizer(self.fakes / "bin", **behaviour)
        return env(PATH=f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")

    def calls(self):
        log = self.fakes / "bin/calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def check(self):
        bin_dir = self.fake("demo_exercise", PASSING)
        with patched(running, "detect_gpu", lambda: FACTS), patched(running, "gpu_present", lambda: True):
            return self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir))

    def add_barrier(self):
        self.edit("exercises/demo.cu", BARRIER, BARRIER + "\n__syncthreads();")


class TestExerciseSanitizer(SanitizerScratch):
    def test_without_compute_sanitizer_the_verdict_names_the_checks_not_run(self):
        with patched(sanitize, "available", lambda: False):
            status, out, err = self.check()
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("sanitizer: not run here (compute-sanitizer is not on PATH): memcheck with 64 KiB of padding "
                      "after every allocation on ./demo", out)
        self.assertIn("Not run here: the sanitizer checks above", out)

    def test_a_read_past_a_buffer_seen_only_with_padding_rejects(self):
        """Found 7: memcheck without padding reports 0 errors where a read lands in the next buffer."""
        with self.on_path(finding_with_padding=True):
            status, out, err = self.check()
        self.assertEqual(status, EXIT_FAIL, out + err)
        self.assertIn("memcheck: FAILED: 1 finding(s) on ./demo", out)
        self.assertIn("Invalid __global__ read of size 4 bytes", out)
        self.assertNotIn("Congratulations", out)
        self.assertEqual(len(self.calls()), 1, self.calls())
        self.assertIn("--tool memcheck --print-limit 20 --padding 65536 ", self.calls()[0])

    def test_clean_checks_pass_and_racecheck_runs_only_with_a_barrier(self):
        with self.on_path():
            status, out, err = self.check()
        self.assertEqual(status, EXIT_OK, out + err)
        self.assertIn("memcheck: passed", out)
        self.assertEqual([c.split()[1] for c in self.calls()], ["memcheck"])
        self.add_barrier()
        with self.on_path(race=True):
            status, out, _ = self.check()
        self.assertEqual(status, EXIT_FAIL, out)
        self.assertIn("racecheck: FAILED: 1 finding(s)", out)
        self.assertIn("Error: Race reported", out)

    def test_the_two_run_at_the_same_time_on_the_sanitize_line(self):
        self.edit("lessons/demo.cu", "// Run:   ./demo --twice\n",
                  "// Run:   ./demo --twice\n// Sanitize: --launch-count 4 ./demo --twice\n")
        self.add_barrier()
        with self.on_path(wait_for_peer=True):
            status, out, err = self.check()
        self.assertEqual(status, EXIT_OK, out + err)
        overlap = (self.fakes / "bin/overlap.log").read_text().splitlines()
        self.assertEqual(sorted(overlap), ["memcheck saw racecheck", "racecheck saw memcheck"])
        for call in self.calls():
            self.assertIn("--launch-count 4", call)
            self.assertTrue(call.endswith("demo_exercise --twice"), call)

    def test_sanitizers_run_only_after_every_run_passed(self):
        bin_dir = self.fake("demo_exercise", "echo 'answer 41'")
        with self.on_path(finding_with_padding=True), patched(running, "detect_gpu", lambda: FACTS):
            status, out, _ = self.main("exercise", "check", "demo", "--bin-dir", str(bin_dir))
        self.assertEqual(status, EXIT_FAIL)
        self.assertEqual(self.calls(), [])


def fake_build(prog, text, tmp, arch=None, sass=None):
    """Every attempt 'compiles' to a program that prints the lesson's answers (no run shows it wrong)."""
    path = Path(tmp) / "demo"
    path.write_text("#!/bin/sh\n" + PASSING + "\n")
    path.chmod(0o755)
    return path, None


class TestAttemptSanitizer(SanitizerScratch):
    """exercises.run_attempt (verify's attempts) judges by the same sanitizer checks."""

    def attempt(self):
        cat = catalogue.load(self.root)["demo"]
        attempt = next(a for a in cat.attempts if a.name == "times-two")
        with patched(catalogue, "build_in_scratch", fake_build):
            return exercises.run_attempt(self.root, attempt, "h200", cat.student_worded)

    def test_a_finding_rejects_an_attempt_every_run_accepts(self):
        with self.on_path(finding_with_padding=True):
            entry = self.attempt()
        self.assertFalse(entry["accepted"], entry)
        self.assertIn("rejected by compute-sanitizer: memcheck: FAILED", entry["outcome"])

    def test_clean_and_absent(self):
        with self.on_path():
            entry = self.attempt()
        self.assertTrue(entry["accepted"], entry)
        self.assertIn("memcheck: passed", entry["sanitizer"][0])
        with patched(sanitize, "available", lambda: False):
            entry = self.attempt()
        self.assertTrue(entry["accepted"], entry)
        self.assertIn("sanitizer checks not run", entry["outcome"])


class TestSanitizerFilter(unittest.TestCase):
    """Where the caller names kernels (verify's attempts: their region's), every tool instruments
    only those; with none named, every kernel (a student's own file)."""

    def test_only_the_named_kernels_are_instrumented_by_each_tool(self):
        calls = []

        def fake(binary, args, tool, options=()):
            calls.append((tool, list(options)))
            return 0, ""
        prog = type("P", (), {"sanitize_spec": lambda self: ([], ["-x"]), "name": "demo", "text": ""})()
        barrier = "// solution: r\n__syncthreads();\n// end solution\n"
        with patched(sanitize, "available", lambda: True), patched(catalogue, "sanitizer_findings", fake):
            ok, _ = sanitize.judge("b", prog, barrier, only=["tiled"])
            self.assertTrue(ok)
            self.assertEqual(sorted(t for t, _ in calls), ["memcheck", "racecheck"])
            self.assertTrue(all("kns=tiled" in o for _, o in calls), calls)
            calls.clear()
            sanitize.judge("b", prog, barrier)
            self.assertFalse(any("--kernel-name" in o for _, o in calls), calls)


if __name__ == "__main__":
    unittest.main()
