"""Tests of suitelib.transcripts: masking by line kind, the one comparison, and the recorded
transcripts of every lesson rewritten as if run on other GPUs (T4, RTX 4090, A100)."""

import contextlib
import io
import re
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, as_printed, real_transcripts
from suitelib import cli
from suitelib.transcripts import compare, gpu_of, mask, mask_line, mask_lines

H200 = "NVIDIA H200"


class TestMasking(unittest.TestCase):
    def test_volatile_values_become_placeholders(self):
        line = "f32 tiled     4.582e-06   0.0348     0.0099 ms   1.08x   3971.2 GFLOP/s  992.9 GB/s"
        self.assertEqual(mask_line(line),
                         "f32 tiled     4.582e-06   0.0348 [MS] ms [SPEEDUP]x [GFLOPS] GFLOP/s [GBS] GB/s")

    def test_microseconds_are_masked(self):
        self.assertEqual(mask_line("launch 12.5 us"), "launch [US] us")

    def test_alignment_differences_vanish(self):
        self.assertEqual(mask_line("t   0.0099 ms"), mask_line("t  12.3456 ms"))

    def test_deterministic_numbers_stay(self):
        for line in ("gain 40.45 times", "tile 16x16 on 2048x2048x2048", "max err 1.907e-05",
                     "occupancy 75%", "refMax 6.6744"):
            self.assertEqual(mask_line(line), line)

    def test_percent_of_measured_is_masked(self):
        self.assertEqual(mask_line("reached 20.7% of measured peak"), "reached [PCT]% of measured peak")

    def test_csv_columns_by_name(self):
        text = "kernel,size,ms,gflops,check\nnaive,128,0.0100,403.1,PASS\n# note 1.5 ms\n"
        self.assertEqual(mask(text), "kernel,size,ms,gflops,check\nnaive,128,[VAR],[VAR],PASS\n# note [MS] ms\n")

    def test_csv_without_volatile_columns_is_exact(self):
        text = "format,max,rms\nint8,3.937e-3,2.273e-3\n"
        self.assertEqual(mask(text), text)


class TestDeviceFacts(unittest.TestCase):
    def test_inline_device_units_masked_only_as_device_facts(self):
        line = "  1  128/8/1   40 regs, 16 B local   12 blocks/SM   75.0% occupancy  limited by registers"
        self.assertEqual(mask_line(line), line)
        self.assertEqual(mask_line(line, device=True),
                         "  1  128/8/1 [REGS] regs, [LOCAL] B local [BLOCKS] blocks/SM [OCC]% occupancy  limited by [LIMIT]")
        # Only a count of bytes followed by "B local" is a device fact; other byte counts are results.
        self.assertEqual(mask_line("  24960 B shared memory, 0 B locals", device=True),
                         "  24960 B shared memory, 0 B locals")

    def test_gpu_and_device_lines_masked_whole(self):
        self.assertEqual(mask_line("GPU: Tesla T4 (compute capability 7.5)", True), "GPU: [DEVICE]")
        self.assertEqual(mask_line("  [device] 40 SMs, 4 MiB L2", True), "  [device] [DEVICE]")
        self.assertEqual(mask_line("# GPU: NVIDIA H200 (compute capability 9.0), 132 SMs", True), "# GPU: [DEVICE]")
        self.assertEqual(mask_line("# [device] 60 MiB L2", True), "# [device] [DEVICE]")

    def test_measured_lines_masked_whole_always(self):
        line = "  [measured]  1= 256/16/4  4096 B  55 regs  50.0% occupancy"
        self.assertEqual(mask_line(line), "  [measured] [MEASURED]")
        self.assertEqual(mask_line(line, device=True), "  [measured] [MEASURED]")
        # a measured line is a measurement, never a result that could decide a verdict
        self.assertEqual(mask_lines(line)[0][1], {"measurement"})
        # the marker must open the line: a result line that merely mentions it stays a result
        self.assertEqual(mask_line("rank rule: see [measured] lines"), "rank rule: see [measured] lines")

    def test_device_csv_columns(self):
        csv = "device,point,regs,occupancy,ms\nH200,1,40,0.75,0.1\n"
        self.assertEqual(mask(csv), "device,point,regs,occupancy,ms\nH200,1,40,0.75,[VAR]\n")
        self.assertEqual(mask(csv, True), "device,point,regs,occupancy,ms\n[VAR],1,[VAR],[VAR],[VAR]\n")

    def test_gpu_of(self):
        self.assertEqual(gpu_of({"stdout": "GPU: Tesla T4 (compute capability 7.5)\nx\n"}), "Tesla T4")
        self.assertEqual(gpu_of({"stdout": "device,n,k\nNVIDIA A100,3,4\n"}), "NVIDIA A100")
        self.assertIsNone(gpu_of({"stdout": "hello\n"}))


