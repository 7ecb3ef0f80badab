"""Tests of suitelib.plots: bad input and output are one-line errors (no matplotlib needed);
the recorded charts' hashes (no matplotlib needed); the charts themselves (matplotlib needed: a
CTest skip without it)."""

import contextlib
import hashlib
import io
import json
import os
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, needs_matplotlib
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_USAGE, cli, plots

# The comment lines and columns report_data prints (lessons/report_data.cu, printPreamble).
ROOFLINE_CSV = """# GPU: Test GPU (compute capability 9.0)
# ceilings, measured here: bandwidth 4000.0 GB/s (copy kernel), FP32 peak 50000.0 GFLOP/s (FMA kernel), shared-memory loads 32000.0 GB/s (shared-load kernel); roof(AI) = min(FP32 peak, AI x bandwidth) and, for a kernel that loads L words of 4 bytes from shared memory per FMA, shared-memory GB/s x 2 / (4 L): 8000.0 GFLOP/s for tiled's L = 2
# [device] 60 MiB L2: A, B and C (12 n^2 bytes) fit in it up to n = 2289; ridge point = FP32 bound / DRAM bound = 13.90 FLOP/B
# [device] shared-memory bound 132 SMs x 32 banks x 4 bytes x 1980 MHz = 33454.1 GB/s; tiled loads 2 words of 4 bytes from it per FMA (8 bytes for 2 FLOP): a roof of 8363.5 GFLOP/s = FP32 bound / 8.00; limited_by = the lowest roof
kernel,m,n,k,check,ref_elements,verdict,max_abs_err,xcheck_diff,ms,min_ms,max_ms,gflops,pct_of_roof,model_load_gb,compulsory_gb,ai_model,ai_compulsory,rtol,atol,xcheck_atol,pct_of_peak,speedup,smem_loads_per_fma,limited_by
naive,128,128,128,ref,16384,PASS,1e-6,,0.01,0.01,0.01,400.0,1.0,0.01,0.0002,0.25,21.33,1e-5,1e-6,,0.8,,0,FP32
tiled,128,128,128,ref,16384,PASS,1e-6,,0.01,0.01,0.01,500.0,1.0,0.01,0.0002,4.0,21.33,1e-5,1e-6,,1.0,1.25,2,shared memory
naive,2048,2048,2048,ref-rows+finite,65536,PASS,1e-6,,3.0,3.0,3.0,5400.0,1.0,0.01,0.05,0.25,341.33,2e-5,1e-6,,10.8,,0,FP32
tiled,2048,2048,2048,ref-rows+xcheck(naive),65536,PASS,1e-6,0,2.0,2.0,2.0,7900.0,1.0,0.01,0.05,4.0,341.33,2e-5,1e-6,1e-6,15.8,1.50,2,shared memory
"""
# The columns before the shared-memory roof (no smem_loads_per_fma): still charted.
OLD_ROOFLINE_CSV = """# GPU: Test GPU (compute capability 9.0), 132 SMs, 2048 threads/SM
# ceilings, measured on this device by this program (median of 7 launches each): bandwidth 4000.0 GB/s (a copy kernel); FP32 peak 50000.0 GFLOP/s (an FMA kernel)
kernel,m,n,k,check,cpu_elements,verdict,max_abs_err,xcheck_diff,err_frac,ms,min_ms,max_ms,gflops,pct_of_roof,model_load_gb,compulsory_gb,ai_model,ai_compulsory
naive,128,128,128,cpu,16384,PASS,1e-6,,0.1,0.01,0.01,0.01,400.0,1.0,0.01,0.0002,0.25,21.33
tiled,2048,2048,2048,cpu-rows,16384,PASS,1e-6,,0.1,2.0,2.0,2.0,8100.0,1.0,0.01,0.05,4.0,341.33
"""
SWEEP_CSV = """device,m,n,k,point,threads,tk,co,status,gflops,rank,tie
Test GPU,1024,1024,1024,1,128,8,1,PASS,1664.0,3,0
Test GPU,1024,1024,1024,2,256,32,4,PASS,7940.0,1,1
Test GPU,1024,1024,1024,3,256,16,4,PASS,7920.0,1,1
Test GPU,1024,1024,1024,4,512,8,2,FAIL,,,
"""
ANCHORS_CSV = "lesson,kernel,n,gflops,cublas_gflops,ratio\ngemm_ladder,tiled16,4096,8000,45000,0.18\ngemm_ladder,warp,4096,40000,45000,0.89\n"


class PlotCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-plot-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def plot(self, kind, csv_text=None, csv_path=None, out=None, data=None):
        path = csv_path or self.dir / "in.csv"
        if data is not None:
            path.write_bytes(data)
        elif csv_text is not None:
            path.write_text(csv_text)
        out = out or self.dir / (kind + ".png")
        so, se = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
            status = cli.main(["plot", kind, str(path), "--out", str(out)])
        return status, Path(out), so.getvalue() + se.getvalue()

    def assertOneLine(self, status, text, code):
        self.assertEqual(status, code, text)
        self.assertNotIn("Traceback", text)
        self.assertEqual(len(text.strip().splitlines()), 1, text)


class TestPlotErrors(PlotCase):
    def test_missing_csv(self):
        self.assertOneLine(*self.plot("roofline", csv_path=self.dir / "nope.csv")[::2], EXIT_USAGE)

    def test_directory_csv(self):
        self.assertOneLine(*self.plot("roofline", csv_path=self.dir)[::2], EXIT_USAGE)

    def test_non_utf8_csv(self):
        status, _, text = self.plot("roofline", data=b"kernel,n\n\xff\xfe,1\n")
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("not UTF-8", text)

    def test_malformed_csv(self):
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace(",400.0,", ",fast,"))
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("malformed CSV", text)

    def test_csv_without_ceilings_is_refused(self):
        status, _, text = self.plot("roofline", "\n".join(ROOFLINE_CSV.splitlines()[2:]) + "\n")
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("no measured bandwidth", text)

    def test_no_passing_point_exits_1(self):
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace(",PASS,", ",FAIL,"))
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("no passing, timed point", text)

    def test_unsupported_out(self):
        status, _, text = self.plot("sweep", SWEEP_CSV, out=self.dir / "chart.bmp")
        self.assertOneLine(status, text, EXIT_USAGE)
        self.assertIn("unsupported format", text)

    def test_unwritable_out(self):
        for out in (self.dir / "no/such/folder.png", self.dir):
            status, _, text = self.plot("sweep", SWEEP_CSV, out=out)
            self.assertOneLine(status, text, EXIT_USAGE)

    @unittest.skipIf(os.geteuid() == 0, "root can write anywhere")
    def test_read_only_folder(self):
        ro = self.dir / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        status, _, text = self.plot("sweep", SWEEP_CSV, out=ro / "x.png")
        ro.chmod(0o700)
        self.assertOneLine(status, text, EXIT_USAGE)

    def test_nan_cell_is_its_own_one_line_error(self):
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace(",5400.0,", ",nan,"))
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("in.csv:8: gflops = 'nan' is not a finite number", text)
        self.assertNotIn("cannot split", text)
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace("naive,2048,2048,2048", "naive,2048,nan,2048"))
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("n = 'nan' is not a finite number", text)
        status, _, text = self.plot("sweep", SWEEP_CSV.replace(",7940.0,", ",inf,"))
        self.assertOneLine(status, text, EXIT_FAIL)
        self.assertIn("gflops = 'inf' is not a finite number", text)

    def test_out_that_is_a_link_is_refused(self):
        """plot --out never writes through a symbolic link (dangling or not): refused before drawing."""
        victim = self.dir / "victim.png"
        victim.write_bytes(b"keep me")
        for target in (victim, self.dir / "nowhere.png"):
            link = self.dir / "chart.png"
            if os.path.lexists(link):
                link.unlink()
            link.symlink_to(target)
            status, _, text = self.plot("sweep", SWEEP_CSV, out=link)
            self.assertOneLine(status, text, EXIT_USAGE)
            self.assertIn("is a symbolic link", text)
        self.assertEqual(victim.read_bytes(), b"keep me")
        self.assertFalse((self.dir / "nowhere.png").exists())

    def test_without_matplotlib_it_names_the_interpreter_that_has_it(self):
        fake = self.dir / "python3-with-mpl"
        fake.write_text("#!/bin/sh\nexit 0\n")
        fake.chmod(0o755)
        lacking = self.dir / "python3-without"
        lacking.write_text("#!/bin/sh\nexit 1\n")
        lacking.chmod(0o755)
        found = plots.python_with_matplotlib([str(lacking), str(fake)])
        self.assertEqual(found, str(fake))
        self.assertIn(f"{fake} has it: run '{fake} scripts/suite.py plot ...'", plots.no_matplotlib_message(found))
        self.assertIsNone(plots.python_with_matplotlib([str(lacking)]))
        self.assertIn("installs python3-matplotlib for /usr/bin/python3", plots.no_matplotlib_message(None))

    def test_out_inside_expected_is_refused(self):
        suite = self.dir / "suite"
        for sub in ("lessons", "expected/h200/data"):
            (suite / sub).mkdir(parents=True)
        status, out, text = self.plot("sweep", SWEEP_CSV, out=suite / "expected/h200/data/sweep.png")
        self.assertOneLine(status, text, EXIT_USAGE)
        self.assertIn("inside a suite's expected/ folder", text)
        self.assertFalse(out.exists())
        (self.dir / "link").symlink_to(suite / "expected")  # a way in through a symlink
        status, _, text = self.plot("sweep", SWEEP_CSV, out=self.dir / "link/h200/x.png")
        self.assertOneLine(status, text, EXIT_USAGE)
        self.assertTrue(plots.inside_expected(REPO / "expected/h200/data/roofline.png"))
        self.assertFalse(plots.inside_expected(self.dir / "expected/roofline.png"), "no lessons/ beside it")


