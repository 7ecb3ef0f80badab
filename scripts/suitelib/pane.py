"""Reading a pane: output the user saved by hand (a program's stdout, or a Compiler Explorer pane
copied whole), for `compare` (read_pasted) and for the exercise verdict from a pane (read_pane).
"""

import os
import re
import stat
from pathlib import Path

from . import SuiteError, UsageError, read_text

PASTE_LIMIT = 4 * 1024 * 1024  # no lesson prints near this; the Compiler Explorer pane holds 32 KiB
CE_STDOUT, CE_STDERR = "Program stdout", "Program stderr"
CE_RETURNED = re.compile(r"^Program returned: (-?\d+)$")
# The executor pane says 'Could not execute the program', 'Build failed', 'Compiler returned: N'
# where the build failed; the compiler's Output pane ends with 'ASM generation compiler returned: N'
# and 'Execution build compiler returned: N' (static/panes/executor.ts, output.ts and
# lib/base-compiler.ts of compiler-explorer/compiler-explorer).
CE_COMPILER_RETURNED = re.compile(r"^(?:ASM generation |Execution build )?[Cc]ompiler returned: (-?\d+)$")
CE_NOT_EXECUTED = "Could not execute the program"


def read_pasted_file(path, what="output file"):
    """The text of a file the user saved, BOM and CRs removed. Refused in one line (UsageError),
    before it is opened, when it is not a regular file (a FIFO would hang, a device never ends)
    or is larger than PASTE_LIMIT (no lesson prints that much: the wrong file)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})")
    if stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{path}: is a directory, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{path}: is not a regular file (a pipe or a device?); save the output to a file first")
    if info.st_size > PASTE_LIMIT:
        raise UsageError(f"{path}: {info.st_size / 2**20:.1f} MiB is more than any lesson prints "
                         f"({PASTE_LIMIT // 2**20} MiB at most here); is it the right file?")
    try:
        text = read_text(path, what)
    except SuiteError as exc:
        raise UsageError(str(exc))
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _pane_refusal(lines, name):
    """The one line for a pane that holds no program output (a failed build, no execution), else None."""
    if any(CE_RETURNED.match(ln) or ln in (CE_STDOUT, CE_STDERR) for ln in lines):
        return None
    codes = [int(m.group(1)) for m in map(CE_COMPILER_RETURNED.match, lines) if m]
    if any(codes) or "Build failed" in lines:
        error = next((ln.strip() for ln in lines if re.search(r"\berror\b", ln)), None)
        first = f"; its first error: {error[:200]}" if error else ""
        return (f"{name}: this pane is a compile error: fix it first (Compiler Explorer says "
                f"'Compiler returned: {next((c for c in codes if c), '?')}'{first})")
    if CE_NOT_EXECUTED in lines or codes:
        return (f"{name}: this pane holds no program output (Compiler Explorer did not run the program); "
                f"turn on execution and copy the executor pane from 'Program returned' or 'Program stdout' on")
    return None


def _split_pane(lines):
    """{stdout, stderr, code, stdout_at, stderr_at} of a Compiler Explorer pane, None if it is not one.
    *_at: how many lines of the file come before that stream's first line."""
    returned = [i for i, ln in enumerate(lines) if CE_RETURNED.match(ln)]
    heads = {h: next((i for i, ln in enumerate(lines) if ln == h), None) for h in (CE_STDOUT, CE_STDERR)}
    if not returned and heads[CE_STDOUT] is None and heads[CE_STDERR] is None:
        return None
    code = int(CE_RETURNED.match(lines[returned[0]]).group(1)) if returned else None
    out_at, err_at = heads[CE_STDOUT], heads[CE_STDERR]
    if out_at is not None and err_at is not None and err_at < out_at:
        err_at = next((i for i in range(out_at + 1, len(lines)) if lines[i] == CE_STDERR), None)
    pane = {"code": code, "stdout": [], "stderr": [], "stdout_at": 0, "stderr_at": 0, "mixed": False}
    if out_at is not None:
        end = err_at if err_at is not None and err_at > out_at else len(lines)
        pane["stdout"], pane["stdout_at"] = lines[out_at + 1:end], out_at + 1
    if err_at is not None:
        pane["stderr"], pane["stderr_at"] = lines[err_at + 1:], err_at + 1
    if out_at is None and err_at is None:  # the compiler's Output pane: program lines follow, unlabelled
        after = lines[returned[0] + 1:]
        pane["stdout"], pane["stdout_at"], pane["mixed"] = after, returned[0] + 1, bool(after)
    return pane


