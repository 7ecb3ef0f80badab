"""Charts (the only module that imports matplotlib, and only inside the render functions): a
report_data CSV as a measured roofline (with gemm_ladder steps and cuBLAS from anchors.csv), a
sweep CSV as a ranked bar chart. Input and output are checked before matplotlib is imported.

The recorded charts (expected/<gpu>/data/*.png) are drawn only by record_charts, which also writes
their sha256 to charts.json; check_charts compares those hashes without re-rendering (the GPU
machine may have no matplotlib). `plot --out` refuses a path inside a suite's expected/ folder, and
never writes through a symbolic link (the image is drawn in memory, then replaces the file)."""

import csv
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, SuiteError, UsageError, read_text, refuse_link, write_file
from .model import data_recordings
from .transcripts import NUM

FORMATS = (".png", ".svg", ".pdf")
CHARTS_JSON = "charts.json"
# The report_data CSV's comment lines (lessons/report_data.cu, printPreamble): the measured ceilings
# on the `# ceilings` line, the shared-memory bound on a `# [device]` line.
BANDWIDTH_RE = re.compile(r"bandwidth (" + NUM + r") GB/s")
PEAK_RE = re.compile(r"FP32 peak (" + NUM + r") GFLOP/s")
SMEM_RE = re.compile(r"shared-memory loads (" + NUM + r") GB/s")
SMEM_BOUND_RE = re.compile(r"shared-memory bound [^;]*?= (" + NUM + r") GB/s")
GPU_RE = re.compile(r"GPU: ([^(]+?) \(")