class TestRooflineData(PlotCase):
    """The CSV as plots reads it: no matplotlib needed."""

    def write(self, text, data=None):
        path = self.dir / "in.csv"
        if data is not None:
            path.write_bytes(data)
        else:
            path.write_text(text)
        return path

    def test_ceilings_and_the_shared_memory_roof(self):
        data = plots.roofline_points(self.write(ROOFLINE_CSV))
        self.assertEqual((data["bw_gbs"], data["peak_gflops"]), (4000.0, 50000.0))
        self.assertEqual((data["smem_gbs"], data["smem_bound_gbs"]), (32000.0, 33454.1))
        self.assertEqual(data["gpu"], "Test GPU")
        self.assertEqual([p["smem_loads"] for p in data["points"]], [0.0, 2.0, 0.0, 2.0])
        self.assertEqual(plots.smem_roof(32000.0, 2.0), 8000.0)
        self.assertIsNone(plots.smem_roof(32000.0, 0.0), "no shared-memory loads, no roof")
        self.assertEqual(plots.points_over_roof(data), [])

    def test_bom_and_crlf(self):
        data = b"\xef\xbb\xbf" + ROOFLINE_CSV.replace("\n", "\r\n").encode()
        got = plots.roofline_points(self.write(None, data))
        self.assertEqual(got, plots.roofline_points(self.write(ROOFLINE_CSV)))
        comments, rows = plots.read_csv_with_comments(self.write(None, data))
        self.assertTrue(comments[0].startswith("GPU: Test GPU"), comments[0])
        self.assertEqual(rows[0]["kernel"], "naive")
        self.assertEqual(rows[0]["_line"], 6)
        self.assertEqual(plots.sweep_points(self.write(None, b"\xef\xbb\xbf" + SWEEP_CSV.replace("\n", "\r\n").encode()))
                         ["points"][0][0], "256/32/4")

    def test_a_point_above_the_shared_memory_roof(self):
        # 8200 GFLOP/s: above the measured roof (8000), under the bound's (8363.5): a kernel at its roof.
        data = plots.roofline_points(self.write(ROOFLINE_CSV.replace(",7900.0,", ",8200.0,")))
        self.assertEqual(plots.points_over_roof(data), [])
        # 9000: above both, so the model (2 shared loads per FMA) is wrong.
        data = plots.roofline_points(self.write(ROOFLINE_CSV.replace(",7900.0,", ",9000.0,")))
        self.assertEqual([(p["kernel"], p["n"]) for p in plots.points_over_roof(data)], [("tiled", 2048)])
        # naive loads nothing from shared memory: only the DRAM and FP32 roofs hold it.
        data = plots.roofline_points(self.write(ROOFLINE_CSV.replace(",5400.0,", ",9000.0,")))
        self.assertEqual(plots.points_over_roof(data), [])

    def test_a_csv_without_the_shared_memory_columns(self):
        data = plots.roofline_points(self.write(OLD_ROOFLINE_CSV))
        self.assertIsNone(data["smem_gbs"])
        self.assertEqual([p["smem_loads"] for p in data["points"]], [0.0, 0.0])
        self.assertEqual(plots.points_over_roof(data), [])


