"""Tests of suitelib.running and `run`: programs replaced by shell scripts, GPU detection with a
fake nvidia-smi, CLI-table rows. None depends on whether this machine has a GPU."""

import tempfile
import unittest
from pathlib import Path

from helpers import Scratch, env, fake_path_with, no_gpu, patched
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE, running


class TestRunAgainstTranscript(Scratch):
    def run_demo(self, script, *extra):
        bin_dir = self.fake("demo", script)
        with no_gpu(), patched(running, "gpu_present", lambda: False):
            return self.main("run", "demo", "--bin-dir", str(bin_dir), *extra)

    def test_matching_run(self):
        status, _, err = self.run_demo('echo "answer 42"')
        self.assertEqual(status, EXIT_OK, err)
        self.assertIn("ok: demo matches expected/h200/demo.txt", err)

    def test_default_transcript_folder_is_h200(self):
        status, _, err = self.run_demo('echo "answer 42"')
        self.assertIn("expected/h200/demo.txt", err)

    def test_changed_output_shows_a_diff(self):
        status, _, err = self.run_demo('echo "answer 41"')
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("-answer 42", err)
        self.assertIn("+answer 41", err)

    def test_changed_exit_code(self):
        status, _, err = self.run_demo('echo "answer 42"; exit 1')
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit code 1, the recording says 0", err)

    def test_a_changed_exit_code_names_the_last_stderr_line(self):
        """The first problem is what an attempt's record and a short verdict keep: it says why."""
        status, _, err = self.run_demo('echo "answer 42"; echo "GATE: out of memory" >&2; exit 1')
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit code 1, the recording says 0 (its stderr ends: 'GATE: out of memory')", err)

    def test_stderr_counts(self):
        status, _, err = self.run_demo('echo "answer 42"; echo "GATE: surprise" >&2')
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("stderr differs", err)

    def test_timings_do_not_count(self):
        self.record(self.run_of("demo"), stdout="k 0.0099 ms 1.08x 3 us\n")
        status, _, err = self.run_demo('echo "k 12.5 ms 0.97x 40 us"')
        self.assertEqual(status, EXIT_OK, err)

    def test_no_gpu_is_skipped(self):
        status, _, err = self.run_demo('echo "no usable CUDA device: x" >&2; exit 77')
        self.assertEqual(status, EXIT_SKIP, err)

    def test_exit_77_on_a_gpu_machine_fails(self):
        bin_dir = self.fake("demo", 'echo "no usable CUDA device: x" >&2; exit 77')
        with no_gpu(), patched(running, "gpu_present", lambda: True):
            status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("on a machine with a GPU", err)

    def test_stale_transcript_fails_even_when_output_matches(self):
        self.edit("lessons/demo.cu", "return 42;", "return 42 ;")
        status, _, err = self.run_demo('echo "answer 42"')
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("stale", err)

    def test_unknown_run_is_usage_error(self):
        status, _, err = self.main("run", "nosuch", "--bin-dir", str(self.root))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("unknown run 'nosuch'", err)


class TestRunWithoutGpu(Scratch):
    """`run` on a machine without a GPU: the reason once, then the next step, exit 77."""

    def run_id(self, run_id):
        bin_dir = self.fake(self.run_of(run_id).program.target,
                            'echo "no usable CUDA device: no CUDA-capable device is detected" >&2; exit 77')
        with no_gpu(), patched(running, "gpu_present", lambda: False):
            return self.main("run", run_id, "--bin-dir", str(bin_dir))

    def test_reason_once_then_the_compiler_explorer_route(self):
        status, _, err = self.run_id("demo")
        self.assertEqual(status, EXIT_SKIP, err)
        self.assertEqual(err.count("no CUDA-capable device is detected"), 1, err)
        self.assertIn("python3 scripts/suite.py ce-link demo", err)
        self.assertIn("python3 scripts/suite.py compare demo --stdout FILE", err)
        self.assertNotIn("Traceback", err)

    def test_a_run_with_arguments_names_them(self):
        status, _, err = self.run_id("demo@twice")
        self.assertEqual(status, EXIT_SKIP, err)
        self.assertIn("type '--twice' into the executor's arguments", err)
        self.assertIn("compare demo@twice --stdout FILE", err)

    def test_a_starter(self):
        status, _, err = self.run_id("starter/demo")
        self.assertEqual(status, EXIT_SKIP, err)
        self.assertIn("ce-link starter/demo", err)


