"""The diagnosis against hand-labelled truth on the two shipped samples (docs/reports.md, "The
diagnosis against hand labels").

The truth is ``tests/data/diagnosis-truth.csv``: one diagnosis per question of each sample,
decided from the answer kinds golden/README.md lists for each run (the writer's intent, with
the retrieval story: a hallucinated answer whose relevant chunk was not in context is a
retrieval miss, a refusal of an out-of-scope question is ok, ...; each row says why). For each
sample and judge (the lexical baseline, alone and with ``[judge.correctness]`` on) the run is
judged afresh and its diagnoses compared with the truth, question by question.

    python bench/diagnosis_truth.py            # both samples, both judges (seconds)
    python bench/diagnosis_truth.py --verbose  # and every disagreement

Each run writes into a temporary reports folder and cache: nothing in the work tree changes.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

from judge.config import load_config
from judge.pipeline.evaluate import evaluate
from judge.sweep.simulate import wilson

REPO = Path(__file__).resolve().parent.parent
SAMPLES = {"sample": REPO / "judge.toml", "sample-en": REPO / "golden/sample-en/judge.toml"}
TRUTH = REPO / "tests" / "data" / "diagnosis-truth.csv"
JUDGES = {"lexical": False, "lexical + correctness": True}


def truth() -> dict[str, dict[str, str]]:
    """Sample → question id → its true diagnosis."""
    out: dict[str, dict[str, str]] = {}
    with TRUTH.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            out.setdefault(row["sample"], {})[row["question_id"]] = row["truth"]
    return out


def diagnoses(sample: str, correctness: bool) -> dict[str, str]:
    """Question id → the run's diagnosis, judged afresh by the lexical baseline."""
    with tempfile.TemporaryDirectory() as tmp:
        judge: dict[str, object] = {"cache_path": Path(tmp) / "cache.sqlite3"}
        if correctness:
            prompt = REPO / "prompts" / "correctness.v1.md"
            judge["correctness"] = {"enabled": True, "prompt": prompt}
        config = load_config(SAMPLES[sample]).with_overrides(
            judge=judge,
            reports={"dir": Path(tmp) / "reports", "baseline": Path(tmp) / "baseline.json"},
        )
        report = evaluate(config, backend="lexical", progress=False).report
    return {row.question_id: row.diagnosis for row in report.questions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="list every disagreement")
    args = parser.parse_args()
    labels = truth()
    print("| sample | judge | agree | n | share [95 % CI] |")
    print("| --- | --- | --- | --- | --- |")
    for sample in SAMPLES:
        for name, correctness in JUDGES.items():
            found = diagnoses(sample, correctness)
            wrong = {q: (t, found.get(q)) for q, t in labels[sample].items() if found.get(q) != t}
            n = len(labels[sample])
            low, high = wilson(n - len(wrong), n)
            print(
                f"| {sample} | {name} | {n - len(wrong)} | {n} | "
                f"{(n - len(wrong)) / n:.2f} [{low:.2f}, {high:.2f}] |"
            )
            if args.verbose:
                for qid, (want, got) in sorted(wrong.items()):
                    print(f"    {qid}: truth {want}, diagnosis {got}")


if __name__ == "__main__":
    main()