def read_csv_with_comments(path):
    """(comment lines, rows as dicts) of a CSV whose comments start with '#'. A byte-order mark and
    CRLF line ends are accepted; each row's "_line" is its line number in the file."""
    lines = read_text(path, "CSV file").lstrip("\ufeff").splitlines()
    comments = [line[1:].strip() for line in lines if line.startswith("#")]
    data = [(no, line) for no, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    try:
        rows = list(csv.DictReader(io.StringIO("\n".join(line for _, line in data))))
    except csv.Error as exc:
        raise SuiteError(f"{path}: malformed CSV: {exc}")
    if not rows:
        raise SuiteError(f"{path}: no CSV rows")
    for row, (no, _) in zip(rows, data[1:]):
        row["_line"] = no
    return comments, rows


def need_columns(path, rows, columns):
    for column in columns:
        if column not in rows[0]:
            raise SuiteError(f"{path}: malformed CSV: no column {column!r}")


def number(path, row, column):
    """A finite number from one cell; NaN, infinity or text is a one-line error naming the cell."""
    where = f"{path}:{row.get('_line', '?')}"
    try:
        value = float(row[column])
    except (TypeError, ValueError):
        raise SuiteError(f"{where}: malformed CSV: {column} = {row.get(column)!r} is not a number")
    if not math.isfinite(value):
        raise SuiteError(f"{where}: {column} = {row[column]!r} is not a finite number: a chart cannot place it")
    return value


def found(regex, text):
    m = regex.search(text)
    return float(m.group(1)) if m else None


def roofline_points(path):
    """Ceilings and the timed, passing points of a report_data CSV."""
    comments, rows = read_csv_with_comments(path)
    text = " ".join(comments)
    bw, peak, gpu = found(BANDWIDTH_RE, text), found(PEAK_RE, text), GPU_RE.search(text)
    if bw is None or peak is None:
        raise SuiteError(f"{path}: the comment lines carry no measured bandwidth / FP32 peak")
    if not all(math.isfinite(v) and v > 0 for v in (bw, peak)):
        raise SuiteError(f"{path}: the measured bandwidth / FP32 peak must be positive")
    need_columns(path, rows, ("kernel", "n", "verdict", "gflops", "ai_compulsory"))
    points = [{"kernel": r["kernel"], "n": int(number(path, r, "n")), "ai": number(path, r, "ai_compulsory"),
               "ai_model": number(path, r, "ai_model") if r.get("ai_model") not in (None, "") else None,
               "smem_loads": number(path, r, "smem_loads_per_fma") if r.get("smem_loads_per_fma") not in (None, "") else 0.0,
               "gflops": number(path, r, "gflops")}
              for r in rows if r["verdict"] == "PASS" and r["gflops"] not in ("", "n/a")]
    if not points:
        raise SuiteError(f"{path}: no passing, timed point to chart")
    return {"gpu": gpu.group(1).strip() if gpu else "GPU", "bw_gbs": bw, "peak_gflops": peak,
            "smem_gbs": found(SMEM_RE, text), "smem_bound_gbs": found(SMEM_BOUND_RE, text),
            "points": points, "anchors": []}


def smem_roof(gbs, loads):
    """GFLOP/s that shared memory delivering gbs feeds when each FMA (2 FLOP) loads `loads` words of 4 bytes."""
    return gbs * 2.0 / (4.0 * loads) if gbs and loads > 0 else None


def anchor_points(path):
    """gemm_ladder steps and cuBLAS points from anchors.csv, at the compulsory intensity n/6."""
    _, rows = read_csv_with_comments(path)
    need_columns(path, rows, ("lesson", "kernel", "n", "gflops", "cublas_gflops"))
    pts, cublas = [], {}
    for r in rows:
        n = int(number(path, r, "n"))
        if r["lesson"] == "gemm_ladder":
            pts.append({"kernel": r["kernel"], "n": n, "ai": n / 6.0, "gflops": number(path, r, "gflops")})
        cublas[n] = number(path, r, "cublas_gflops")
    return pts + [{"kernel": "cuBLAS", "n": n, "ai": n / 6.0, "gflops": g} for n, g in sorted(cublas.items())]


def points_over_roof(data):
    """Points above a roof, which a roofline cannot have: min(peak, AI x bandwidth), and for a point
    that loads from shared memory its shared-memory roof. That roof is taken as the higher of the
    measured one and the one from the attribute bound: the kernel and the shared-load kernel are
    timed apart and can both sit at it, so only a point above both says the load model is wrong."""
    over = []
    for p in data["points"]:
        roof = min(data["peak_gflops"], p["ai"] * data["bw_gbs"])
        smem = [r for r in (smem_roof(data.get("smem_gbs"), p.get("smem_loads", 0.0)),
                            smem_roof(data.get("smem_bound_gbs"), p.get("smem_loads", 0.0))) if r]
        if smem:
            roof = min(roof, max(smem))
        if p["gflops"] > roof * 1.0001:
            over.append(p)
    return over


def check_out(out):
    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise UsageError(f"--out {out}: unsupported format {out.suffix or '(none)'!r} (use {', '.join(FORMATS)})")
    if inside_expected(out):
        raise UsageError(f"--out {out}: inside a suite's expected/ folder, where only the GPU recording "
                         f"writes (recorded charts are drawn by record_charts); choose another path")
    refuse_link(out, "--out")
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"--out {out}: cannot write there (no such folder, a folder, or not writable)")


def inside_expected(out):
    """Is out (symlinks resolved) under the expected/ folder of a suite (a folder beside lessons/)?"""
    for folder in Path(os.path.realpath(Path(out).absolute())).parents:
        if folder.name == "expected" and (folder.parent / "lessons").is_dir():
            return True
    return False


