"""Every subcommand of the tool (cmd_*), one place: each only glues the modules below together.
Layers, bottom up: model; transcripts, running, figures, celink; catalogue, docs, anchors, plots;
generate, checks, judge, pane, panerecord, speed, exercises, verify; commands; cli (argparse and main)."""

import shlex
import sys

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, EXIT_SKIP, SuiteError, UsageError
from . import catalogue, checks, docs, exercises, generate, plots, running, verifyrun
from .model import Program, all_runs, data_recordings, find_lesson_run, find_run, lesson, programs, resolve_source
from .running import require_gpu
from .pane import read_pasted
from .transcripts import compare, format_transcript, parse_transcript, run_against_transcript, staleness
from .verify import (check_verify_record, load_record, record_ctest_only, resume_selection, select_programs,
                     verify_table, write_record)


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
            f"  save its executor pane whole (from 'Program returned: N' on) to a file, then check it: "
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
    The pane reader itself is pane.read_pasted (exercise check --pane uses it too)."""
    return read_pasted(args.stdout, args.stderr, args.exit_code, expected)


def cmd_bless(args):
    """Record transcripts on this machine's GPU (the only subcommand that writes them)."""
    root = args.root
    if not args.all and not args.ids:
        raise UsageError("bless: name runs to record, or --all")
    runs = all_runs(root) if args.all else [find_run(root, i) for i in args.ids]  # names first, then the GPU
    facts = running.require_gpu("bless")
    gpu, bin_dir = args.gpu or facts.slug, args.bin_dir
    if bin_dir is None:  # one parallel build of every program first, not one build a run
        running.cmake_build(root, sorted({run.program.target for run in runs}))
        bin_dir = running.default_bin_dir(root)
    for run in runs:
        result = running.run_binary(running.binary_for(root, run.program, bin_dir), run.args)
        if result["exit_code"] == EXIT_SKIP:
            raise SuiteError(f"bless: {run.id} exited 77 (no usable device); nothing recorded")
        path = run.transcript_path(gpu)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_transcript(run, facts.name, facts.toolkit, result), encoding="utf-8")
        print(f"recorded {path.relative_to(root)} (exit {result['exit_code']})")
    if args.all:
        bless_data(root, gpu, bin_dir)
    return EXIT_OK


def bless_data(root, gpu, bin_dir):
    """Record the data files (raw stdout of the runs scripts/course.json lists; part of 'bless --all').
    Their charts are drawn by the `charts` command, where matplotlib is (the GPU machine has none)."""
    out_dir = root / "expected" / gpu / "data"
    for name, argv, csv_name, kind, image in data_recordings(root):
        prog = Program(root, root / "lessons" / (name + ".cu"))
        result = running.run_binary(running.binary_for(root, prog, bin_dir), argv)
        if result["exit_code"] != EXIT_OK:
            raise SuiteError(f"bless: {name} {' '.join(argv)} exited {result['exit_code']}; no data recorded")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / csv_name).write_text(result["stdout"], encoding="utf-8")
        chart = f" (its chart {image}: draw it with 'scripts/suite.py charts')" if image else ""
        print(f"recorded {(out_dir / csv_name).relative_to(root)}{chart}")


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


def cmd_charts(args):
    """Draw the recorded charts from the recorded CSVs and record their sha256 (check compares them)."""
    for line in plots.record_charts(args.root, args.gpu or DEFAULT_GPU):
        print(line)
    return EXIT_OK


def cmd_snippet(args):
    """Print one snippet of a lesson (dedented, markers stripped)."""
    sys.stdout.write(docs.snippet_text(resolve_source(args.root, args.file), args.name))
    return EXIT_OK


def cmd_ce_link(args):
    """Print a Compiler Explorer link that opens a lesson (or starter) and runs it on a T4."""
    print(docs.ce_link(resolve_source(args.root, args.name).text, args.args))
    return EXIT_OK


