"""The command line: argparse, and the subcommands that only glue the modules together."""

import argparse
import os
import shlex
import sys
from pathlib import Path

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE, SuiteError, UsageError
from . import checks, docs, exercises, generate, plots, running, verify
from .model import Program, data_recordings, all_runs, find_lesson_run, find_run, lesson, programs, resolve_source
from .transcripts import (format_transcript, parse_transcript, compare, read_pasted, read_pasted_file,  # noqa: F401
                          run_against_transcript, split_compiler_explorer, staleness)

def cmd_build(args):
    """Configure and build every lesson and starter, or the named targets such as NAME_exercise (preset 'dev')."""
    running.cmake_build(args.root, args.targets)
    return EXIT_OK


def folder_for(root, gpu):
    """expected/<gpu>/ to compare with: --gpu, else this machine's GPU's folder, else the default."""
    try:
        facts = None if gpu else running.detect_gpu()
    except running.DriverError:
        facts = None
    return running.transcript_gpu(root, gpu, facts)


def report(cmp, label, path):
    for note in cmp.notes:
        print("note: " + note, file=sys.stderr)
    if cmp.problems:
        print("\n".join(cmp.problems), file=sys.stderr)
        print(f"FAILED: {label} does not match {path}", file=sys.stderr)
        return EXIT_FAIL
    print(f"ok: {label} matches {path} ({cmp.decided()})", file=sys.stderr)
    return EXIT_OK


def cmd_run(args):
    """Run one recorded run and compare it with its transcript."""
    run = find_run(args.root, args.id)
    binary = running.binary_for(args.root, run.program, args.bin_dir)
    gpu = folder_for(args.root, args.gpu)
    result, cmp = run_against_transcript(run, binary, gpu)
    sys.stdout.write(result["stdout"])
    if result["exit_code"] == EXIT_SKIP:  # the reason goes in the one skip line, not twice
        return running.skip_or_fail(run.id, result, next_steps_without_gpu(run))
    sys.stderr.write(result["stderr"])
    return report(cmp, run.id, f"expected/{gpu}/{run.id}.txt")


def next_steps_without_gpu(run):
    """What a student without a GPU does instead: run it on Compiler Explorer's T4, then compare."""
    source = ("starter/" if run.program.is_starter else "") + run.program.name
    args = f" (type '{' '.join(run.args)}' into the executor's arguments)" if run.args else ""
    return [f"next: run it on Compiler Explorer's T4: 'python3 scripts/suite.py ce-link {source}' prints "
            f"the link{args};",
            f"  save its output pane to a file, then check it: "
            f"'python3 scripts/suite.py compare {run.id} --stdout FILE'"]


def cmd_compare(args):
    """Compare output obtained elsewhere (Compiler Explorer, your machine) with the recording; no GPU needed."""
    root = args.root
    if args.args is None and ("/" in args.name or "@" in args.name):
        run = find_run(root, args.name)
    elif "@" in args.name:
        raise UsageError(f"{args.name} is a run id: give either a run id or NAME --args '...', not both")
    else:
        if not lesson(root, args.name).runs():
            raise UsageError(f"lessons/{args.name}.cu has no Run: line in its header: no recorded run to compare with")
        try:
            argv = shlex.split(args.args) if args.args is not None else None
        except ValueError as exc:  # an unterminated quote
            raise UsageError(f"--args {args.args!r}: cannot split it into arguments ({exc})")
        run = find_lesson_run(root, args.name, argv)
    gpu = running.transcript_gpu(root, args.gpu, None)
    path = run.transcript_path(gpu)
    if not path.exists():
        raise UsageError(f"{run.id}: no recording at expected/{gpu}/{run.id}.txt")
    expected = parse_transcript(path)
    if args.exit_code is not None and not 0 <= args.exit_code <= 255:
        raise UsageError(f"--exit-code expects 0..255 (a process's exit status), got {args.exit_code}")
    result, given = pasted_result(args, expected)
    cmp = compare(expected, result, run.id)
    cmp.notes += given
    stale = staleness(run, expected)
    if stale:
        cmp.notes.append(f"the recording is {stale}")
    return report(cmp, f"the output of {run.command()}", path.relative_to(root))


def pasted_result(args, expected):
    """(result, notes): the output the user saved; what it does not give is taken as recorded, and said.
    The pane reader itself is transcripts.read_pasted (exercise check --pane uses it too)."""
    return read_pasted(args.stdout, args.stderr, args.exit_code, expected)


def cmd_bless(args):
    """Record transcripts on this machine's GPU (the only subcommand that writes expected/)."""
    root = args.root
    if not args.all and not args.ids:
        raise UsageError("bless: name runs to record, or --all")
    runs = all_runs(root) if args.all else [find_run(root, i) for i in args.ids]  # names first, then the GPU
    facts = running.require_gpu("bless")
    gpu = args.gpu or facts.slug
    for run in runs:
        result = running.run_binary(running.binary_for(root, run.program, args.bin_dir), run.args)
        if result["exit_code"] == EXIT_SKIP:
            raise SuiteError(f"bless: {run.id} exited 77 (no usable device); nothing recorded")
        path = run.transcript_path(gpu)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_transcript(run, facts.name, facts.toolkit, result), encoding="utf-8")
        print(f"recorded {path.relative_to(root)} (exit {result['exit_code']})")
    if args.all:
        bless_data(root, gpu, args.bin_dir)
    return EXIT_OK