def python_with_matplotlib(candidates=None):
    """Another interpreter here that can import matplotlib (the python3 on PATH, then /usr/bin/python3,
    where Debian's python3-matplotlib goes), or None."""
    here = os.path.realpath(sys.executable)
    for candidate in candidates or (shutil.which("python3"), "/usr/bin/python3"):
        if not candidate or not os.access(candidate, os.X_OK) or os.path.realpath(candidate) == here:
            continue
        try:
            done = subprocess.run([candidate, "-c", "import matplotlib"], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return candidate
    return None


def no_matplotlib_message(other):
    """The one line of a plot without matplotlib: which interpreter has it, or how to get it."""
    if other:
        return (f"plot needs matplotlib, which this python ({sys.executable}) lacks; {other} has it: run "
                f"'{other} scripts/suite.py plot ...'")
    return (f"plot needs matplotlib, which no python here has (this one: {sys.executable}): "
            f"scripts/install-deps.sh installs python3-matplotlib for /usr/bin/python3 where apt-get can, "
            f"then run '/usr/bin/python3 scripts/suite.py plot ...' (or: pip install matplotlib)")


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SuiteError(no_matplotlib_message(python_with_matplotlib()))
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, plt, out):
    """Draw the figure in memory, then write it as a new file (never through a symbolic link)."""
    suffix = Path(out).suffix.lower()
    try:
        image = io.BytesIO()
        # No date or version in the file: the same CSV and matplotlib draw the same bytes.
        fig.savefig(image, format=suffix[1:], metadata={"Software": None} if suffix == ".png" else None)
        write_file(out, image.getvalue(), "--out")
    except (OSError, ValueError) as exc:
        raise UsageError(f"--out {out}: cannot write it ({exc})")
    finally:
        plt.close(fig)


def render_roofline(data, out):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10.5 if data["anchors"] else 8, 5.5), dpi=120)
    pts = data["points"] + data["anchors"]
    ais = [p["ai"] for p in pts] + [p["ai_model"] for p in data["points"] if p["ai_model"]]
    lo, hi = min(ais + [1.0]) / 4, max(ais + [data["peak_gflops"] / data["bw_gbs"]]) * 4
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(data["peak_gflops"], x * data["bw_gbs"]) for x in xs], "k-", lw=2,
            label=f"roof: min({data['peak_gflops']:.0f} GFLOP/s, AI x {data['bw_gbs']:.0f} GB/s), measured")
    ax.axhline(data["peak_gflops"], color="gray", ls="--", lw=1, label="FP32 peak (measured FMA kernel)")
    lows = []
    for loads in sorted({p["smem_loads"] for p in data["points"] if p.get("smem_loads")}):
        users = ", ".join(sorted({p["kernel"] for p in data["points"] if p.get("smem_loads") == loads}))
        measured, bound = smem_roof(data.get("smem_gbs"), loads), smem_roof(data.get("smem_bound_gbs"), loads)
        if measured:
            ax.axhline(measured, color="tab:purple", ls="-", lw=1.5,
                       label=f"shared-memory roof of {users} ({loads:g} loads of 4 B per FMA): {measured:.0f} GFLOP/s, measured")
            lows.append(measured)
        if bound:
            ax.axhline(bound, color="tab:purple", ls=":", lw=1,
                       label=f"the same from the attribute bound (32 banks x 4 B x clock): {bound:.0f} GFLOP/s")
    for kernel, marker in (("naive", "o"), ("tiled", "s")):
        mine = [p for p in data["points"] if p["kernel"] == kernel]
        if mine:
            ax.plot([p["ai"] for p in mine], [p["gflops"] for p in mine], marker, ls="-",
                    label=f"{kernel} kernel, compulsory intensity")
            modelled = [p for p in mine if p["ai_model"]]
            ax.plot([p["ai_model"] for p in modelled], [p["gflops"] for p in modelled], marker, ls=":",
                    mfc="none", label=f"{kernel} kernel, modelled intensity")
            for p in mine:
                ax.annotate(str(p["n"]), (p["ai"], p["gflops"]), textcoords="offset points", xytext=(4, -10), fontsize=7)
    # One line per anchor kernel over its sizes, named in a legend of its own beside the axes: the
    # points of 13 kernels at 4 sizes crowd one corner, where labels on the points overlap.
    kernels = list(dict.fromkeys(p["kernel"] for p in data["anchors"]))
    colours = plt.get_cmap("tab20")
    handles = []
    for i, kernel in enumerate(kernels):
        mine = sorted((p for p in data["anchors"] if p["kernel"] == kernel), key=lambda p: p["ai"])
        cublas = kernel == "cuBLAS"
        handles += ax.plot([p["ai"] for p in mine], [p["gflops"] for p in mine], "*-" if cublas else "^-",
                           color="black" if cublas else colours(i % 20), ms=9 if cublas else 5, lw=0.8,
                           label=kernel if cublas else f"gemm_ladder {kernel}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(min([p["gflops"] for p in pts] + [data["peak_gflops"]] + lows) / 4, data["peak_gflops"] * 3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte): filled = compulsory traffic, hollow = modelled loads")
    ax.set_ylabel("GFLOP/s (median launch)")
    ax.set_title(f"FP32 GEMM roofline on {data['gpu']} (labels: n = M = N = K)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(handles=[h for h in ax.get_lines() if h not in handles and not h.get_label().startswith("_")],
              fontsize=6, loc="upper left")
    if handles:
        fig.legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(0.76, 0.93),
                   title="anchors.csv\n(n rises left to right)", title_fontsize=6)
        fig.tight_layout(rect=(0, 0, 0.76, 1))
    else:
        fig.tight_layout()
    save(fig, plt, out)