def split_compiler_explorer(text):
    """(stdout, stderr, exit code) from Compiler Explorer's executor pane, None when it is not one.
    The pane prints 'Program returned: N', then 'Program stdout' and 'Program stderr' sections;
    a copy that starts at 'Program stdout' gives exit code None. SuiteError for a failed build."""
    lines = text.splitlines()
    refusal = _pane_refusal(lines, "the pane")
    if refusal:
        raise SuiteError(refusal)
    pane = _split_pane(lines)
    if pane is None:
        return None
    join = lambda xs: "\n".join(xs) + "\n" if xs else ""  # noqa: E731
    return join(pane["stdout"]), join(pane["stderr"]), pane["code"]


def read_pasted(stdout_path, stderr_path=None, exit_code=None, expected=None):
    """(result, notes): output the user saved (a program's stdout, or a Compiler Explorer pane),
    ready for compare(). What it does not give is taken from the recording `expected`, and a note
    says so. The result's 'origin' makes compare's messages name lines of the user's files.
    One-line errors: a transcript instead of an output, a failed build's pane (exit 1), a file
    that is too large or not a regular file (exit 2)."""
    text = read_pasted_file(stdout_path)
    if text.startswith("# suite transcript"):
        raise UsageError(f"{stdout_path} is a recorded transcript, not a program's output")
    lines = text.splitlines()
    refusal = _pane_refusal(lines, str(stdout_path))
    if refusal:
        raise SuiteError(refusal)
    name, notes = str(stdout_path), []
    pane = _split_pane(lines)
    stderr, code = None, exit_code
    origin = {"stdout": (name, 0)}
    if pane is None:
        stdout = text
    else:
        join = lambda xs: "\n".join(xs) + "\n" if xs else ""  # noqa: E731
        stdout, origin["stdout"] = join(pane["stdout"]), (name, pane["stdout_at"])
        if not pane["mixed"]:
            stderr, origin["stderr"] = join(pane["stderr"]), (name, pane["stderr_at"])
        code = pane["code"] if code is None else code
        what = ("the compiler's Output pane (its program lines mix stderr and stdout: all read as stdout)"
                if pane["mixed"] else "Compiler Explorer's output pane (Program returned / Program stdout / "
                "Program stderr)" if pane["code"] is not None else
                "Compiler Explorer's output pane from 'Program stdout' on (no 'Program returned' line)")
        notes.append("read as " + what)
    if stderr_path is not None:
        stderr, origin["stderr"] = read_pasted_file(stderr_path), (str(stderr_path), 0)
    if stderr is None:
        notes.append("stderr not compared (give --stderr FILE)")
    if code is None:
        notes.append("exit code not compared (give --exit-code N)")
    expected = expected or {"stderr": "", "exit_code": 0}
    return {"stdout": stdout, "stderr": expected["stderr"] if stderr is None else stderr,
            "exit_code": expected["exit_code"] if code is None else code, "origin": origin}, notes


def read_pane(path, expected):
    """(result, notes) of a saved Compiler Explorer output pane, read by the reader `compare` uses."""
    result, notes = read_pasted(path, None, None, expected)
    # exercise check takes the whole pane, not compare's --stderr / --exit-code files
    return result, [note.replace("(give --stderr FILE)", "(save the whole pane, from 'Program returned:' on)")
                    .replace("(give --exit-code N)", "(save the whole pane, from 'Program returned:' on)")
                    for note in notes]
