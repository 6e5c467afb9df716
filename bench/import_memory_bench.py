"""Peak memory of ``judge import`` (issue 34, class 3), each in a fresh subprocess
(``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``): a 30 kB Parquet file whose answers expand
to 600 MB of text, imported with ``--max-file-mb 5`` (refused: how much memory before the
refusal, and what it says), and a 200,000-row Ragas JSONL import (written)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROWS = 200_000


def parquet_bomb(path: Path, rows: int = 600, size: int = 2**20) -> Path:
    """``rows`` answers, each the same ``size`` characters, stored once (dictionary-encoded,
    zstd): a file of a few tens of kB that holds ``rows * size`` characters of text."""
    import pyarrow
    import pyarrow.parquet as pq

    table = pyarrow.Table.from_pylist(
        [
            {
                "user_input": f"question {n}?",
                "retrieved_contexts": [f"chunk {n}"],
                "response": "a" * size,
                "reference": "a",
            }
            for n in range(rows)
        ]
    )
    pq.write_table(table, path, compression="zstd", row_group_size=50)
    return path


def ragas_rows(path: Path, rows: int = ROWS) -> Path:
    """A Ragas JSONL of ``rows`` questions, each with three retrieved texts of its own."""
    with path.open("w", encoding="utf-8") as handle:
        for n in range(rows):
            row = {
                "user_input": f"What does setting {n} do?",
                "retrieved_contexts": [
                    f"Setting {n} turns feature {n % 97} on ({k})." for k in range(3)
                ],
                "response": f"Setting {n} turns feature {n % 97} on.",
                "reference": f"It turns feature {n % 97} on.",
            }
            handle.write(json.dumps(row) + "\n")
    return path


def _peak(argv: list[str], cwd: Path, pythonpath: Path) -> dict[str, Any]:
    """Run ``python -m judge ARGV`` in a fresh process: its peak RSS, time, exit and stderr."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    *err, peak = done.stderr.strip().splitlines()
    return {
        "exit": done.returncode,
        "peak_mb": round(int(peak.removeprefix("maxrss ")) / 1024, 1),
        "seconds": round(time.perf_counter() - started, 1),
        "stderr": [line[:300] for line in err[-3:]],
    }


#: The child: the judge CLI, then its own peak RSS (kB) as its last stderr line. The inputs
#: are made in a process of their own (``_made``): Linux keeps ``ru_maxrss`` across fork and
#: exec, so a child of a parent that built a 600 MB table would report the parent's peak.
_CHILD = """
import atexit, resource, sys
atexit.register(lambda: print("maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr))
from judge.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _made(maker: str, path: Path) -> Path:
    """``path`` written by this module's ``maker`` in a process of its own."""
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
    code += f"import import_memory_bench as b; b.{maker}(__import__('pathlib').Path({str(path)!r}))"
    subprocess.run([sys.executable, "-c", code], check=True)
    return path


def run(tree: Path = ROOT, case: str = "both") -> dict[str, Any]:
    """Peak memory of both imports with the judge package of ``tree``. One case per call:
    ``getrusage`` keeps the largest child's peak, so each case runs in a process of its own."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if case in ("both", "parquet"):
            bomb = _made("parquet_bomb", work / "bomb.parquet")
            results["parquet_kb"] = round(bomb.stat().st_size / 1024, 1)
            toml = work / "judge.toml"
            toml.write_text(
                '[data]\nquestions = "a/questions.jsonl"\ncorpus = "a/corpus.jsonl"\n'
                'run = "a/run.jsonl"\nmax_file_mb = 5\n',
                encoding="utf-8",
            )
            results["parquet"] = _peak(
                ["--config", str(toml), "import", "ragas", str(bomb), "--out", str(work / "a")],
                work,
                tree,
            )
        if case in ("both", "ragas"):
            rows = _made("ragas_rows", work / "rows.jsonl")
            results["ragas_mb"] = round(rows.stat().st_size / 2**20, 1)
            results["ragas"] = _peak(
                ["import", "ragas", str(rows), "--out", str(work / "b")], work, tree
            )
    return results


if __name__ == "__main__":
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    case = sys.argv[2] if len(sys.argv) > 2 else "both"
    print(json.dumps(run(tree, case), indent=2))
