"""A tiny test runner, so the project needs nothing but Python: runs every test_*
function of every test_*.py file here, prints pytest-like lines, exits 1 on failure."""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    sys.dont_write_bytecode = True  # leave the project as it was
    passed, failed = 0, []
    for path in sorted(here.glob("test_*.py")):
        module = importlib.import_module(path.stem)
        for name in sorted(n for n in vars(module) if n.startswith("test_")):
            fn = getattr(module, name)
            if not callable(fn):
                continue
            try:
                fn()
            except Exception as e:
                failed.append(f"{path.name}::{name}")
                print(f"FAILED {path.name}::{name} - {type(e).__name__}: {e}")
                if not isinstance(e, AssertionError):  # an assert says enough; a crash needs its place
                    print("".join(traceback.format_exception(e)[-2:]).rstrip())
            else:
                passed += 1
                print(f"PASSED {path.name}::{name}")
    summary = f"{len(failed)} failed, {passed} passed" if failed else f"{passed} passed"
    print(f"=== {summary} ===")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
