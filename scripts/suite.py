#!/usr/bin/env python3
"""suite: the CUDA lesson suite's one tool (Python 3 standard library only; plots need matplotlib).

A thin entry point over the package scripts/suitelib/ (one module per concern; see its __init__).
Subcommands: build, run, compare, bless, check, sync, verify, mutate, attempts, plot, snippet,
ce-link, exercise start|check, list-runs, list-checks, cli-case.  `suite.py COMMAND -h` for each.
Exit codes: 0 success, 1 a check or run failed, 2 bad usage, 77 no GPU (skipped).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suitelib.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(default_root=Path(__file__).resolve().parent.parent))
