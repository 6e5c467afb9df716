"""How long ``judge --help`` and ``import judge`` take: the wait before any command answers.

Each is run ``repeats`` times in a fresh interpreter; the median wall time is reported (the
first run warms the file cache and is not counted).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: The environment of every benchmarked command (here and in ``judge_bench``): this one's,
#: except that Python may write the package's bytecode. A user's ``judge`` runs from bytecode
#: once it has run once; a machine that sets ``PYTHONDONTWRITEBYTECODE`` (this project's
#: sandboxes do) would otherwise compile the package's 120 modules from source on every timed
#: run (about 0.4 s of a cached re-run). The untimed run before the timed ones writes it.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _median_seconds(command: list[str], repeats: int) -> float:
    subprocess.run(command, cwd=REPO, capture_output=True, check=True, env=USER_ENV)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, capture_output=True, check=True, env=USER_ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(repeats: int = 9) -> dict[str, Any]:
    python = sys.executable
    return {
        "help_s": round(_median_seconds([python, "-m", "judge", "--help"], repeats), 3),
        "import_s": round(_median_seconds([python, "-c", "import judge"], repeats), 3),
        "python_s": round(_median_seconds([python, "-c", "pass"], repeats), 3),
    }


if __name__ == "__main__":
    print(run())