class TestRunRebuilds(Scratch):
    """Without --bin-dir, `run` builds its target every time (a no-op when fresh), as `exercise check`
    does: a binary older than its source must not be tested. With --bin-dir nothing is built."""

    def setUp(self):
        super().setUp()
        self.built = []
        self.fake("demo", 'echo "answer 42"', bin_dir="build/dev/bin")

    def run_demo(self, *extra):
        with no_gpu(), patched(running, "gpu_present", lambda: False), \
                patched(running, "cmake_build", lambda root, targets=(), preset="dev": self.built.append(list(targets))):
            return self.main("run", "demo", *extra, writes=True)

    def test_an_existing_binary_is_rebuilt(self):
        status, _, err = self.run_demo()
        self.assertEqual(status, EXIT_OK, err)
        self.assertEqual(self.built, [["demo"]])

    def test_bin_dir_is_used_as_it_is(self):
        status, _, err = self.run_demo("--bin-dir", str(self.root / "build/dev/bin"))
        self.assertEqual(status, EXIT_OK, err)
        self.assertEqual(self.built, [])


class TestNoGpuHelper(unittest.TestCase):
    """helpers.no_gpu() must reach every module that took the name with `from .running import detect_gpu`
    (it used to patch running alone, so such modules still ran nvidia-smi)."""

    def test_patch_reaches_a_module_that_imported_the_name(self):
        import sys
        import types
        planted = types.ModuleType("suitelib._planted_importer")
        planted.detect_gpu = running.detect_gpu  # what `from .running import detect_gpu` leaves behind
        sys.modules[planted.__name__] = planted
        calls = []
        try:
            with tempfile.TemporaryDirectory() as tmp, \
                    env(PATH=fake_path_with(tmp, {"nvidia-smi": f'echo called >> {tmp}/calls; echo "NVIDIA H200"'})), \
                    patched(running.glob, "glob", lambda pattern: ["/dev/nvidia0"]), no_gpu():
                self.assertIsNone(planted.detect_gpu())
                self.assertIsNone(running.detect_gpu())
                for name, module in list(sys.modules.items()):
                    if name.startswith("suitelib") and module is not None and hasattr(module, "detect_gpu"):
                        self.assertIsNone(module.detect_gpu(), name)
                calls = (Path(tmp) / "calls").read_text().splitlines() if (Path(tmp) / "calls").exists() else []
        finally:
            del sys.modules[planted.__name__]
        self.assertEqual(calls, [], "nvidia-smi was called under no_gpu()")
        self.assertIs(planted.detect_gpu, running.detect_gpu, "the patch was not undone")


class TestRunErrors(Scratch):
    def test_non_executable_binary(self):
        bin_dir = self.fake("demo", "echo hi")
        (bin_dir / "demo").chmod(0o644)
        status, _, err = self.main("run", "demo", "--bin-dir", str(bin_dir))
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("is not executable", err)

    def test_missing_binary_in_bin_dir(self):
        status, _, err = self.main("run", "demo", "--bin-dir", str(self.root / "nothing"))
        self.assertOneLineError(status, err, EXIT_USAGE)

    def test_a_program_busy_for_a_moment_is_run_again(self):
        """ETXTBSY: a child forked by another thread while the program was written still holds it."""
        import errno
        import subprocess
        bin_dir = self.fake("demo", "echo hi")
        real, tries = subprocess.Popen, []

        def busy_twice(*a, **k):
            tries.append(1)
            if len(tries) <= 2:
                raise OSError(errno.ETXTBSY, "Text file busy")
            return real(*a, **k)
        with patched(subprocess, "Popen", busy_twice):
            self.assertEqual(running.run_binary(bin_dir / "demo", [])["stdout"], "hi\n")
        self.assertEqual(len(tries), 3)
        with patched(subprocess, "Popen", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.ETXTBSY, "Text file busy"))):
            with self.assertRaises(running.SuiteError):
                running.run_binary(bin_dir / "demo", [])

    def test_without_cmake_on_path(self):
        with tempfile.TemporaryDirectory() as tmp, env(PATH=fake_path_with(tmp, {})):
            status, _, err = self.main("run", "demo")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("cmake is not on PATH", err)


