"""Tests of suitelib.plots: bad input and output are one-line errors (no matplotlib needed);
the charts themselves (matplotlib needed: a CTest skip without it)."""

import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, needs_matplotlib
from suitelib import EXIT_FAIL, EXIT_OK, EXIT_USAGE, cli

ROOFLINE_CSV = """# GPU: Test GPU (compute capability 9.0), 132 SMs, 2048 threads/SM
# ceilings, measured on this device by this program (median of 7 launches each): bandwidth 4000.0 GB/s (a copy kernel); FP32 peak 50000.0 GFLOP/s (an FMA kernel)
kernel,m,n,k,check,cpu_elements,verdict,max_abs_err,xcheck_diff,err_frac,ms,min_ms,max_ms,gflops,pct_of_roof,model_load_gb,compulsory_gb,ai_model,ai_compulsory
naive,128,128,128,cpu,16384,PASS,1e-6,,0.1,0.01,0.01,0.01,400.0,1.0,0.01,0.0002,0.25,21.33
tiled,128,128,128,cpu,16384,PASS,1e-6,,0.1,0.01,0.01,0.01,500.0,1.0,0.01,0.0002,4.0,21.33
naive,2048,2048,2048,cpu-rows,16384,PASS,1e-6,,0.1,3.0,3.0,3.0,5400.0,1.0,0.01,0.05,0.25,341.33
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
        self.assertIn("all under both roofs", text)
        self.assertPng(out)

    def test_roofline_with_anchors(self):
        (self.dir / "anchors.csv").write_text(ANCHORS_CSV)
        status, out, text = self.plot("roofline", ROOFLINE_CSV)
        self.assertEqual(status, EXIT_OK, text)
        self.assertIn("3 anchor points", text)

    def test_point_above_a_roof_fails(self):
        status, _, text = self.plot("roofline", ROOFLINE_CSV.replace(",8100.0,", ",90000.0,"))
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("ABOVE a roof", text)

    def test_sweep_bar_chart(self):
        status, out, text = self.plot("sweep", SWEEP_CSV)
        self.assertEqual(status, EXIT_OK, text)
        self.assertIn("3 ranked points", text)
        self.assertPng(out, 5000)

    def test_recorded_h200_csvs_render(self):
        data = REPO / "expected/h200/data"
        for kind, name in (("roofline", "report_data.csv"), ("sweep", "sweep.csv")):
            status, out, text = self.plot(kind, csv_path=data / name)
            self.assertEqual(status, EXIT_OK, text)
            self.assertPng(out)


if __name__ == "__main__":
    unittest.main()