def recording(stdout, stderr="", exit_code=0, gpu=H200):
    return {"stdout": stdout, "stderr": stderr, "exit_code": exit_code, "gpu": gpu}


class TestCompare(unittest.TestCase):
    OUT = "GPU: NVIDIA H200 (compute capability 9.0)\n[device] 132 SMs\nsum 42\nk 1.5 ms 40 regs\n"

    def test_same_gpu_compares_device_facts_exactly(self):
        got = self.OUT.replace("132 SMs", "131 SMs")
        cmp = compare(recording(self.OUT), {"stdout": got, "stderr": "", "exit_code": 0}, "demo")
        self.assertFalse(cmp.ok)
        self.assertIn("131 SMs", cmp.problems[0])

    def test_other_gpu_masks_device_facts_and_says_so(self):
        got = ("GPU: Tesla T4 (compute capability 7.5)\n[device] 40 SMs\nsum 42\nk 9.5 ms 64 regs\n")
        cmp = compare(recording(self.OUT), {"stdout": got, "stderr": "", "exit_code": 0}, "demo")
        self.assertTrue(cmp.ok, cmp.problems)
        self.assertEqual(cmp.notes, ["3 device-fact lines not compared: recorded on NVIDIA H200, this is Tesla T4"])

    def test_result_line_names_the_line(self):
        got = self.OUT.replace("sum 42", "sum 43")
        cmp = compare(recording(self.OUT), {"stdout": got, "stderr": "", "exit_code": 0}, "demo")
        self.assertIn("line 3 of stdout: the recording has 'sum 42', this output has 'sum 43'", cmp.problems[0])

    def test_stderr_is_compared(self):
        cmp = compare(recording("x\n", "GATE: x\n"), {"stdout": "x\n", "stderr": "", "exit_code": 0}, "demo")
        self.assertIn("stderr differs", cmp.problems[0])

    def test_exit_code_is_compared(self):
        cmp = compare(recording("x\n"), {"stdout": "x\n", "stderr": "", "exit_code": 1}, "demo")
        self.assertIn("exit code 1, the recording says 0", cmp.problems[0])

    def test_dropped_lines_and_counts(self):
        cmp = compare(recording("note: mine\nsum 42\nt 1 ms\n"), {"stdout": "note: yours\nsum 42\nt 2 ms\n",
                                                                  "stderr": "", "exit_code": 0}, "x", device=False,
                      drop=[r"^note: "])
        self.assertTrue(cmp.ok)
        self.assertEqual((cmp.result_lines, cmp.worded_lines, cmp.measurement_lines), (2, 1, 1))

    def test_a_csv_row_with_device_cells_is_still_a_result_line(self):
        # sweep -csv: 27 rows whose kernel, sizes and checks are compared, beside occupancy and registers.
        path = REPO / "expected/h200/sweep@csv_m_200_n_130_k_70_iters_3.txt"
        from suitelib.transcripts import parse_transcript
        rec = parse_transcript(path)
        cmp = compare(rec, {"stdout": rec["stdout"], "stderr": rec["stderr"], "exit_code": rec["exit_code"]},
                      "sweep", device=True)
        rows = sum(1 for line in rec["stdout"].splitlines() if line and not line.startswith("#")) - 1
        self.assertTrue(cmp.ok)
        self.assertGreaterEqual(rows, 27)
        self.assertGreaterEqual(cmp.result_lines, rows, "each CSV row's compared cells count as a result line")
        self.assertGreaterEqual(cmp.device_lines, rows)


