"""suitelib: the CUDA lesson suite's tool, one module per concern (entry point: scripts/suite.py).

Modules: model (lessons, runs, markers, header), transcripts (format, parse, masking, the one
comparison), running (binaries, GPU facts), generate (the one plan of what `sync` writes; `check`
diffs against it), checks (static checks), docs (pages, snippets, links), figures (page figures
from records), exercises (start, check, the attempts), judge (the verdict over every run), pane
(reading saved output and Compiler Explorer panes), panerecord (the runs a pane route has left), speed (where speed is the point),
catalogue (mutants and student attempts), verify (the GPU record), anchors (cuBLAS ratios), plots (matplotlib), cli (argparse).

Exit codes, one table for the whole tool: 0 success, 1 a check or run failed (a finding),
2 bad usage, 77 no GPU (skipped).
"""

from pathlib import Path

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_SKIP = 77

DEFAULT_GPU = "h200"


class SuiteError(Exception):
    """A finding or failure the user sees as one line, with the exit code it maps to."""
    code = EXIT_FAIL


class UsageError(SuiteError):
    code = EXIT_USAGE


class Skipped(SuiteError):
    code = EXIT_SKIP


def read_text(path, what="file"):
    """UTF-8 text of a file, or a one-line SuiteError (missing, a folder, not UTF-8, unreadable)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a {what}")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SuiteError(f"{path}:{line}: not UTF-8 text (byte {exc.start})")
