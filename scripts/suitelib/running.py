"""Running programs: binaries, builds through CMake, the GPU facts of this machine, CLI table rows."""

import glob
import errno
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

from . import DEFAULT_GPU, EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE, Skipped, SuiteError, UsageError

RUN_TIMEOUT_S = 300
CTEST_LINE = re.compile(r"Test\s+#\d+: (\S+) \.*[* ]*(Passed|Skipped|Failed|Not Run|Timeout|Exception|"
                        r"\*\*\*Failed|\*\*\*Skipped|\*\*\*Not Run|\*\*\*Timeout|\*\*\*Exception)")

GpuFacts = namedtuple("GpuFacts", ["name", "slug", "toolkit"])
GpuFacts.__doc__ = "This machine's GPU: its model name, the expected/<slug>/ folder name, the nvcc release."


class DriverError(SuiteError):
    """A GPU is present but its driver fails: a finding (exit 1), never a skip."""


def run_binary(binary, args, timeout=RUN_TIMEOUT_S, prefix=()):
    """Run a program; return a dict: stdout, stderr (text), exit_code (int), wall_s, output_bytes."""
    binary = Path(binary)
    if not prefix:
        if not binary.is_file():
            raise UsageError(f"{binary}: no such program; build it first (scripts/suite.py build)")
        if not os.access(binary, os.X_OK):
            raise UsageError(f"{binary}: is not executable (chmod +x it, or rebuild it)")
    start = time.monotonic()
    for attempt in range(5):
        try:
            proc = subprocess.Popen(list(prefix) + [str(binary)] + list(args),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            break
        except OSError as exc:
            # "Text file busy": a child another thread forked while this program was being written
            # by Python (the tests' stand-in programs, on many threads at once) still holds it open.
            if exc.errno != errno.ETXTBSY or attempt == 4:
                raise SuiteError(f"{binary}: cannot run it ({exc.strerror})")
            time.sleep(0.2 * (attempt + 1))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise SuiteError(f"{binary.name} {' '.join(args)}: timed out after {timeout} s")
    return {"stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "exit_code": int(proc.returncode), "wall_s": time.monotonic() - start,
            "output_bytes": len(out) + len(err)}


def run_measured(binary, args, cpu):
    """Run pinned to one CPU and read its own rusage (wall, CPU seconds, peak RSS, output bytes)."""
    r_out, w_out = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.sched_setaffinity(0, {cpu})
            os.dup2(w_out, 1)
            os.dup2(w_out, 2)
            os.execv(str(binary), [str(binary)] + list(args))
        finally:
            os._exit(127)
    os.close(w_out)
    size = 0
    with os.fdopen(r_out, "rb") as pipe:
        for chunk in iter(lambda: pipe.read(65536), b""):
            size += len(chunk)
    _, status, usage = os.wait4(pid, 0)
    return {"exit_code": os.waitstatus_to_exitcode(status),
            "wall_s_1core": round(time.monotonic() - start, 3),
            "cpu_s_1core": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mib": round(usage.ru_maxrss / 1024.0, 1), "output_bytes": size}


def gpu_slug(name):
    slug = re.sub(r"[^a-z0-9]+", "", name.lower().replace("nvidia", "").replace("tesla", ""))
    return slug or "gpu"


def detect_gpu():
    """GpuFacts of GPU 0; None where there is no GPU; DriverError where one is present but fails."""
    if shutil.which("nvidia-smi") is None:
        if glob.glob("/dev/nvidia[0-9]*"):
            raise DriverError("a GPU device node exists (/dev/nvidia0) but nvidia-smi is missing: the driver "
                              "is not installed correctly")
        return None
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DriverError(f"nvidia-smi failed to answer: {exc}")
    name = done.stdout.strip().splitlines()[0].strip() if done.stdout.strip() else ""
    if done.returncode == 0 and name:
        return GpuFacts(name, gpu_slug(name), nvcc_version())
    said = (done.stdout + done.stderr).strip()
    if "No devices were found" in said or not glob.glob("/dev/nvidia[0-9]*"):
        return None
    raise DriverError(f"a GPU is present but its driver fails: nvidia-smi exit {done.returncode}: "
                      + (said.splitlines() or ["(no output)"])[0])


def require_gpu(command):
    """GpuFacts, or Skipped (no GPU) / DriverError (broken driver)."""
    facts = detect_gpu()
    if facts is None:
        raise Skipped(f"{command}: no NVIDIA GPU here (nvidia-smi found none)")
    return facts


def nvcc_version():
    try:
        text = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else "unknown"


def default_bin_dir(root):
    return Path(root) / "build" / "dev" / "bin"


def cmake_build(root, targets=(), preset="dev"):
    """Configure and build a preset (targets: all by default); SuiteError in one line if it fails."""
    if shutil.which("cmake") is None:
        raise UsageError("cmake is not on PATH: install CMake >= 3.25, or build by hand and pass --bin-dir")
    steps = [["cmake", "--preset", preset], ["cmake", "--build", "--preset", preset]
             + (["--target"] + list(targets) if targets else [])]
    for cmd in steps:
        done = subprocess.run(cmd, cwd=root, stdout=subprocess.DEVNULL if cmd[1] == "--preset" else None)
        if done.returncode != 0:
            raise SuiteError(f"build failed: {' '.join(cmd)} exited {done.returncode} (see the output above)")


def binary_for(root, program, bin_dir):
    """The built binary of a program. Without --bin-dir it is (re)built through the dev preset every
    time, as `exercise check` does: a binary older than its source must never be tested (the build
    is a no-op when it is fresh). A --bin-dir folder is used as it is."""
    binary = Path(bin_dir or default_bin_dir(root)) / program.target
    if bin_dir is not None:
        if not binary.is_file():
            raise UsageError(f"{binary} does not exist (the --bin-dir folder holds no {program.target}); "
                             f"build it first (scripts/suite.py build)")
    else:
        cmake_build(root, [program.target])
    return binary


def transcript_gpu(root, gpu, facts):
    """Which expected/<gpu>/ to compare with: --gpu, this GPU's folder, else the default."""
    base = Path(root) / "expected"
    if gpu:
        if not (base / gpu).is_dir():
            have = ", ".join(sorted(p.name for p in base.iterdir() if p.is_dir())) if base.is_dir() else "none"
            raise UsageError(f"no transcripts recorded for GPU '{gpu}' (expected/{gpu}/ does not exist; have: {have})")
        return gpu
    if facts and (base / facts.slug).is_dir():
        return facts.slug
    return DEFAULT_GPU


def skip_or_fail(what, result, next_steps=()):
    """A program's exit 77: a skip where this machine has no GPU, a finding (exit 1) where it has one.
    The skip is one line with the program's reason, then next_steps (lines: what to do instead)."""
    first = (result["stderr"].strip().splitlines() or [""])[0]
    if gpu_present():
        raise SuiteError(f"{what} exited 77 (no usable CUDA device) on a machine with a GPU: the driver or "
                         f"device fails: {first}")
    print(f"skipped: {what} needs a CUDA GPU (exit 77): {first}", file=sys.stderr)
    for line in next_steps:
        print(line, file=sys.stderr)
    return EXIT_SKIP


def gpu_present():
    """True where a GPU is present (working or not), False where there is none."""
    try:
        return detect_gpu() is not None
    except DriverError:
        return True


# --- command-line tables (tests/cli/NAME.txt) -------------------------------------------
def parse_cli_row(row):
    parts = [p.strip() for p in row.split("|", 2)]
    if len(parts) != 3:
        raise UsageError(f"cli-case: malformed row (want 'EXPECT | TEXT | ARGS'): {row}")
    expect, text, argline = parts
    if expect != "ok" and not expect.isdigit():
        raise UsageError(f"cli-case: EXPECT must be 'ok' or an exit code, got {expect!r}")
    if not text and expect not in ("ok", "0"):
        raise UsageError(f"cli-case: a failing row needs the TEXT its error line must contain: {row}")
    try:
        return expect, text, shlex.split(argline)
    except ValueError as exc:  # an unterminated quote in the row's arguments
        raise UsageError(f"cli-case: cannot split the row's arguments {argline!r} ({exc}): {row}")


def cli_case_problems(expect, text, result, has_gpu):
    """What is wrong with one run of a CLI-table row (empty when it behaved)."""
    rc, err_lines = result["exit_code"], result["stderr"].splitlines()
    first = err_lines[0] if err_lines else ""
    problems = []
    if expect == "ok":
        if rc == EXIT_SKIP and has_gpu:
            problems.append("exit 77, expected 0 (this machine has a GPU)")
        elif rc not in (EXIT_OK, EXIT_SKIP):
            problems.append(f"exit {rc}, expected 0 (GPU) or 77 (no GPU)")
        if rc == EXIT_SKIP and "no usable CUDA device" not in first:
            problems.append(f"exit 77 without the one-line 'no usable CUDA device' message: {first!r}")
    elif expect == "0":
        if rc != EXIT_OK:
            problems.append(f"exit {rc}, expected 0")
        if "usage" not in result["stdout"].lower() or result["stderr"]:
            problems.append("help must print the usage on stdout and nothing on stderr")
    else:
        if rc != int(expect):
            problems.append(f"exit {rc}, expected {expect}")
        if text not in first:
            problems.append(f"first stderr line {first!r} does not mention {text!r}")
        if int(expect) == EXIT_USAGE:
            if not first.startswith("error:"):
                problems.append(f"first stderr line should start with 'error:': {first!r}")
            if result["stdout"]:
                problems.append("a bad command line must print nothing on stdout")
            if not any("usage" in line.lower() for line in err_lines[1:]):
                problems.append("the error line must be followed by the usage")
    return problems


def cli_case(binary, row, out, has_gpu=None):
    """Run one CLI-table row; print the verdict; return the exit code."""
    expect, text, argv = parse_cli_row(row)
    result = run_binary(Path(binary), argv, timeout=120)
    if has_gpu is None:
        has_gpu = result["exit_code"] == EXIT_SKIP and gpu_present()
    problems = cli_case_problems(expect, text, result, has_gpu)
    label = " ".join(shlex.quote(a) for a in argv)
    if problems:
        print(f"FAILED: {Path(binary).name} {label}: " + "; ".join(problems), file=out)
        return EXIT_FAIL
    first = (result["stderr"].splitlines() or [""])[0]
    print(f"ok: {Path(binary).name} {label} -> exit {result['exit_code']}: {first}")
    return EXIT_OK


# --- the GPU CTest run (recorded by verify) ---------------------------------------------
def ctest_counts(text):
    """{passed, failed, skipped} from CTest's per-test lines."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for _, status in CTEST_LINE.findall(text):
        status = status.strip("*")
        counts["passed" if status == "Passed" else "skipped" if status == "Skipped" else "failed"] += 1
    return counts


# The CTest label verify's CTest run keeps: the command-line tables, which run the lesson binaries,
# so their outcome depends on the GPU. The `gpu` tests (each run against its transcript) are the
# comparison verify's own run jobs have just made, with the same code; the static, tool and host
# tests are CPU work with the same outcome on any machine, which CI runs on every commit.
GPU_DEPENDENT_LABELS = "^cli$"


def ctest_gpu(root, bdir=None):
    """The GPU CTest run and its test counts. With bdir (verify's native tree, the programs built
    for sm_75 and sm_90, as the `gpu` preset builds them): ctest there, no reconfigure or rebuild,
    the command-line tables only (the transcript runs are verify's own jobs; the rest is CI's).
    Without: the `gpu` workflow (configure, build, test). The check of this very record
    (static.verify-record) is left out: it reads the record being written."""
    jobs = str(max(2, (os.cpu_count() or 2) // 2))
    if bdir is None:
        steps = [["cmake", "--preset", "gpu"], ["cmake", "--build", "--preset", "gpu"],
                 ["ctest", "--preset", "gpu", "-E", "^static[.]verify-record$"]]
    else:
        steps = [["ctest", "--test-dir", str(bdir), "-j", jobs, "--timeout", "600", "--output-on-failure",
                  "-L", GPU_DEPENDENT_LABELS, "-E", "^static[.]verify-record$"]]
    log, rc = [], 0
    start = time.monotonic()
    for cmd in steps:
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        log.append(f"$ {' '.join(cmd)}\n{done.stdout}{done.stderr}")
        rc = done.returncode
        if rc != 0 and cmd[0] == "cmake":
            break
    (Path(root) / "build").mkdir(exist_ok=True)
    (Path(root) / "build" / "verify-ctest.log").write_text("\n".join(log), encoding="utf-8")
    counts = ctest_counts(log[-1])
    if rc != 0 and counts["failed"] == 0:
        counts["failed"] = 1  # the workflow failed before or outside the tests (configure, build)
    counts["failed_tests"] = failed_tests(log[-1])
    counts["command"] = " ".join(steps[-1])
    counts["wall_s"] = round(time.monotonic() - start, 1)
    return counts


def failed_tests(text):
    return [name for name, status in CTEST_LINE.findall(text) if status.strip("*") not in ("Passed", "Skipped")]
