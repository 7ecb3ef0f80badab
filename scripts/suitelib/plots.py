"""Charts (the only module that imports matplotlib, and only inside the render functions): a
report_data CSV as a measured roofline (with gemm_ladder steps and cuBLAS from anchors.csv), a
sweep CSV as a ranked bar chart. Input and output are checked before matplotlib is imported."""

import csv
import io
import os
import re
from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, SuiteError, UsageError, read_text
from .transcripts import NUM

FORMATS = (".png", ".svg", ".pdf")


def read_csv_with_comments(path):
    """(comment lines, rows as dicts) of a CSV whose comments start with '#'."""
    lines = read_text(path, "CSV file").splitlines()
    comments = [line[1:].strip() for line in lines if line.startswith("#")]
    try:
        rows = list(csv.DictReader(io.StringIO("\n".join(l for l in lines if l.strip() and not l.startswith("#")))))
    except csv.Error as exc:
        raise SuiteError(f"{path}: malformed CSV: {exc}")
    if not rows:
        raise SuiteError(f"{path}: no CSV rows")
    return comments, rows


def need_columns(path, rows, columns):
    for column in columns:
        if column not in rows[0]:
            raise SuiteError(f"{path}: malformed CSV: no column {column!r}")


def number(path, row, column):
    try:
        return float(row[column])
    except (TypeError, ValueError):
        raise SuiteError(f"{path}: malformed CSV: {column} = {row.get(column)!r} is not a number")


def roofline_points(path):
    """Ceilings and the timed, passing points of a report_data CSV."""
    comments, rows = read_csv_with_comments(path)
    text = " ".join(comments)
    bw = re.search(r"bandwidth (" + NUM + r") GB/s", text)
    peak = re.search(r"FP32 peak (" + NUM + r") GFLOP/s", text)
    gpu = re.search(r"GPU: ([^(]+?) \(", text)
    if not bw or not peak:
        raise SuiteError(f"{path}: the comment lines carry no measured bandwidth / FP32 peak")
    need_columns(path, rows, ("kernel", "n", "verdict", "gflops", "ai_compulsory"))
    points = [{"kernel": r["kernel"], "n": int(number(path, r, "n")), "ai": number(path, r, "ai_compulsory"),
               "ai_model": number(path, r, "ai_model") if r.get("ai_model") not in (None, "") else None,
               "gflops": number(path, r, "gflops")}
              for r in rows if r["verdict"] == "PASS" and r["gflops"] not in ("", "n/a")]
    if not points:
        raise SuiteError(f"{path}: no passing, timed point to chart")
    return {"gpu": gpu.group(1).strip() if gpu else "GPU", "bw_gbs": float(bw.group(1)),
            "peak_gflops": float(peak.group(1)), "points": points, "anchors": []}


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
    """Points above min(peak, AI x bandwidth): a roofline cannot have any."""
    return [p for p in data["points"] if p["gflops"] > min(data["peak_gflops"], p["ai"] * data["bw_gbs"]) * 1.0001]


def check_out(out):
    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise UsageError(f"--out {out}: unsupported format {out.suffix or '(none)'!r} (use {', '.join(FORMATS)})")
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"--out {out}: cannot write there (no such folder, a folder, or not writable)")


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SuiteError("plot needs matplotlib, which is not installed (scripts/install-deps.sh, or pip install matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, plt, out):
    try:
        fig.savefig(out)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--out {out}: cannot write it ({exc})")
    finally:
        plt.close(fig)


def render_roofline(data, out):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
    pts = data["points"] + data["anchors"]
    ais = [p["ai"] for p in pts] + [p["ai_model"] for p in data["points"] if p["ai_model"]]
    lo, hi = min(ais + [1.0]) / 4, max(ais + [data["peak_gflops"] / data["bw_gbs"]]) * 4
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(data["peak_gflops"], x * data["bw_gbs"]) for x in xs], "k-", lw=2,
            label=f"roof: min({data['peak_gflops']:.0f} GFLOP/s, AI x {data['bw_gbs']:.0f} GB/s), measured")
    ax.axhline(data["peak_gflops"], color="gray", ls="--", lw=1, label="FP32 peak (measured FMA kernel)")
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
    for p in data["anchors"]:
        ax.plot([p["ai"]], [p["gflops"]], "*" if p["kernel"] == "cuBLAS" else "^", ms=9 if p["kernel"] == "cuBLAS" else 6)
        ax.annotate(f"{p['kernel']} n={p['n']}", (p["ai"], p["gflops"]), textcoords="offset points", xytext=(4, 2), fontsize=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(min([p["gflops"] for p in pts] + [data["peak_gflops"]]) / 4, data["peak_gflops"] * 3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte): filled = compulsory traffic, hollow = modelled loads")
    ax.set_ylabel("GFLOP/s (median launch)")
    ax.set_title(f"FP32 GEMM roofline on {data['gpu']} (labels: n = M = N = K)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
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


def plot(kind, csv_path, out, anchors=None):
    """Render one chart; return the exit code (1 when a roofline point lies above a roof)."""
    check_out(out)
    if kind == "sweep":
        data = sweep_points(csv_path)
        render_sweep(data, out)
        print(f"wrote {out}: {len(data['points'])} ranked points")
        return EXIT_OK
    data = roofline_points(csv_path)
    side = Path(csv_path).with_name("anchors.csv")
    anchors = anchors or (side if side.is_file() else None)
    if anchors:
        data["anchors"] = anchor_points(anchors)
    render_roofline(data, out)
    above = points_over_roof(data)
    print(f"wrote {out}: {len(data['points'])} points" + (f", {len(data['anchors'])} anchor points" if anchors else "")
          + (", all under both roofs" if not above else f", {len(above)} ABOVE a roof: {above}"))
    return EXIT_FAIL if above else EXIT_OK