def bless_data(root, gpu, bin_dir):
    """Record the CSV data files and render their charts in-process (part of 'bless --all')."""
    out_dir = root / "expected" / gpu / "data"
    for name, argv, csv_name, kind, image in data_recordings(root):
        prog = Program(root, root / "lessons" / (name + ".cu"))
        result = running.run_binary(running.binary_for(root, prog, bin_dir), argv)
        if result["exit_code"] != EXIT_OK:
            raise SuiteError(f"bless: {name} {' '.join(argv)} exited {result['exit_code']}; no data recorded")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / csv_name).write_text(result["stdout"], encoding="utf-8")
        if kind is None:
            print(f"recorded {(out_dir / csv_name).relative_to(root)}")
            continue
        try:
            status = plots.plot(kind, out_dir / csv_name, out_dir / image)
        except SuiteError as exc:
            status = f"not drawn: {exc}"
        print(f"recorded {(out_dir / csv_name).relative_to(root)} (chart {image}: {status})")


def default_checks():
    return [n for n in checks.registry() if n != "attempts"]  # the mutants check covers attempts


def cmd_check(args):
    """Run the static checks (never writes); print every problem; exit 1 if any."""
    known = checks.registry()
    names = args.only or default_checks()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"check: unknown check {unknown[0]!r} (known: {', '.join(known)})")
    if not programs(args.root):
        raise UsageError("check: no lessons/*.cu or starter/*.cu found under " + str(args.root))
    failed = 0
    for name in names:
        try:
            errors = known[name](args.root)
        except SuiteError as exc:
            errors = [str(exc)]
        for e in errors:
            print(f"error: [{name}] {e}", file=sys.stderr)
        print(f"check {name}: {'FAILED (' + str(len(errors)) + ')' if errors else 'ok'}")
        failed += bool(errors)
    return EXIT_FAIL if failed else EXIT_OK


def cmd_sync(args):
    """Write what check compares: common blocks, starters (exercise bodies kept), pages, links."""
    written, problems = generate.sync(args.root)  # the plan that check compares against
    for rel in written:
        print(f"updated {rel}")
    if problems:
        raise SuiteError("sync left these to fix by hand: " + "; ".join(problems))
    return EXIT_OK


def cmd_list_runs(args):
    """Print every recorded run's id (CMake makes one GPU test of each)."""
    print("\n".join(run.id for run in all_runs(args.root)))
    return EXIT_OK


def cmd_list_checks(args):
    """Print the static checks' names (CMake makes one test of each)."""
    print("\n".join(default_checks()))
    return EXIT_OK


def cmd_plot(args):
    """Render a report_data CSV as a roofline, or a sweep CSV as a ranked bar chart."""
    return plots.plot(args.kind, args.csv, args.out, args.anchors)


def cmd_snippet(args):
    """Print one snippet of a lesson (dedented, markers stripped)."""
    sys.stdout.write(docs.snippet_text(resolve_source(args.root, args.file), args.name))
    return EXIT_OK


def cmd_ce_link(args):
    """Print a Compiler Explorer link that opens a lesson (or starter) and runs it on a T4."""
    print(docs.ce_link(resolve_source(args.root, args.name).text))
    return EXIT_OK


def cmd_exercise(args):
    """Start an exercise from a starter, or check your exercise by what it does (on a GPU, or from a pasted
    Compiler Explorer output pane with --pane)."""
    if args.action == "start":
        return exercises.start(args.root, args.name, args.force)
    if args.pane is not None:  # read as `compare` reads a pane; judged by the exercise's rules
        return exercises.check_pane(args.root, args.name, args.pane, args.args, args.gpu)
    if args.args is not None:
        raise UsageError("exercise check: --args picks the recorded run of a --pane; on a GPU every run is judged")
    return exercises.check(args.root, args.name, args.bin_dir, args.gpu)


def cmd_cli_case(args):
    """Run one row of a command-line table (tests/cli/NAME.txt) against a built lesson."""
    return running.cli_case(args.bin, args.row, sys.stderr)


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
    p = _add(sub, "verify", verify.cmd_verify)
    p.add_argument("--gpu", default=None)
    p.add_argument("--resume", action="store_true", help="re-verify only programs whose record is stale or failing")
    p.add_argument("--deadline", type=float, default=400.0, help="seconds after which unfinished jobs count as failures")
    p.add_argument("--only", action="append", metavar="PROGRAM", help="verify only these programs")
    p.add_argument("--no-ctest", action="store_true", help="do not run the GPU CTest workflow (keeps the old counts)")
    p.add_argument("--ctest-only", action="store_true", help="only run the GPU CTest workflow; store its counts")
    for name, func in (("mutate", verify.cmd_mutate), ("attempts", verify.cmd_attempts)):
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
    p = _add(sub, "snippet", cmd_snippet)
    p.add_argument("file", help="lesson name or path, e.g. testing or lessons/testing.cu")
    p.add_argument("name", help="snippet name")
    p = _add(sub, "ce-link", cmd_ce_link)
    p.add_argument("name", help="lesson name, starter/NAME, or a path in the tree")
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
