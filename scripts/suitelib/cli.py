"""The command line: argparse and main (the subcommands are in commands.py)."""

import argparse
import os
import sys
from pathlib import Path

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, EXIT_USAGE, SuiteError
from .commands import (cmd_bless, cmd_build, cmd_ce_link, cmd_charts, cmd_check, cmd_cli_case, cmd_compare,
                       cmd_exercise, cmd_list_checks, cmd_list_runs, cmd_plot, cmd_run, cmd_snippet, cmd_sync,
                       cmd_attempts, cmd_mutate, cmd_verify)

def _add(sub, name, func):
    doc = (func.__doc__ or "").strip().splitlines()[0]
    p = sub.add_parser(name, help=doc, description=doc)
    p.set_defaults(func=func)
    return p


def _run_parsers(sub):
    p = _add(sub, "build", cmd_build)
    p.add_argument("targets", nargs="*", help="CMake targets (default: all)")
    p = _add(sub, "run", cmd_run)
    p.add_argument("id", help="run id, e.g. testing, starter/testing (see list-runs)")
    p = _add(sub, "bless", cmd_bless)
    p.add_argument("ids", nargs="*", help="run ids")
    p.add_argument("--all", action="store_true", help="record every run")
    for p in (sub.choices["run"], sub.choices["bless"]):
        p.add_argument("--bin-dir", type=Path, default=None, help="where the built programs are")
        p.add_argument("--gpu", default=None, help="transcript folder under expected/ (default: this GPU)")
    p = _add(sub, "compare", cmd_compare)
    p.add_argument("name", help="lesson name (or a run id such as starter/testing)")
    p.add_argument("--stdout", type=Path, required=True,
                   help="file holding the program's stdout, or Compiler Explorer's output pane copied whole")
    p.add_argument("--stderr", type=Path, default=None, help="file holding its stderr (default: not compared)")
    p.add_argument("--exit-code", type=int, default=None, help="its exit code (default: not compared)")
    p.add_argument("--args", default=None, help="its arguments, to pick the recorded run (default: the first Run: line)")
    p.add_argument("--gpu", default=None, help=f"recording folder under expected/ (default: {DEFAULT_GPU})")


def _gpu_parsers(sub):
    p = _add(sub, "verify", cmd_verify)
    p.add_argument("--gpu", default=None)
    p.add_argument("--resume", action="store_true", help="re-verify only programs whose record is stale or failing")
    p.add_argument("--deadline", type=float, default=400.0, help="seconds after which unfinished jobs count as failures")
    p.add_argument("--only", action="append", metavar="PROGRAM", help="verify only these programs")
    p.add_argument("--no-ctest", action="store_true", help="do not run the GPU CTest workflow (keeps the old counts)")
    p.add_argument("--ctest-only", action="store_true", help="only run the GPU CTest workflow; store its counts")
    for name, func in (("mutate", cmd_mutate), ("attempts", cmd_attempts)):
        p = _add(sub, name, func)
        p.add_argument("names", nargs="*", help="lessons (default: every lesson in the catalogue)")
        p.add_argument("--gpu", default=None)


def _other_parsers(sub):
    _add(sub, "list-runs", cmd_list_runs)
    _add(sub, "list-checks", cmd_list_checks)
    p = _add(sub, "check", cmd_check)
    p.add_argument("--only", action="append", metavar="CHECK", help="run only this check (repeatable)")
    p = _add(sub, "plot", cmd_plot)
    p.add_argument("kind", choices=["roofline", "sweep"])
    p.add_argument("csv", type=Path)
    p.add_argument("--out", type=Path, required=True, help="image to write (.png, .svg or .pdf)")
    p.add_argument("--anchors", type=Path, default=None, help="roofline: anchors.csv (default: beside the CSV)")
    p = _add(sub, "charts", cmd_charts)
    p.add_argument("--gpu", default=None, help=f"recording folder under expected/ (default: {DEFAULT_GPU})")
    p = _add(sub, "snippet", cmd_snippet)
    p.add_argument("file", help="lesson name or path, e.g. testing or lessons/testing.cu")
    p.add_argument("name", help="snippet name")
    p = _add(sub, "ce-link", cmd_ce_link)
    p.add_argument("name", help="lesson name, starter/NAME, or a path in the tree")
    p.add_argument("--args", default=None, help="the program's arguments, put in the executor's "
                   "Execution arguments field (default: none)")
    _add(sub, "sync", cmd_sync)
    p = _add(sub, "exercise", cmd_exercise)
    p.add_argument("action", choices=["start", "check"])
    p.add_argument("name", help="lesson name, e.g. testing")
    p.add_argument("--force", action="store_true", help="start: replace an existing exercise file")
    p.add_argument("--bin-dir", type=Path, default=None)
    p.add_argument("--gpu", default=None)
    p.add_argument("--pane", type=Path, default=None,
                   help="check: Compiler Explorer's whole output pane saved to FILE (no GPU needed)")
    p.add_argument("--args", default=None, help="check --pane: the arguments the pane's run was given "
                   "(default: the lesson's first Run: line)")
    p = _add(sub, "cli-case", cmd_cli_case)
    p.add_argument("--bin", required=True)
    p.add_argument("--row", required=True)


def build_parser(default_root):
    parser = argparse.ArgumentParser(prog="suite.py", description="the CUDA lesson suite's one tool")
    parser.add_argument("--root", type=Path, default=default_root, help="repository root (default: this checkout)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _run_parsers(sub)
    _gpu_parsers(sub)
    _other_parsers(sub)
    return parser


def silence_stdout():
    """The reader of stdout went away: point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stream (tests)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv=None, default_root=None):
    """Parse, dispatch, and turn every user error into one line and its exit code."""
    parser = build_parser(default_root or Path(__file__).resolve().parent.parent.parent)
    argv = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(argv[:-1]):  # `--args '--twice'`: a value that looks like an option
        if arg == "--args":
            argv[i:i + 2] = ["--args=" + argv[i + 1]]
            break
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage
        return EXIT_USAGE if exc.code else EXIT_OK
    args.root = args.root.resolve()
    if not (args.root / "lessons").is_dir():
        print(f"error: no lesson suite under {args.root} (it has no lessons/ folder); give --root DIR",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers, not at exit
        return status
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:  # `suite.py list-runs | head`; an OSError too, so it comes first
        silence_stdout()
        return EXIT_OK
    except OSError as exc:  # a file the user named or owns cannot be read or written
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"error: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAIL
    except ValueError as exc:  # a value no check above caught: its own message, never a traceback
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_FAIL
