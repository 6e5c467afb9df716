"""Peak memory and the report folder's size at 10,000 and 100,000 questions (issue 35).

For each size: ``judge_bench.write_dataset`` makes a golden set, a 300-chunk corpus and a run
(five chunks of context per question, Japanese-like text), judged once by the lexical judge
(untimed: it fills the cache). Then, each in a fresh process whose own peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, printed by the child at exit) is reported:

1. **cached re-run**: ``judge run --backend lexical`` with every verdict in the cache (it
   compares with the first run's folder);
2. **judge report** of that folder (rendered from its record).

And the newest folder's size against the inputs' (questions, corpus and run as given): the
target is at most 4x, each text stored once. The sizes of the folder's largest files are
listed beside it.

``python bench/memory_bench.py [--questions 10000 100000] [--tree PATH]``: ``--tree`` measures
another checkout of the judge (a worktree of an older commit, for a before/after table). The
100,000-question size takes about ten minutes on two busy cores (most of it the first,
judging run); ``make bench`` runs both sizes (``BENCH_MEMORY_QUESTIONS=10000`` runs one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from startup_bench import USER_ENV

REPO = Path(__file__).resolve().parent.parent
MB = 1024 * 1024

#: The child: the judge CLI, then its own peak RSS (kB) as its last stderr line. Linux keeps
#: ``ru_maxrss`` across fork and exec, so each measured command is a fresh interpreter started
#: by this small parent, never by one that built the data set.
_CHILD = """
import atexit, resource, sys
atexit.register(lambda: print("maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr))
from judge.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _peak(argv: list[str], tree: Path) -> dict[str, Any]:
    """``judge ARGV`` in a fresh process: its peak RSS in MB and its wall seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv],
        cwd=tree,
        env={**USER_ENV, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"judge {argv[2:4]} exited {done.returncode}: {done.stderr[-2000:]}")
    peak = done.stderr.strip().splitlines()[-1]
    return {
        "peak_mb": round(int(peak.removeprefix("maxrss ")) / 1024, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _dataset(tree: Path, folder: Path, n_questions: int) -> Path:
    """``tree``'s own ``judge_bench.write_dataset`` in a process of its own (its judge.toml)."""
    script = (
        "import sys; sys.path.insert(0, 'bench'); import judge_bench; from pathlib import Path; "
        f"print(judge_bench.write_dataset(Path({str(folder)!r}), {n_questions}))"
    )
    env = {**USER_ENV, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tree, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"write_dataset exited {done.returncode}: {done.stderr[-2000:]}")
    return Path(done.stdout.strip())


def folder_size(folder: Path, inputs: list[Path]) -> dict[str, Any]:
    """The folder's bytes against the inputs', with its files largest first (MB)."""
    files = {p.name: p.stat().st_size for p in folder.iterdir() if p.is_file()}
    total, given = sum(files.values()), sum(p.stat().st_size for p in inputs)
    return {
        "folder_mb": round(total / MB, 1),
        "inputs_mb": round(given / MB, 1),
        "ratio": round(total / given, 2),
        "files_mb": {
            name: round(size / MB, 1)
            for name, size in sorted(files.items(), key=lambda kv: -kv[1])
            if size >= MB // 10
        },
    }


def measure(tree: Path, n_questions: int) -> dict[str, Any]:
    """One size: the first run (untimed), the cached re-run's and ``judge report``'s peaks,
    and the folder against the inputs."""
    with tempfile.TemporaryDirectory() as tmp:
        toml = _dataset(tree, Path(tmp), n_questions)
        judge = ["--config", str(toml)]
        first = _peak([*judge, "run", "--backend", "lexical"], tree)
        rerun = _peak([*judge, "run", "--backend", "lexical"], tree)
        report = _peak([*judge, "report"], tree)
        reports = Path(tmp) / "reports"
        folder = reports / (reports / "latest").read_text(encoding="utf-8").strip()
        inputs = [Path(tmp) / f"{name}.jsonl" for name in ("questions", "corpus", "run")]
        return {
            "questions": n_questions,
            "first_run": first,
            "cached_rerun": rerun,
            "report": report,
            "folder": folder_size(folder, inputs),
            "load": round(os.getloadavg()[0], 1),
        }


def run(tree: Path = REPO, sizes: tuple[int, ...] = (10_000, 100_000)) -> dict[str, Any]:
    return {"sizes": [measure(tree, n) for n in sizes]}


def lines(result: dict[str, Any]) -> list[str]:
    """The figures as ``make bench`` prints them."""
    out = []
    for size in result["sizes"]:
        n, folder = size["questions"], size["folder"]
        out.append(
            f"  {n:,} questions (load {size['load']}): peak RSS of the cached re-run "
            f"{size['cached_rerun']['peak_mb']:,} MB, of judge report {size['report']['peak_mb']:,}"
            f" MB (target <= 1,024 MB); folder {folder['folder_mb']} MB, {folder['ratio']}x the "
            f"inputs' {folder['inputs_mb']} MB (target <= 4x)"
        )
        out.append(
            "    largest files: "
            + ", ".join(f"{name} {mb} MB" for name, mb in list(folder["files_mb"].items())[:6])
        )
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--questions", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    result = run(args.tree.resolve(), tuple(args.questions))
    print("\n".join(lines(result)))
    print(json.dumps(result))