class ChartSuite(PlotCase):
    """A suite folder with a course file that charts two recordings, and their CSVs."""

    def setUp(self):
        super().setUp()
        self.root = self.dir / "suite"
        self.data = self.root / "expected/h200/data"
        self.data.mkdir(parents=True)
        for name in ("report_data", "sweep"):
            (self.root / "lessons").mkdir(exist_ok=True)
            (self.root / "lessons" / (name + ".cu")).write_text("// a lesson\n")
        (self.root / "scripts").mkdir()
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "sweep", "day": "final", "teaches": "x",
             "data": [{"args": ["-csv"], "file": "sweep.csv", "chart": "sweep", "image": "sweep.png"}]},
            {"name": "report_data", "day": "final", "teaches": "y",
             "data": [{"args": [], "file": "report_data.csv", "chart": "roofline", "image": "roofline.png"}]}]}))
        (self.data / "report_data.csv").write_text(ROOFLINE_CSV)
        (self.data / "sweep.csv").write_text(SWEEP_CSV)
        (self.data / "anchors.csv").write_text(ANCHORS_CSV)

    def fake_charts(self):
        """Charts and a charts.json as record_charts writes them, without drawing."""
        charts = {}
        for image, sources in (("roofline.png", ("report_data.csv", "anchors.csv")), ("sweep.png", ("sweep.csv",))):
            (self.data / image).write_bytes(b"\x89PNG fake " + image.encode())
            charts[image] = {"from": sources[0], "kind": "x", "sha256": plots.sha256(self.data / image),
                             "inputs": {name: plots.sha256(self.data / name) for name in sources}}
        (self.data / "charts.json").write_text(json.dumps({"charts": charts}, indent=2))


class TestCheckCharts(ChartSuite):
    """check_charts compares hashes; it needs no matplotlib."""

    def test_recorded_charts_pass(self):
        self.fake_charts()
        self.assertEqual(plots.check_charts(self.root, "h200"), [])

    def test_a_replaced_chart_is_named_with_its_line(self):
        self.fake_charts()
        (self.data / "sweep.png").write_bytes(b"\x89PNG drawn by hand")
        problems = plots.check_charts(self.root, "h200")
        self.assertEqual(len(problems), 1, problems)
        self.assertRegex(problems[0], r"^expected/h200/data/sweep\.png:1: sha256 [0-9a-f]{12}\.\.\. differs "
                                      r"from the [0-9a-f]{12}\.\.\. that expected/h200/data/charts\.json:\d+ records")

    def test_a_chart_of_a_changed_csv(self):
        self.fake_charts()
        (self.data / "report_data.csv").write_text(ROOFLINE_CSV.replace("7900.0", "7000.0"))
        problems = plots.check_charts(self.root, "h200")
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("roofline.png:1: drawn from another report_data.csv", problems[0])

    def test_a_chart_of_changed_anchors(self):
        """The roofline draws anchors.csv too: a newer one makes it stale, and so does one that is gone."""
        self.fake_charts()
        self.assertEqual([p.name for p in plots.chart_inputs("roofline", self.data / "report_data.csv")],
                         ["report_data.csv", "anchors.csv"])
        (self.data / "anchors.csv").write_text(ANCHORS_CSV.replace("40000", "41000"))
        problems = plots.check_charts(self.root, "h200")
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("roofline.png:1: drawn from another anchors.csv than the one recorded now", problems[0])
        (self.data / "anchors.csv").unlink()
        self.assertIn("drawn from another anchors.csv", plots.check_charts(self.root, "h200")[0])

    def test_a_record_from_before_the_anchors_were_keyed(self):
        """A charts.json entry that hashed only the CSV cannot vouch for the anchors drawn beside it."""
        self.fake_charts()
        record = json.loads((self.data / "charts.json").read_text())
        for entry in record["charts"].values():
            entry["from_sha256"] = entry.pop("inputs")[entry["from"]]
        (self.data / "charts.json").write_text(json.dumps(record))
        problems = plots.check_charts(self.root, "h200")
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("roofline.png:1: drawn from another anchors.csv", problems[0])

    def test_missing_record_chart_or_malformed_record(self):
        self.assertEqual(plots.check_charts(self.root, "h200"),
                         ["expected/h200/data/charts.json:1: missing: the recorded charts' hashes "
                          "(draw them with record_charts)"])
        self.fake_charts()
        (self.data / "roofline.png").unlink()
        self.assertIn("roofline.png:1: missing", plots.check_charts(self.root, "h200")[0])
        (self.data / "charts.json").write_text("{not json")
        self.assertIn("charts.json:1: malformed charts record", plots.check_charts(self.root, "h200")[0])

    def test_no_charted_recording_no_problem(self):
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": []}))
        self.assertEqual(plots.check_charts(self.root, "h200"), [])


