"""Reading a pane: output the user saved by hand (a program's stdout, or a Compiler Explorer pane
copied whole), for `compare` (read_pasted) and for the exercise verdict from a pane (read_pane).
"""

import os
import re
import stat
from pathlib import Path

from . import SuiteError, UsageError, a_or_an, read_text

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
        raise UsageError(f"{path}: is a directory, not {a_or_an(what)}")
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
                f"turn on execution and copy the executor pane whole, from 'Program returned:' on")
    return None


# What to copy, said the same way by every refusal.
WHAT_TO_COPY = ("copy Compiler Explorer's executor pane whole, from its 'Program returned: N' line to its "
                "last line (the executor pane labels the streams 'Program stdout' and 'Program stderr')")


class Pane:
    """A saved output, classified. kind:
      - "executor": Compiler Explorer's executor pane from 'Program returned: N' on; a stream whose
        heading is absent is empty (the pane omits the heading of an empty stream);
      - "partial":  'Program stdout' / 'Program stderr' headings without the 'Program returned: N'
        line above them (a copy that starts at 'Program stdout'): no exit code;
      - "output":   the compiler's Output pane: 'Program returned: N' after the compiler's
        '... compiler returned: N' lines, then the program's stderr and stdout without labels;
      - "plain":    no heading at all (a program's stdout saved by hand).
    stdout/stderr: lists of lines; *_at: how many lines of the file come before that stream."""

    def __init__(self, kind, code=None, stdout=(), stderr=(), stdout_at=0, stderr_at=0):
        self.kind, self.code = kind, code
        self.stdout, self.stderr = list(stdout), list(stderr)
        self.stdout_at, self.stderr_at = stdout_at, stderr_at


def _sections(lines, start):
    """(stdout, stdout_at, stderr, stderr_at) of the labelled sections from line `start` on."""
    out_at = next((i for i in range(start, len(lines)) if lines[i] == CE_STDOUT), None)
    err_from = out_at + 1 if out_at is not None else start
    err_at = next((i for i in range(err_from, len(lines)) if lines[i] == CE_STDERR), None)
    stdout, stderr = [], []
    if out_at is not None:
        stdout = lines[out_at + 1:err_at if err_at is not None else len(lines)]
    if err_at is not None:
        stderr = lines[err_at + 1:]
    return (stdout, out_at + 1 if out_at is not None else 0, stderr, err_at + 1 if err_at is not None else 0)


def classify(lines):
    """The Pane of a saved output's lines (see Pane)."""
    returned = next((i for i, ln in enumerate(lines) if CE_RETURNED.match(ln)), None)
    if returned is None:
        if CE_STDOUT in lines or CE_STDERR in lines:
            first = min(lines.index(h) for h in (CE_STDOUT, CE_STDERR) if h in lines)
            stdout, out_at, stderr, err_at = _sections(lines, first)
            return Pane("partial", None, stdout, stderr, out_at, err_at)
        return Pane("plain", None, lines, (), 0, 0)
    code = int(CE_RETURNED.match(lines[returned]).group(1))
    after = [ln for ln in lines[returned + 1:] if ln.strip()]
    compiler_above = any(CE_COMPILER_RETURNED.match(ln) for ln in lines[:returned])
    if (after and after[0] not in (CE_STDOUT, CE_STDERR)) or (not after and compiler_above):
        return Pane("output", code, lines[returned + 1:], (), returned + 1, 0)
    stdout, out_at, stderr, err_at = _sections(lines, returned + 1)
    return Pane("executor", code, stdout, stderr, out_at, err_at)


def output_pane_refusal(name):
    return (f"{name} is the compiler's Output pane: it prints the program's stderr and stdout without "
            f"labels, so neither can be judged; {WHAT_TO_COPY}")


def _read(path):
    """(text, lines, Pane) of a saved output; the one-line refusals every reader shares."""
    text = read_pasted_file(path)
    if text.startswith("# suite transcript"):
        raise UsageError(f"{path} is a recorded transcript, not a program's output")
    lines = text.splitlines()
    refusal = _pane_refusal(lines, str(path))
    if refusal:
        raise SuiteError(refusal)
    pane = classify(lines)
    if pane.kind == "output":
        raise UsageError(output_pane_refusal(path))
    return text, lines, pane


def _join(lines):
    return "\n".join(lines) + "\n" if lines else ""


