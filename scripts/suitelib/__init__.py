"""suitelib: the CUDA lesson suite's tool, one module per concern (entry point: scripts/suite.py).

Modules: model (lessons, runs, markers, header), transcripts (format, parse, masking, the one
comparison), running (binaries, GPU facts), generate (the one plan of what `sync` writes; `check`
diffs against it), checks (static checks), docs (pages, snippets, links), figures (page figures
from records), spoilers (solutions in plain view across lessons), exercises (start, check, the
attempts), judge (the verdict over every run), pane (reading saved output and Compiler Explorer
panes), panerecord (the runs a pane route has left), speed (where speed is the point), sanitize,
catalogue (mutants and student attempts), builds (verify's build cache), verify (the GPU record),
verifyrun (verify's timed phases), anchors (cuBLAS ratios), plots (matplotlib), cli (argparse).

Exit codes, one table for the whole tool: 0 success, 1 a check or run failed (a finding),
2 bad usage, 77 no GPU (skipped).
"""

import os
import tempfile
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


def read_bytes(path, what="file"):
    """The bytes of a file, or a one-line UsageError (missing, a folder, unreadable)."""
    path = Path(path)
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not {a_or_an(what)}")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})")


def read_text(path, what="file"):
    """UTF-8 text of a file, or a one-line SuiteError (missing, a folder, not UTF-8, unreadable)."""
    path = Path(path)
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SuiteError(f"{path}:{line}: not UTF-8 text (byte {exc.start})")


def a_or_an(noun):
    """'an output file', 'a record': the article a noun takes (by its first letter)."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def refuse_link(path, what="file"):
    """UsageError when path is a symbolic link (dangling or not): the tool never writes through one."""
    if os.path.islink(path):
        raise UsageError(f"{what} {path} is a symbolic link (to {os.readlink(path)}): the tool never writes "
                         f"through a link; remove it (or give another path) and try again")


def write_file(path, data, what="file"):
    """Write data (str or bytes) to path, never through a symbolic link: a link there is refused, and
    the data goes to a new file beside it that then replaces path (os.replace replaces a link that
    appears meanwhile; it never follows one). Returns path."""
    path = Path(path)
    refuse_link(path, what)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        mask = os.umask(0o22)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return path
