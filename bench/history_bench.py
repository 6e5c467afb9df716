"""The season's picture at scale: building and rendering ``reports/history.html`` for a year of
nightly runs on a large golden set, as a ratio to reading the same files.

A reports directory of ``nights`` folders is generated (each with the ``manifest.json`` of a
real run of the shipped sample, a ``values.json`` of ``questions`` questions on four types with
the retrieval and judge metrics a run keeps, and a ``marks.json``), with its ``history.jsonl``.
Then, alternating in one process so that the load of a shared machine falls on both sides:

- **floor**: every night's ``values.json``, ``manifest.json`` and ``marks.json`` read and parsed
  with ``json.loads`` (the reads the page cannot avoid);
- **build**: ``judge.pipeline.history.season_view``, the season read and computed (values,
  intervals, marks, changes);
- **render**: ``render_history_page`` of that season (the page's bytes).

``python bench/history_bench.py [--nights N] [--questions Q] [--rounds R]``; ``make bench``
runs it at a size this machine finishes in minutes (``bench/run.py``) and says which.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.pipeline.evaluate import evaluate
from judge.pipeline.history import season_view
from judge.record.store import ReportsDir
from judge.report.history_page import render_history_page
from tests.report.review_screens import sample_config

TYPES = ("factual", "procedural", "negative", "out_of_scope")
RETRIEVAL = ("recall@1", "recall@5", "recall@10", "hit@1", "hit@5", "hit@10", "mrr", "ndcg@5")
JUDGE = ("faithfulness", "relevance", "full_marks", "quote_verified", "ok_share")


def _values(questions: int, rng: random.Random) -> str:
    ids = [f"q{i:05d}" for i in range(questions)]
    types = {qid: TYPES[i % len(TYPES)] for i, qid in enumerate(ids)}
    retrieval = {m: {q: float(rng.random() < 0.8) for q in ids} for m in RETRIEVAL}
    judge = {m: {q: float(rng.choice((0, 1, 2, 2))) for q in ids} for m in JUDGE[:2]}
    judge.update({m: {q: float(rng.random() < 0.7) for q in ids} for m in JUDGE[2:]})
    data = {"format_version": 3, "types": types, "values": {"retrieval": retrieval, "judge": judge}}
    return json.dumps(data, separators=(",", ":"))


def make_season(root: Path, nights: int, questions: int) -> Path:
    """A reports directory of ``nights`` generated folders; returns its path."""
    sample = evaluate(sample_config(root / "sample"), backend="lexical")
    manifest = json.loads((sample.folder.path / "manifest.json").read_text(encoding="utf-8"))
    entry = json.loads(sample.report.entry.model_dump_json())
    reports = root / "reports"
    reports.mkdir()
    rng = random.Random(20261203)
    lines = []
    for night in range(nights):
        day = datetime(2026, 1, 1, 3, tzinfo=UTC) + timedelta(days=night)
        name = f"{day:%Y%m%dT%H%M%SZ}-e489322e"
        folder = reports / name
        folder.mkdir()
        (folder / "manifest.json").write_text(
            json.dumps({**manifest, "folder": name}), encoding="utf-8"
        )
        (folder / "values.json").write_text(_values(questions, rng), encoding="utf-8")
        marks = {"format_version": 1, "verdict": "ok: no regression", "marks": []}
        (folder / "marks.json").write_text(json.dumps(marks), encoding="utf-8")
        lines.append(json.dumps({**entry, "folder": name, "started_at": day.isoformat()}))
    (reports / "history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return reports


def floor(reports: Path) -> None:
    for folder in sorted(p for p in reports.iterdir() if p.is_dir()):
        for name in ("values.json", "manifest.json", "marks.json"):
            json.loads((folder / name).read_bytes())


def run(nights: int = 365, questions: int = 10_000, rounds: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        reports = make_season(Path(tmp), nights, questions)
        size = sum(f.stat().st_size for f in reports.rglob("values.json"))
        times: dict[str, list[float]] = {"floor": [], "build": [], "render": []}
        page = b""
        for _ in range(rounds):
            start = time.perf_counter()
            floor(reports)
            times["floor"].append(time.perf_counter() - start)
            start = time.perf_counter()
            view = season_view(ReportsDir(reports), Path(tmp) / "no-baseline.json")
            times["build"].append(time.perf_counter() - start)
            start = time.perf_counter()
            page = render_history_page(view, str(reports))
            times["render"].append(time.perf_counter() - start)
    median = {k: statistics.median(v) for k, v in times.items()}
    return {
        "nights": nights,
        "questions": questions,
        "rounds": rounds,
        "values_json_mb": round(size / 1e6, 1),
        "page_kb": round(len(page) / 1e3, 1),
        "floor_s": round(median["floor"], 2),
        "build_s": round(median["build"], 2),
        "render_s": round(median["render"], 3),
        "build_ratio": round(median["build"] / median["floor"], 2),
        "render_ratio": round(median["render"] / median["floor"], 3),
        "load": round(os.getloadavg()[0], 1),
    }


def lines(result: dict[str, Any]) -> list[str]:
    r = result
    return [
        f"  {r['nights']} nights x {r['questions']:,} questions ({r['values_json_mb']} MB of "
        f"values.json; median of {r['rounds']}, load {r['load']}):",
        f"  floor (read and parse every night's files) {r['floor_s']} s",
        f"  build the season {r['build_s']} s = {r['build_ratio']}x the floor",
        f"  render history.html ({r['page_kb']} kB) {r['render_s']} s = {r['render_ratio']}x "
        "the floor",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("\n".join(lines(run(args.nights, args.questions, args.rounds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
