"""The chunk grades measured on the two shipped samples (docs/judge.md, "Chunk grades, measured").

For each sample and judge backend: the top ``context_k`` chunks of every answered question graded
(``[judge.chunks]`` on), then their agreement with the golden labels (exact, Cohen's κ, balanced
accuracy, against the majority-class line), how many possible missing labels the judge finds,
and what the grading costs per question (calls, tokens where the backend counts them, seconds).

    python bench/chunk_measure.py                      # lexical and embedded, both samples
    python bench/chunk_measure.py --backend lexical    # model-free only (seconds)

Each run writes into a temporary reports folder and cache: nothing in the work tree changes, and
every chunk is graded afresh (the embedded 270M takes a few minutes per sample on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from judge.config import load_config
from judge.pipeline.evaluate import evaluate

REPO = Path(__file__).resolve().parent.parent
SAMPLES = {
    "golden/sample": REPO / "judge.toml",
    "golden/sample-en": REPO / "golden/sample-en/judge.toml",
}


def measure(sample: str, backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(SAMPLES[sample]).with_overrides(
            judge={
                "cache_path": Path(tmp) / "cache.sqlite3",
                "chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md"},
            },
            reports={"dir": Path(tmp) / "reports", "baseline": Path(tmp) / "baseline.json"},
        )
        report = evaluate(config, backend=backend, progress=False).report
    chunks = report.chunks
    assert chunks is not None
    grades = [g for row in report.questions for g in row.chunk_grades or ()]
    questions = sum(1 for row in report.questions if row.chunk_grades)
    every = chunks.agreement.types["all"]
    tokens = [
        (g.prompt_tokens or 0) + (g.completion_tokens or 0)
        for g in grades
        if g.prompt_tokens is not None
    ]
    return {
        "sample": sample,
        "backend": backend,
        "questions": questions,
        "calls": len(grades),
        "not_ok": chunks.not_ok,
        "chunks_compared": every.chunks,
        "exact": every.exact,
        "exact_ci": every.exact_ci,
        "majority_exact": every.majority_exact,
        "kappa": every.kappa,
        "kappa_ci": every.kappa_ci,
        "balanced_accuracy": every.balanced_accuracy,
        "grades_by_label": every.grades,
        "missing_labels": len(chunks.missing),
        "tokens_per_question": sum(tokens) / questions if tokens else None,
        "seconds_per_question": sum(g.latency_s for g in grades) / questions,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", choices=["lexical", "embedded"])
    args = parser.parse_args()
    results = [
        measure(sample, backend)
        for backend in args.backend or ["lexical", "embedded"]
        for sample in SAMPLES
    ]
    json.dump(results, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