def sweep_points(path):
    _, rows = read_csv_with_comments(path)
    need_columns(path, rows, ("threads", "tk", "co", "status", "gflops"))
    pts = [(f"{r['threads']}/{r['tk']}/{r['co']}", number(path, r, "gflops"), r.get("tie", ""))
           for r in rows if r["status"] == "PASS" and r["gflops"] not in ("", "n/a")]
    if not pts:
        raise SuiteError(f"{path}: no passing, timed point to chart")
    return {"device": rows[0].get("device", "GPU"), "size": f"{rows[0].get('m')}x{rows[0].get('n')}x{rows[0].get('k')}",
            "points": sorted(pts, key=lambda p: -p[1])}


def render_sweep(data, out):
    plt = pyplot()
    pts = data["points"]
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.28 * len(pts) + 1.2)), dpi=120)
    ys = list(range(len(pts)))[::-1]
    ax.barh(ys, [p[1] for p in pts], color=["tab:orange" if p[2] not in ("", "0") else "tab:blue" for p in pts])
    ax.set_yticks(ys)
    ax.set_yticklabels([p[0] for p in pts], fontsize=7)
    ax.set_xlabel("GFLOP/s (median launch)")
    ax.set_ylabel("threads per block / TK / coarsening")
    ax.set_title(f"sweep on {data['device']}, {data['size']}, ranked (orange: tied with a neighbour)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    save(fig, plt, out)


def chart_inputs(kind, csv_path, anchors=None):
    """Every file a chart of `kind` is drawn from, its CSV first: a roofline also reads the cuBLAS
    anchors (given, or the anchors.csv beside its CSV, where one is). draw reads these and only
    these, and charts.json keys a recorded chart on all of them."""
    if kind == "sweep":
        return [Path(csv_path)]
    side = Path(csv_path).with_name("anchors.csv")
    anchors = anchors or (side if side.is_file() else None)
    return [Path(csv_path)] + ([Path(anchors)] if anchors else [])


def draw(kind, csv_path, out, anchors=None):
    """Render one chart, wherever out is; (exit code, summary). Exit 1 when a roofline point lies
    above a roof."""
    if kind == "sweep":
        data = sweep_points(csv_path)
        render_sweep(data, out)
        return EXIT_OK, f"{len(data['points'])} ranked points"
    data = roofline_points(csv_path)
    anchors = (chart_inputs(kind, csv_path, anchors)[1:] or [None])[0]
    if anchors:
        data["anchors"] = anchor_points(anchors)
    render_roofline(data, out)
    above = points_over_roof(data)
    summary = (f"{len(data['points'])} points" + (f", {len(data['anchors'])} anchor points" if anchors else "")
               + (", all under every roof" if not above else f", {len(above)} ABOVE a roof: {above}"))
    return (EXIT_FAIL if above else EXIT_OK), summary


def plot(kind, csv_path, out, anchors=None):
    """The `plot` command: render one chart to a path outside expected/; return the exit code."""
    check_out(out)
    status, summary = draw(kind, csv_path, out, anchors)
    print(f"wrote {out}: {summary}")
    return status


# --- the recorded charts ------------------------------------------------------------------
def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def recorded_charts(root):
    """(csv name, chart kind, image name) of every charted data recording in scripts/course.json."""
    return [(csv_name, kind, image) for _, _, csv_name, kind, image in data_recordings(root) if kind and image]


def record_charts(root, gpu):
    """Draw every recorded chart from its recorded CSV under expected/<gpu>/data/ and write the
    charts' sha256 and those of every file each is drawn from to charts.json there; return the lines to print."""
    data_dir = Path(root) / "expected" / gpu / "data"
    entries, report = {}, []
    for csv_name, kind, image in recorded_charts(root):
        source = data_dir / csv_name
        if not source.is_file():
            raise SuiteError(f"{source}: no recorded CSV to draw {image} from (record it first: bless --all)")
        status, summary = draw(kind, source, data_dir / image)
        entries[image] = {"from": csv_name, "kind": kind, "sha256": sha256(data_dir / image),
                          "inputs": {p.name: sha256(p) for p in chart_inputs(kind, source)}}
        report.append(f"drew {image} from {csv_name}: {summary}" + ("" if status == EXIT_OK else " (exit 1)"))
    text = json.dumps({"about": "sha256 of each recorded chart and of every file it was drawn from "
                                "(written by record_charts; check_charts compares them)",
                       "charts": entries}, indent=2, sort_keys=True) + "\n"
    (data_dir / CHARTS_JSON).write_text(text, encoding="utf-8")
    report.append(f"wrote {(data_dir / CHARTS_JSON).relative_to(root)}: {len(entries)} charts")
    return report


def check_charts(root, gpu):
    """'file:line: problem' for every recorded chart that charts.json does not vouch for: missing,
    changed since it was recorded, or drawn from a CSV that changed since. No rendering."""
    root = Path(root)
    data_dir = root / "expected" / gpu / "data"

    def rel(path):
        return path.relative_to(root).as_posix()

    index = data_dir / CHARTS_JSON
    charts = recorded_charts(root)
    if not charts:
        return []
    if not index.is_file():
        return [f"{rel(index)}:1: missing: the recorded charts' hashes (draw them with record_charts)"]
    try:
        text = read_text(index, "charts record")
        recorded = json.loads(text)["charts"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        return [f"{rel(index)}:1: malformed charts record: {exc!r}"]
    except SuiteError as exc:
        return [str(exc)]
    lines = text.splitlines()

    def line_of(image):  # the line of charts.json that names the image
        return next((no for no, line in enumerate(lines, 1) if f'"{image}"' in line), 1)

    problems = []
    for csv_name, kind, image in charts:
        path, source = data_dir / image, data_dir / csv_name
        entry = recorded.get(image) if isinstance(recorded, dict) else None
        if not isinstance(entry, dict) or "sha256" not in entry:
            problems.append(f"{rel(index)}:1: no hash for {image} (draw the charts with record_charts)")
        elif not path.is_file():
            problems.append(f"{rel(path)}:1: missing; charts.json records it (draw it with record_charts)")
        elif sha256(path) != entry["sha256"]:
            problems.append(f"{rel(path)}:1: sha256 {sha256(path)[:12]}... differs from the "
                            f"{entry['sha256'][:12]}... that {rel(index)}:{line_of(image)} records: the chart was "
                            f"replaced by hand (draw it with record_charts)")
        else:
            stale = stale_inputs(entry, chart_inputs(kind, source) if source.is_file() else [])
            if stale:
                problems.append(f"{rel(path)}:1: drawn from another {stale} than the one recorded now "
                                f"({rel(index)}:{line_of(image)}): draw it again with record_charts")
    return problems


def stale_inputs(entry, inputs):
    """The names of a chart's inputs whose sha256 differs from its charts.json entry (one read now
    that the entry does not record, or one it records that is gone, counts), joined; '' when none.
    An entry from before "inputs" recorded only its CSV ("from", "from_sha256")."""
    recorded = entry.get("inputs")
    if not isinstance(recorded, dict):
        recorded = {str(entry.get("from")): entry.get("from_sha256")}
    now = {p.name: sha256(p) for p in inputs}
    if not now:  # the CSV itself is gone: the data check names it
        return ""
    return " and ".join(sorted(name for name in set(now) | set(recorded) if now.get(name) != recorded.get(name)))