@needs_matplotlib
class TestPlot(PlotCase):
    def assertPng(self, path, min_bytes=10000):
        data = path.read_bytes()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", "not a PNG file")
        self.assertGreater(len(data), min_bytes, "implausibly small PNG")
        self.assertGreater(int.from_bytes(data[16:20], "big"), 400)

    def test_roofline_png(self):
        status, out, text = self.plot("roofline", ROOFLINE_CSV)
        self.assertEqual(status, EXIT_OK, text)
        self.assertIn("all under every roof", text)
        self.assertPng(out)

    def test_roofline_with_anchors(self):
        (self.dir / "anchors.csv").write_text(ANCHORS_CSV)
        status, out, text = self.plot("roofline", ROOFLINE_CSV)
        self.assertEqual(status, EXIT_OK, text)
        self.assertIn("3 anchor points", text)

    def test_point_above_a_roof_fails(self):
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace(",7900.0,", ",90000.0,"))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("ABOVE a roof", text)

    def test_sweep_bar_chart(self):
        status, out, text = self.plot("sweep", SWEEP_CSV)
        self.assertEqual(status, EXIT_OK, text)
        self.assertIn("3 ranked points", text)
        self.assertPng(out, 5000)

    def test_roofline_of_the_older_csv(self):
        status, out, text = self.plot("roofline", OLD_ROOFLINE_CSV)
        self.assertEqual(status, EXIT_OK, text)
        self.assertPng(out)

    def test_bom_crlf_csv_renders(self):
        status, out, text = self.plot("roofline", data=b"\xef\xbb\xbf" + ROOFLINE_CSV.replace("\n", "\r\n").encode())
        self.assertEqual(status, EXIT_OK, text)
        self.assertPng(out)

    def test_recorded_h200_csvs_render(self):
        data = REPO / "expected/h200/data"
        for kind, name in (("roofline", "report_data.csv"), ("sweep", "sweep.csv")):
            status, out, text = self.plot(kind, csv_path=data / name)
            self.assertEqual(status, EXIT_OK, text)
            self.assertPng(out)


@needs_matplotlib
class TestRecordCharts(ChartSuite):
    def test_record_then_check(self):
        lines = plots.record_charts(self.root, "h200")
        self.assertEqual(len(lines), 3, lines)
        self.assertTrue(lines[-1].startswith("wrote expected/h200/data/charts.json: 2 charts"), lines)
        record = json.loads((self.data / "charts.json").read_text())["charts"]
        self.assertEqual(sorted(record), ["roofline.png", "sweep.png"])
        self.assertEqual(record["roofline.png"]["sha256"],
                         hashlib.sha256((self.data / "roofline.png").read_bytes()).hexdigest())
        self.assertEqual(sorted(record["roofline.png"]["inputs"]), ["anchors.csv", "report_data.csv"])
        self.assertEqual(sorted(record["sweep.png"]["inputs"]), ["sweep.csv"])
        self.assertEqual(plots.check_charts(self.root, "h200"), [])
        first = (self.data / "roofline.png").read_bytes()
        plots.record_charts(self.root, "h200")
        self.assertEqual((self.data / "roofline.png").read_bytes(), first, "the same CSV draws the same bytes")
        (self.data / "roofline.png").write_bytes(first + b"x")
        self.assertEqual(len(plots.check_charts(self.root, "h200")), 1)

    def test_a_missing_csv_is_one_error(self):
        (self.data / "sweep.csv").unlink()
        with self.assertRaises(plots.SuiteError) as err:
            plots.record_charts(self.root, "h200")
        self.assertIn("sweep.csv: no recorded CSV", str(err.exception))


if __name__ == "__main__":
    unittest.main()
