"""The season's picture at scale: building and rendering ``reports/history.html`` for a year of
nightly runs on a large golden set, as a ratio to reading what it needs.

A reports directory of ``nights`` folders is generated (each with the ``manifest.json`` of a
real run of the shipped sample, a ``values.json`` of ``questions`` questions on four types with
the retrieval and judge metrics a run keeps, and a ``marks.json`` holding the night's summary as
a run writes it), with its ``history.jsonl``. Then, alternating in one process so that the load
of a shared machine falls on every side:

- **summaries**: ``history.jsonl`` and every night's ``marks.json`` read and parsed with
  ``json.loads`` (the reads the page cannot avoid);
- **checked read**: the same files through the harness's reader (``read_history``,
  ``read_json_document``: size, UTF-8, format version and fields checked), as the season
  reads them;
- **values floor**: every night's ``values.json``, ``manifest.json`` and ``marks.json`` read and
  parsed with ``json.loads`` (what the season read before the summaries were kept);
- **build**: ``judge.pipeline.history.season_view``, the season read and computed (points,
  marks, changes);
- **render**: ``render_history_page`` of that season (the page's bytes).

``--old`` also times the season of the same folders without their summaries (``marks.json`` of
format 1: each night summarised from its ``values.json``, the path a folder written before takes).

``python bench/history_bench.py [--nights N] [--questions Q] [--rounds R] [--old]``; ``make bench``
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

from judge.io.state import read_json_document
from judge.pipeline.evaluate import evaluate
from judge.pipeline.history import MARKS, season_view
from judge.record.store import ReportsDir
from judge.report.history_page import render_history_page
from judge.results.compare import QuestionValues
from judge.results.manifest import Manifest
from judge.results.night_summary import summarise_night
from judge.results.season_view import NightMarks
from tests.report.review_screens import sample_config

TYPES = ("factual", "procedural", "negative", "out_of_scope")
RETRIEVAL = ("recall@1", "recall@5", "recall@10", "hit@1", "hit@5", "hit@10", "mrr", "ndcg@5")
JUDGE = ("faithfulness", "relevance", "full_marks", "quote_verified", "ok_share")


def _values(questions: int, rng: random.Random) -> dict[str, Any]:
    ids = [f"q{i:05d}" for i in range(questions)]
    types = {qid: TYPES[i % len(TYPES)] for i, qid in enumerate(ids)}
    retrieval = {m: {q: float(rng.random() < 0.8) for q in ids} for m in RETRIEVAL}
    judge = {m: {q: float(rng.choice((0, 1, 2, 2))) for q in ids} for m in JUDGE[:2]}
    judge.update({m: {q: float(rng.random() < 0.7) for q in ids} for m in JUDGE[2:]})
    return {"format_version": 3, "types": types, "values": {"retrieval": retrieval, "judge": judge}}


def _marks(manifest: Manifest, values: dict[str, Any]) -> str:
    """``marks.json`` as a run writes it: no marks (a quiet night), and the night's summary."""
    night = summarise_night(manifest, QuestionValues(values["types"], values["values"]))
    marks = {"format_version": 2, "verdict": "ok: no regression", "marks": []}
    return json.dumps({**marks, "night": night.model_dump(mode="json")})


