"""The embedded judge's two prompt formats on the sample set: parse rate and time per item.

`python bench/format_bench.py` judges the 30 sample answers with the shipped Gemma 3 270M once
as plain text to continue (what "auto" picks for this base model) and once in Gemma's chat
turns, each into a fresh cache, and prints per format: ok / parse_error / other verdicts, the
mean and median seconds per item, and the mean completion tokens. About 6-10 minutes on 2
cores. Parse rate and time are what this shows; the base model's scores mean nothing
(docs/judge.md).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.config import load_config
from judge.pipeline.evaluate import evaluate

REPO = Path(__file__).resolve().parent.parent


def run() -> dict[str, Any]:
    results: dict[str, Any] = {}
    base = load_config(REPO / "judge.toml")
    for prompt_format in ("plain", "gemma-turns"):
        with tempfile.TemporaryDirectory() as tmp:
            config = base.with_overrides(
                judge={
                    "backend": "embedded",
                    "cache_path": Path(tmp) / "cache.sqlite3",
                    "embedded": {
                        **base.judge.embedded.model_dump(),
                        "prompt_format": prompt_format,
                    },
                },
                reports={"dir": Path(tmp) / "reports", "baseline": Path(tmp) / "baseline.json"},
            )
            verdicts = evaluate(config).report.verdicts
        latencies = [v.latency_s for v in verdicts]
        statuses = [v.status for v in verdicts]
        results[prompt_format] = {
            "items": len(verdicts),
            "ok": statuses.count("ok"),
            "parse_error": statuses.count("parse_error"),
            "other": len(statuses) - statuses.count("ok") - statuses.count("parse_error"),
            "mean_s": round(statistics.fmean(latencies), 2),
            "median_s": round(statistics.median(latencies), 2),
            "completion_tokens": round(
                statistics.fmean(v.completion_tokens or 0 for v in verdicts), 1
            ),
        }
    return results


if __name__ == "__main__":
    for name, row in run().items():
        print(
            f"{name:<12} {row['ok']}/{row['items']} ok, {row['parse_error']} parse errors, "
            f"{row['other']} other; {row['mean_s']} s/item mean, {row['median_s']} median; "
            f"{row['completion_tokens']} completion tokens"
        )