def cmd_exercise(args):
    """Start an exercise from a starter, or check your exercise by what it does: on a GPU, or from
    Compiler Explorer executor panes saved whole (--pane FILE [--args '...'], one per run)."""
    panes = [list(p) for p in args.panes]
    loose = [a for a in [args.args] + (getattr(args, "extra_args", None) or []) if a is not None]
    if args.action == "start":
        if panes or loose:
            raise UsageError("exercise start takes no --pane or --args (they belong to exercise check)")
        return exercises.start(args.root, args.name, args.force)
    if panes:  # read as `compare` reads a pane; judged by the exercise's rules
        if len(loose) == 1 and len(panes) == 1 and panes[0][1] is None:
            panes[0][1] = loose[0]  # --args before its only --pane
        elif loose:
            raise UsageError(f"--args {loose[0]!r} belongs to no --pane: with several panes, give each pane's "
                             f"--args right after it (--pane A --args '...' --pane B)")
        return exercises.check_panes(args.root, args.name, [tuple(p) for p in panes], args.gpu)
    if loose:
        raise UsageError("exercise check: --args picks the recorded run of a --pane; on a GPU every run is judged")
    return exercises.check(args.root, args.name, args.bin_dir, args.gpu)


def cmd_cli_case(args):
    """Run one row of a command-line table (tests/cli/NAME.txt) against a built lesson."""
    return running.cli_case(args.bin, args.row, sys.stderr)


def cmd_verify(args):
    """(GPU) Prove every program and write expected/<gpu>/verify.json and verify.md."""
    root = args.root
    if not args.deadline > 0:  # also refuses nan
        raise UsageError(f"verify: --deadline expects a positive number of seconds, got {args.deadline}")
    select_programs(root, args.only)  # a bad --only is a usage error, GPU or not
    facts = require_gpu("verify")
    gpu = args.gpu or facts.slug
    if args.ctest_only:
        return record_ctest_only(root, gpu)
    if args.resume:
        args.only = resume_selection(root, gpu)
    progs, cats = select_programs(root, args.only), catalogue.load(root)
    record = verifyrun.run_verify(root, args, facts, gpu, progs, cats)
    print(verify_table(record))
    problems = check_verify_record(root, gpu)
    for p in problems:
        print("error: " + p, file=sys.stderr)
    print(f"verify: {len(problems)} problem(s); details in build/verify.log", file=sys.stderr)
    return EXIT_FAIL if problems else EXIT_OK


def cmd_attempts(args):
    """(GPU) Build and judge every student attempt over the recorded runs (up to the first that rejects it); record them under student_attempts."""
    cats, names = catalogue.selected(args.root, args.names, "attempts")  # names first, then the GPU
    facts = require_gpu("attempts")
    root, gpu = args.root, args.gpu or facts.slug
    sass = catalogue.native_arch()  # the GPU's own machine code beside the Build: line's, as verify builds them
    jobs = [(root, a, gpu, cats[n].student_worded, sass) for n in names for a in cats[n].attempts]
    entries = catalogue.run_parallel(exercises.run_attempt, jobs)
    record = load_record(root, gpu)
    if record is None:
        raise SuiteError(f"attempts: expected/{gpu}/verify.json does not exist; run verify first")
    record["student_attempts"] = [e for e in record.get("student_attempts", []) if e["lesson"] not in names] + entries
    write_record(root, gpu, record)
    print(exercises.attempt_table(entries))
    return EXIT_FAIL if not all(exercises.attempt_entry_ok(e) for e in entries) else 0


def cmd_mutate(args):
    """(GPU) Build and run every mutant; record killed/survived in expected/<gpu>/verify.json."""
    cats, names = catalogue.selected(args.root, args.names, "mutate")  # names first, then the GPU
    facts = require_gpu("mutate")
    root, gpu = args.root, args.gpu or facts.slug
    sass = catalogue.native_arch()  # as verify builds them: the GPU's code from the line's own PTX
    jobs = [(root, lesson(root, n), m, sass) for n in names for m in cats[n].mutants]
    results = {}
    for (_, prog, _, _), entry in zip(jobs, catalogue.run_parallel(catalogue.run_mutant, jobs)):
        results.setdefault(prog.rel, []).append(entry)
    record = load_record(root, gpu)
    if record is None:
        raise SuiteError(f"mutate: expected/{gpu}/verify.json does not exist; run verify first")
    for entry in record["programs"]:
        if entry["program"] in results:
            entry["mutants"] = results[entry["program"]]
    write_record(root, gpu, record)
    print(catalogue.mutant_table(results))
    survivors = [e for es in results.values() for e in es if not e["killed"] and not e.get("blind_spot")]
    return EXIT_FAIL if survivors else 0