def split_compiler_explorer(text):
    """(stdout, stderr, exit code) of Compiler Explorer's executor pane, None when the text is no pane
    (exit code None for a copy that starts at 'Program stdout'). SuiteError for a failed build, a
    pane that did not run, or the compiler's Output pane."""
    lines = text.splitlines()
    refusal = _pane_refusal(lines, "the pane")
    if refusal:
        raise SuiteError(refusal)
    pane = classify(lines)
    if pane.kind == "output":
        raise UsageError(output_pane_refusal("the pane"))
    if pane.kind == "plain":
        return None
    return _join(pane.stdout), _join(pane.stderr), pane.code


def read_pasted(stdout_path, stderr_path=None, exit_code=None, expected=None):
    """(result, notes): output the user saved, ready for compare(). Either Compiler Explorer's
    executor pane copied whole (its own exit code and both streams; --stderr or an --exit-code that
    differs from its 'Program returned: N' is refused, never silently preferred), or a program's
    stdout saved by hand (what --stderr / --exit-code do not give is taken from the recording
    `expected`, and a note says so). A partial pane (from 'Program stdout' on) needs --exit-code.
    The result's 'origin' makes compare's messages name lines of the user's files.
    One-line errors: a transcript instead of an output, the compiler's Output pane, a failed
    build's pane (exit 1), a file that is too large or not a regular file (exit 2)."""
    text, _, pane = _read(stdout_path)
    name, notes = str(stdout_path), []
    origin = {"stdout": (name, pane.stdout_at)}
    stderr, code = None, exit_code
    if pane.kind == "plain":
        stdout = text
    else:
        if stderr_path is not None:
            raise UsageError(f"--stderr {stderr_path}: {name} is a Compiler Explorer pane, which holds the "
                             f"program's stderr itself (empty where it has no 'Program stderr' heading); drop --stderr")
        if pane.kind == "executor" and exit_code is not None and exit_code != pane.code:
            raise UsageError(f"--exit-code {exit_code}: {name} says 'Program returned: {pane.code}', and the pane's "
                             f"own exit code is the one compared; drop --exit-code")
        if pane.kind == "partial" and exit_code is None:
            raise UsageError(f"{name}: a partial pane: it starts at '{CE_STDOUT}' without the 'Program returned: N' "
                             f"line above it, so its exit code is unknown: give it with --exit-code N, or {WHAT_TO_COPY}")
        stdout, stderr = _join(pane.stdout), _join(pane.stderr)
        origin["stderr"] = (name, pane.stderr_at)
        if pane.kind == "executor":
            code = pane.code
            notes.append("read as Compiler Explorer's executor pane ('Program returned', 'Program stdout', "
                         "'Program stderr'; a stream without its heading is empty)")
        else:
            notes.append(f"read as a pane from '{CE_STDOUT}' on, with the exit code you gave (--exit-code {code})")
    if stderr_path is not None:
        stderr, origin["stderr"] = read_pasted_file(stderr_path), (str(stderr_path), 0)
    if stderr is None:
        notes.append("stderr not compared (give --stderr FILE)")
    if code is None:
        notes.append("exit code not compared (give --exit-code N)")
    expected = expected or {"stderr": "", "exit_code": 0}
    return {"stdout": stdout, "stderr": expected["stderr"] if stderr is None else stderr,
            "exit_code": expected["exit_code"] if code is None else code, "origin": origin}, notes


def read_pane(path):
    """The result of Compiler Explorer's executor pane saved whole, for the exercise verdict. No
    verdict without evidence: a file without the 'Program returned: N' line is not judged
    (UsageError saying what to copy), nor is the compiler's Output pane."""
    _, _, pane = _read(path)
    if pane.kind == "partial":
        raise UsageError(f"{path}: not judged: a partial pane (it starts at '{CE_STDOUT}'; the 'Program "
                         f"returned: N' line above it, the exit code, is missing); {WHAT_TO_COPY}")
    if pane.kind == "plain":
        raise UsageError(f"{path}: not judged: it has no 'Program returned: N' line, so the exit code is "
                         f"unknown; {WHAT_TO_COPY}")
    origin = {"stdout": (str(path), pane.stdout_at), "stderr": (str(path), pane.stderr_at)}
    return {"stdout": _join(pane.stdout), "stderr": _join(pane.stderr), "exit_code": pane.code, "origin": origin}
