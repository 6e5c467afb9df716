"""The property-based tests of the error boundary (``tests/hostile/test_converters.py``) run
long: each importer's sample files and a report folder's state files mutated at random,
``JUDGE_FUZZ_EXAMPLES`` inputs per test (2,000 here; the fast suite tries 25). Prints how many
inputs were tried and how each ended (exit 0: read; exit 2: refused in located lines); a
traceback or an unlocated message fails the run."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = 2000


def run(examples: int = EXAMPLES) -> dict[str, Any]:
    """Run the property tests with ``examples`` inputs each; what they tried and found."""
    os.environ["JUDGE_FUZZ_EXAMPLES"] = str(examples)
    sys.path.insert(0, str(ROOT))
    import pytest

    started = time.perf_counter()
    code = pytest.main(
        ["-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "hostile" / "test_converters.py")]
    )
    from tests.hostile.test_converters import TRIED

    return {
        "examples_per_test": examples,
        "passed": code == 0,
        "seconds": round(time.perf_counter() - started, 1),
        "tried": {test: dict(sorted(codes.items())) for test, codes in TRIED.items()},
    }


def describe(result: dict[str, Any]) -> list[str]:
    lines = [
        f"  {'passed' if result['passed'] else 'FAILED'} in {result['seconds']} s, "
        f"up to {result['examples_per_test']:,} inputs per test"
    ]
    for test, codes in result["tried"].items():
        ends = ", ".join(f"{count:,} exit {code}" for code, count in codes.items())
        lines.append(f"  {test}: {sum(codes.values()):,} inputs ({ends})")
    return lines


if __name__ == "__main__":
    print("\n".join(describe(run(int(sys.argv[1]) if len(sys.argv) > 1 else EXAMPLES))))