# --- the recorded transcripts rewritten as if run on another GPU ------------------------------
GPUS = {
    "T4": ("Tesla T4", "7.5", {"SMs": 40, "MiB L2": 4, "KiB": 64, "threads/SM": 1024, "GB": 16}),
    "RTX 4090": ("NVIDIA GeForce RTX 4090", "8.9", {"SMs": 128, "MiB L2": 72, "KiB": 100, "threads/SM": 1536, "GB": 24}),
    "A100": ("NVIDIA A100-SXM4-80GB", "8.0", {"SMs": 108, "MiB L2": 40, "KiB": 164, "threads/SM": 2048, "GB": 80}),
}
GPUS_BY_NAME = {name: facts for name, _, facts in GPUS.values()}


def device_line_on(line, facts, seed):
    """A [device] line with the GPU's own figures where a unit names them, other numbers changed."""
    marked = line
    for unit, value in facts.items():
        marked = re.sub(r"\d+(?:\.\d+)? " + re.escape(unit), f"@{value}@ {unit}", marked)
    parts = re.split(r"(@\d+@)", marked)
    return "".join(p.strip("@") if re.fullmatch(r"@\d+@", p) else other_digits(p, seed) for p in parts)


GPU_LINE = re.compile(r"^(\s*(?:#\s*)?)GPU: .*$")
DEVICE_LINE = re.compile(r"^(\s*(?:#\s*)?)\[device\].*$")


def other_digits(text, seed):
    """Every number of a device fact changed, deterministically (a different GPU's values)."""
    return re.sub(r"(?<![A-Za-z])\d+", lambda m: str(int(m.group(0)) * 3 + 1 + seed), text)


def rewrite_line(line, name, cc, seed):
    if GPU_LINE.match(line):
        return GPU_LINE.sub(lambda m: f"{m.group(1)}GPU: {name} (compute capability {cc})" + line.split(")", 1)[1]
                            if ")" in line else f"{m.group(1)}GPU: {name} (compute capability {cc})", line)
    if DEVICE_LINE.match(line):
        return device_line_on(line, GPUS_BY_NAME[name], seed)
    for pattern in (r"\d+ regs", r"\d+ blocks/SM", r"[\d.]+% occupancy"):
        line = re.sub(pattern, lambda m: other_digits(m.group(0), seed), line)
    return re.sub(r"limited by [a-z][a-z -]*[a-z]", "limited by shared memory", line)


def rewrite_csv(lines, name, seed):
    out, header = [], None
    for line in lines:
        cols = line.split(",")
        if len(cols) > 2 and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", cols[0]) and all(re.match(r"^[A-Za-z_]\w*$", c) for c in cols):
            header = cols
        elif header and len(cols) == len(header) and not line.startswith("#"):
            cols = [name if h == "device" else other_digits(c, seed) if h in ("regs", "blocks_per_sm") else
                    "0.1234" if h == "occupancy" else "threads" if h == "limited_by" else c for h, c in zip(header, cols)]
            line = ",".join(cols)
        out.append(line)
    return out


def as_if_on(info, gpu, seed=1):
    """A transcript's output as another GPU would print it (device facts changed, results kept)."""
    name, cc, _ = GPUS[gpu]
    result = {"exit_code": info["exit_code"]}
    for stream in ("stdout", "stderr"):
        lines = [rewrite_line(line, name, cc, seed) for line in info[stream].splitlines()]
        result[stream] = "\n".join(rewrite_csv(lines, name, seed)) + ("\n" if lines else "")
    return result


def result_line_index(info):
    """The index of a stdout line that is a RESULT line with a digit (None if there is none)."""
    masked = mask(info["stdout"], device=True).splitlines()
    for i, line in enumerate(masked):
        if re.search(r"\d", re.sub(r"\[[A-Z]+\]", "", line)) and not line.startswith("#") and "[VAR]" not in line:
            return i
    return None


def change_one_digit(text, index):
    lines = text.splitlines()
    line = lines[index]
    m = [m for m in re.finditer(r"\d", line) if not re.search(r"\[[A-Z]+\]", line[max(0, m.start() - 8):m.start() + 8])]
    k = m[-1].start()
    lines[index] = line[:k] + str((int(line[k]) + 1) % 10) + line[k + 1:]
    return "\n".join(lines) + "\n", lines[index]