def make_season(root: Path, nights: int, questions: int) -> Path:
    """A reports directory of ``nights`` generated folders; returns its path."""
    sample = evaluate(sample_config(root / "sample"), backend="lexical")
    manifest = json.loads((sample.folder.path / "manifest.json").read_text(encoding="utf-8"))
    model = Manifest.model_validate(manifest)
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
        values = _values(questions, rng)
        (folder / "values.json").write_text(
            json.dumps(values, separators=(",", ":")), encoding="utf-8"
        )
        (folder / "marks.json").write_text(_marks(model, values), encoding="utf-8")
        lines.append(json.dumps({**entry, "folder": name, "started_at": day.isoformat()}))
    (reports / "history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return reports


def without_summaries(reports: Path) -> None:
    """Every folder's ``marks.json`` as written before the summaries were kept (format 1)."""
    old = json.dumps({"format_version": 1, "verdict": "ok: no regression", "marks": []})
    for folder in (p for p in reports.iterdir() if p.is_dir()):
        (folder / "marks.json").write_text(old, encoding="utf-8")


def validated(reports: Path) -> None:
    """The same reads through the harness's one reader (size, UTF-8, version and fields
    checked: ``read_history``, ``read_json_document``), as the season makes them."""
    ReportsDir(reports).history()
    for folder in sorted(p for p in reports.iterdir() if p.is_dir()):
        read_json_document(folder / "marks.json", NightMarks, MARKS)


def summaries(reports: Path) -> None:
    """The reads the season cannot avoid: ``history.jsonl`` and every night's ``marks.json``."""
    for line in (reports / "history.jsonl").read_bytes().splitlines():
        json.loads(line)
    for folder in sorted(p for p in reports.iterdir() if p.is_dir()):
        json.loads((folder / "marks.json").read_bytes())


def floor(reports: Path) -> None:
    for folder in sorted(p for p in reports.iterdir() if p.is_dir()):
        for name in ("values.json", "manifest.json", "marks.json"):
            json.loads((folder / name).read_bytes())


def _timed(times: dict[str, list[float]], key: str, call: Any) -> Any:
    start = time.perf_counter()
    out = call()
    times.setdefault(key, []).append(time.perf_counter() - start)
    return out


def run(
    nights: int = 365, questions: int = 10_000, rounds: int = 3, old: bool = False
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        reports = make_season(Path(tmp), nights, questions)
        size = sum(f.stat().st_size for f in reports.rglob("values.json"))
        kept = sum(f.stat().st_size for f in reports.rglob("marks.json"))
        times: dict[str, list[float]] = {}
        page = b""
        no_baseline = Path(tmp) / "no-baseline.json"
        for _ in range(rounds):
            _timed(times, "summaries", lambda: summaries(reports))
            _timed(times, "validated", lambda: validated(reports))
            _timed(times, "floor", lambda: floor(reports))
            view = _timed(times, "build", lambda: season_view(ReportsDir(reports), no_baseline))
            page = _timed(
                times, "render", lambda view=view: render_history_page(view, str(reports))
            )
        if old:
            without_summaries(reports)
            for _ in range(rounds):
                _timed(times, "floor", lambda: floor(reports))
                again = _timed(
                    times, "old_build", lambda: season_view(ReportsDir(reports), no_baseline)
                )
            assert again == view, "the season without summaries differs"
    median = {k: statistics.median(v) for k, v in times.items()}
    out = {
        "nights": nights,
        "questions": questions,
        "rounds": rounds,
        "values_json_mb": round(size / 1e6, 1),
        "marks_json_mb": round(kept / 1e6, 2),
        "page_kb": round(len(page) / 1e3, 1),
        "summaries_s": round(median["summaries"], 3),
        "validated_s": round(median["validated"], 3),
        "build_validated_ratio": round(median["build"] / median["validated"], 2),
        "floor_s": round(median["floor"], 2),
        "build_s": round(median["build"], 3),
        "render_s": round(median["render"], 3),
        "build_ratio": round(median["build"] / median["summaries"], 2),
        "build_floor_ratio": round(median["build"] / median["floor"], 4),
        "render_ratio": round(median["render"] / median["summaries"], 2),
        "load": round(os.getloadavg()[0], 1),
    }
    if old:
        out["old_build_s"] = round(median["old_build"], 2)
        out["old_build_ratio"] = round(median["old_build"] / median["floor"], 2)
    return out


def lines(result: dict[str, Any]) -> list[str]:
    r = result
    out = [
        f"  {r['nights']} nights x {r['questions']:,} questions ({r['values_json_mb']} MB of "
        f"values.json, {r['marks_json_mb']} MB of marks.json; median of {r['rounds']}, "
        f"load {r['load']}):",
        f"  read and parse history.jsonl and every night's marks.json {r['summaries_s']} s "
        f"(through the harness's reader, checked and validated: {r['validated_s']} s)",
        f"  values floor (every night's values.json, manifest.json, marks.json) {r['floor_s']} s",
        f"  build the season {r['build_s']} s = {r['build_ratio']}x reading the summaries "
        f"({r['build_validated_ratio']}x the checked read), {r['build_floor_ratio']}x the "
        "values floor",
        f"  render history.html ({r['page_kb']} kB) {r['render_s']} s = {r['render_ratio']}x "
        "reading the summaries",
    ]
    if "old_build_s" in r:
        out.append(
            f"  without summaries (folders written before): build {r['old_build_s']} s = "
            f"{r['old_build_ratio']}x the values floor"
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--old", action="store_true", help="also time the season without summaries")
    args = parser.parse_args()
    print("\n".join(lines(run(args.nights, args.questions, args.rounds, args.old))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