class TestGpuDetection(unittest.TestCase):
    def detect(self, script, device_nodes):
        with tempfile.TemporaryDirectory() as tmp, env(PATH=fake_path_with(tmp, {"nvidia-smi": script} if script else {})), \
                patched(running.glob, "glob", lambda pattern: ["/dev/nvidia0"] if device_nodes else []):
            return running.detect_gpu()

    def test_no_nvidia_smi_no_device_is_no_gpu(self):
        self.assertIsNone(self.detect(None, False))

    def test_no_devices_found_is_no_gpu(self):
        self.assertIsNone(self.detect('echo "No devices were found"; exit 6', False))

    def test_a_gpu(self):
        facts = self.detect('echo "NVIDIA H200"', True)
        self.assertEqual((facts.name, facts.slug), ("NVIDIA H200", "h200"))

    def test_broken_driver_is_a_failure_not_a_skip(self):
        with self.assertRaises(running.DriverError) as ctx:
            self.detect('echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver"; exit 9', True)
        self.assertEqual(ctx.exception.code, EXIT_FAIL)
        self.assertIn("driver fails", str(ctx.exception))


class TestCliCase(Scratch):
    def run_row(self, script, row, has_gpu=False):
        bin_dir = self.fake("demo", script)
        with patched(running, "gpu_present", lambda: has_gpu):
            return self.main("cli-case", "--bin", str(bin_dir / "demo"), "--row", row)

    def test_bad_option_with_one_line_and_usage(self):
        status, _, err = self.run_row('echo "error: -m expects an integer" >&2; echo "usage: demo" >&2; exit 2',
                                      "2 | -m | -m abc")
        self.assertEqual(status, EXIT_OK, err)

    def test_wrong_exit_code_fails(self):
        status, _, err = self.run_row('echo "error: -m bad" >&2; echo usage >&2; exit 1', "2 | -m | -m abc")
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("exit 1, expected 2", err)

    def test_message_must_name_the_option(self):
        status, _, err = self.run_row('echo "error: bad value" >&2; echo usage >&2; exit 2', "2 | -m | -m abc")
        self.assertIn("does not mention '-m'", err)

    def test_usage_must_follow(self):
        status, _, err = self.run_row('echo "error: -m bad" >&2; exit 2', "2 | -m | -m abc")
        self.assertIn("followed by the usage", err)

    def test_good_line_without_gpu(self):
        status, _, err = self.run_row('echo "no usable CUDA device: none" >&2; exit 77', "ok | - | -m 4", has_gpu=False)
        self.assertEqual(status, EXIT_OK, err)

    def test_good_line_skipping_on_a_gpu_machine_fails(self):
        status, _, err = self.run_row('echo "no usable CUDA device: none" >&2; exit 77', "ok | - | -m 4", has_gpu=True)
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("this machine has a GPU", err)

    def test_good_line_that_runs(self):
        status, _, err = self.run_row('echo "GPU: x"', "ok | - | -m 4", has_gpu=True)
        self.assertEqual(status, EXIT_OK, err)

    def test_help_prints_usage_on_stdout(self):
        status, _, err = self.run_row('echo "usage: demo [-m M]"', "0 |  | -h")
        self.assertEqual(status, EXIT_OK, err)

    def test_help_on_stderr_fails(self):
        status, _, err = self.run_row('echo "usage: demo" >&2', "0 |  | -h")
        self.assertIn("usage on stdout", err)

    def test_failing_row_needs_text(self):
        status, _, err = self.run_row("exit 2", "2 |  | -m abc")
        self.assertEqual(status, EXIT_USAGE)

    def test_unterminated_quote_in_a_row(self):
        status, _, err = self.run_row("exit 0", "2 | -m | -m 'abc")
        self.assertOneLineError(status, err, EXIT_USAGE)
        self.assertIn("cannot split the row's arguments", err)

    def test_malformed_row(self):
        status, _, err = self.run_row("exit 0", "two | -m")
        self.assertEqual(status, EXIT_USAGE)


if __name__ == "__main__":
    unittest.main()