class TestCrossGpu(unittest.TestCase):
    def test_device_line_rewriting(self):
        line = "[device] 132 SMs, 60 MiB L2, 227 KiB shared memory per block, 2048 threads/SM, sm_90"
        self.assertEqual(device_line_on(line, GPUS["T4"][2], 1),
                         "[device] 40 SMs, 4 MiB L2, 64 KiB shared memory per block, 1024 threads/SM, sm_272")

    """Every recorded transcript (any lesson, any run) compared as if printed on a T4, an RTX 4090, an A100."""

    def setUp(self):
        self.recorded = real_transcripts()
        self.assertTrue(self.recorded, "no recorded transcripts")

    def test_other_gpus_are_accepted(self):
        for rel, info in self.recorded.items():
            for gpu in GPUS:
                with self.subTest(transcript=rel, gpu=gpu):
                    cmp = compare(info, as_if_on(info, gpu), rel)
                    self.assertTrue(cmp.ok, "\n".join(cmp.problems))
                    if "GPU:" in info["stdout"]:
                        self.assertTrue(cmp.notes and re.search(r"device-fact lines? not compared: recorded on ", cmp.notes[0])
                                        and GPUS[gpu][0] in cmp.notes[0], cmp.notes)

    def test_one_changed_result_digit_is_rejected_naming_the_line(self):
        for rel, info in self.recorded.items():
            index = result_line_index(info)
            if index is None:
                continue
            for gpu in GPUS:
                with self.subTest(transcript=rel, gpu=gpu):
                    result = as_if_on(info, gpu)
                    result["stdout"], changed = change_one_digit(result["stdout"], index)
                    cmp = compare(info, result, rel)
                    self.assertFalse(cmp.ok, f"a changed result digit passed: {changed}")
                    self.assertIn(f"line {index + 1} of stdout", cmp.problems[0])

    def test_the_compare_command_on_every_lessons_first_run(self):
        for rel, info in self.recorded.items():
            if "/" in rel or "@" in rel:
                continue
            for gpu in GPUS:
                with self.subTest(lesson=rel, gpu=gpu), tempfile.TemporaryDirectory() as tmp:
                    result = as_if_on(info, gpu)
                    out, err = Path(tmp) / "out.txt", Path(tmp) / "err.txt"
                    out.write_text(as_printed(result["stdout"]))
                    err.write_text(as_printed(result["stderr"]))
                    argv = ["--root", str(REPO), "compare", rel[:-4], "--stdout", str(out), "--stderr", str(err),
                            "--exit-code", str(result["exit_code"])]
                    text = io.StringIO()
                    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                        status = cli.main(argv)
                    self.assertEqual(status, 0, text.getvalue())
                    self.assertIn(f"this is {GPUS[gpu][0]}", text.getvalue())

    def test_the_same_gpu_compares_device_facts(self):
        for rel, info in self.recorded.items():
            if "[device]" not in info["stdout"]:
                continue
            with self.subTest(transcript=rel):
                result = as_if_on(info, "T4")
                result["stdout"] = result["stdout"].replace("Tesla T4", info["gpu"]).replace("7.5", "9.0", 1)
                self.assertFalse(compare(info, result, rel).ok)


if __name__ == "__main__":
    unittest.main()


class TestTranscriptFile(unittest.TestCase):
    def test_blank_lines_survive_a_round_trip(self):
        """A program whose output ends with a blank line (or holds several) reads back as printed."""
        from suitelib.model import all_runs
        from suitelib.transcripts import format_transcript, parse_transcript
        from helpers import MINI
        run = all_runs(MINI)[0]
        for stdout in ("a\n\n", "a\n\n\nb\n", "\n", ""):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "t.txt"
                path.write_text(format_transcript(run, "NVIDIA H200", "13.0",
                                                  {"stdout": stdout, "stderr": "e\n\n", "exit_code": 1}))
                info = parse_transcript(path)
                self.assertEqual(info["stdout"], stdout)
                self.assertEqual(info["stderr"], "e\n\n")
