"""The command line: argparse and main (the subcommands are in commands.py)."""

import argparse
import os
import sys
from pathlib import Path

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, EXIT_USAGE, SuiteError, UsageError
from .commands import (cmd_bless, cmd_build, cmd_ce_link, cmd_charts, cmd_check, cmd_cli_case, cmd_compare,
                       cmd_exercise, cmd_list_checks, cmd_list_runs, cmd_plot, cmd_run, cmd_snippet, cmd_sync,
                       cmd_attempts, cmd_mutate, cmd_verify)


def user_path(text):
    """A file name the user typed: an empty one is refused by name (Path('') would be '.', a folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name: give the path of the file")
    return Path(text)


class PaneAction(argparse.Action):
    """--pane FILE, repeatable: each pane takes the --args that follow it (ArgsAction)."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.panes = (getattr(namespace, "panes", None) or []) + [[values, None]]


class ArgsAction(argparse.Action):
    """--args '...': the arguments of the last --pane before it that has none yet; otherwise kept in
    `args` (compare, ce-link, and a lone --pane given after its --args)."""

    def __call__(self, parser, namespace, values, option_string=None):
        panes = getattr(namespace, "panes", None) or []
        if panes and panes[-1][1] is None:
            panes[-1][1] = values
        elif getattr(namespace, "args", None) is None:
            namespace.args = values
        else:
            namespace.extra_args = (getattr(namespace, "extra_args", None) or []) + [values]

# Every help page ends with the exit codes (one table for the whole tool; exercise's in its own words).
EXIT_CODES = ("exit codes: 0 success; 1 a check or run failed (a finding); 2 bad usage, or input that cannot be "
              "used; 77 no GPU (skipped).")
EXERCISE_EXIT_CODES = ("exit codes: 0 passed (start: copied); 1 not there yet: a run differs from the lesson, a gate "
                       "failed, a pane is a compile error, exercises/NAME.cu still holds a starter's stand-in (start: "
                       "the file exists); 2 bad usage or nothing to judge: an unknown exercise, --args of no recorded "
                       "run, a pane without its 'Program returned: N' line, an exercise file that is not the lesson's "
                       "exercise; 77 no GPU (check without --pane).")


def summary(func):
    """A subcommand's help: the first paragraph of its docstring, whole (never cut at a line end)."""
    return " ".join((func.__doc__ or "").strip().split("\n\n")[0].split())


def _add(sub, name, func, epilog=EXIT_CODES):
    doc = summary(func)
    p = sub.add_parser(name, help=doc, description=doc, epilog=epilog)
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
    p.add_argument("--stdout", type=user_path, required=True,
                   help="file holding the program's stdout, or Compiler Explorer's executor pane saved whole "
                   "(from 'Program returned: N' on)")
    p.add_argument("--stderr", type=user_path, default=None, help="file holding its stderr (default: not compared)")
    p.add_argument("--exit-code", type=int, default=None, help="its exit code (default: not compared)")
    p.add_argument("--args", default=None, help="its arguments, to pick the recorded run (default: the first Run: line)")
    p.add_argument("--gpu", default=None, help=f"recording folder under expected/ (default: {DEFAULT_GPU})")


def _gpu_parsers(sub):
    p = _add(sub, "verify", cmd_verify)
    p.add_argument("--gpu", default=None)
    p.add_argument("--resume", action="store_true", help="re-verify only programs whose record is stale or failing")
    p.add_argument("--deadline", type=float, default=400.0, help="seconds after which unfinished jobs count as failures")
    p.add_argument("--only", action="append", metavar="PROGRAM", help="verify only these programs")
    p.add_argument("--no-ctest", action="store_true", help="do not run the CTest part (a partial run keeps the recorded counts; a whole one records none)")
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
    p.add_argument("csv", type=user_path)
    p.add_argument("--out", type=user_path, required=True, help="image to write (.png, .svg or .pdf; never "
                   "through a symbolic link)")
    p.add_argument("--anchors", type=user_path, default=None, help="roofline: anchors.csv (default: beside the CSV)")
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
    p = _add(sub, "exercise", cmd_exercise, EXERCISE_EXIT_CODES)
    p.add_argument("action", choices=["start", "check"])
    p.add_argument("name", help="lesson name, e.g. testing")
    p.add_argument("--force", action="store_true", help="start: replace an existing exercise file")
    p.add_argument("--bin-dir", type=Path, default=None)
    p.add_argument("--gpu", default=None)
    p.add_argument("--pane", type=user_path, action=PaneAction, metavar="FILE", dest="panes", default=[],
                   help="check: Compiler Explorer's executor pane saved whole to FILE, from 'Program returned:' "
                   "on (no GPU needed); repeat it to judge several runs' panes together")
    p.add_argument("--args", action=ArgsAction, default=None, help="check --pane: the arguments the run of the "
                   "--pane before it was given (default: the lesson's first Run: line)")
    p = _add(sub, "cli-case", cmd_cli_case)
    p.add_argument("--bin", required=True)
    p.add_argument("--row", required=True)


def build_parser(default_root):
    parser = argparse.ArgumentParser(prog="suite.py", description="the CUDA lesson suite's one tool",
                                     epilog=EXIT_CODES)
    parser.add_argument("--root", type=Path, default=default_root, help="repository root (default: this checkout)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _run_parsers(sub)
    _gpu_parsers(sub)
    _other_parsers(sub)
    return parser


def known_options(parser):
    """Every option string of the tool and its subcommands (--stdout, --pane, ...)."""
    found = {s for a in parser._actions for s in a.option_strings}
    for action in parser._actions:
        for sub in (getattr(action, "choices", None) or {}).values():
            if isinstance(sub, argparse.ArgumentParser):
                found |= {s for a in sub._actions for s in a.option_strings}
    return found


def join_args_values(argv, options):
    """`--args '--twice'`: the run's arguments may look like an option, so the word after every --args
    is its value (as --args=VALUE) - unless that word is an option of this tool: then the value was
    forgotten (`--args --stdout F`), and a one-line UsageError says so instead of swallowing it."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--args" and i + 1 < len(argv):
            value = argv[i + 1]
            if value.split("=", 1)[0] in options:
                raise UsageError(f"--args needs the run's arguments as one value (e.g. --args '-m 1 -n 1 -k 1'), "
                                 f"but the word after it is this tool's option {value.split('=', 1)[0]}")
            out.append("--args=" + value)
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def refuse_lost_args(args):
    """`--args '--'` (or --args=--): argparse takes a lone '--' for its end-of-options mark and hands the
    command an empty list, not the text (Pythons before gh-109475), or the text '--' itself (after it);
    either is refused in one line (UsageError) instead of a traceback in shlex or arguments silently
    dropped or passed on (ce-link). No Run: line of the course passes a lone '--'."""
    given = ([getattr(args, "args", None)] + list(getattr(args, "extra_args", None) or [])
             + [pane[1] for pane in getattr(args, "panes", None) or []])
    if any(value is not None and (not isinstance(value, str) or value.strip() == "--") for value in given):
        raise UsageError("--args '--': a lone '--' is no program's arguments (this tool's option parser takes it "
                         "for its end-of-options mark); give the run's arguments, e.g. --args '-m 1 -n 1 -k 1', "
                         "or leave --args out")


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
    try:
        argv = join_args_values(list(sys.argv[1:] if argv is None else argv), known_options(parser))
        args = parser.parse_args(argv)
        refuse_lost_args(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
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
