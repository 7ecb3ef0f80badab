#!/usr/bin/env python3
"""Class runner of the tool's tests, for CTest (one test per class).

  run.py --list         print every test class as MODULE.CLASS (CMake fails configure if this fails)
  run.py MODULE.CLASS   run one class: exit 0 passed, 1 failed, 77 skipped for a missing optional
                        dependency (CTest SKIP_RETURN_CODE), so a missing matplotlib or node is a skip."""

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from helpers import OPTIONAL  # noqa: E402

OPTIONAL_WORDS = (OPTIONAL, "not checked:", "not installed")


def modules():
    return sorted(p.stem for p in HERE.glob("test_*.py"))


def classes():
    loader, found = unittest.TestLoader(), []
    for name in modules():
        module = __import__(name)
        for attr in sorted(dir(module)):
            obj = getattr(module, attr)
            if (isinstance(obj, type) and issubclass(obj, unittest.TestCase) and attr.startswith("Test")
                    and obj.__module__ == name and loader.getTestCaseNames(obj)):
                found.append(f"{name}.{attr}")
    return found


def run_class(*dotted):
    suite = unittest.TestLoader().loadTestsFromNames(dotted)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    optional = [reason for _, reason in result.skipped if any(w in reason for w in OPTIONAL_WORDS)]
    if optional:
        print(f"SKIPPED ({len(optional)} tests): {optional[0]}")
        return 77
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print("\n".join(classes()))
        sys.exit(0)
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(run_class(*sys.argv[1:]))
