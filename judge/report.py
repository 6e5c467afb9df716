"""Write a judged run to its own folder under ``reports/``, atomically.

The folder is assembled under a temporary name and renamed into place only when complete, so
a crash never leaves a half-written folder that looks like a finished report.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.jsonl import write_jsonl
from judge.pipeline import Inputs, JudgeResult, RetrievalResult
from judge.runs import save_run

FORMAT_VERSION = 1


def results_payload(
    inputs: Inputs, retrieval: RetrievalResult, judged: JudgeResult, context_k: int
) -> dict[str, Any]:
    """Everything ``results.json`` holds; the first field is the format version."""
    outcome = judged.outcome
    statuses: dict[str, int] = {}
    for verdict in outcome.verdicts.values():
        statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
    return {
        "format_version": FORMAT_VERSION,
        "judge": {
            "identity": outcome.identity.model_dump(mode="json"),
            "chosen_because": judged.backend_reason,
            "prompt": str(judged.prompt.path),
            "fingerprint": outcome.fingerprint.value,
            "fingerprint_parts": outcome.fingerprint.parts,
            "evidence_verifier_version": outcome.verifier_version,
        },
        "run": {"source": inputs.run_source, "meta": inputs.run.meta.model_dump(mode="json")},
        "golden_hash": inputs.golden.questions_hash,
        "corpus_hash": inputs.golden.corpus_hash,
        "context_k": context_k,
        "status_counts": statuses,
        "elapsed_s": round(outcome.elapsed_s, 3),
        "retrieval": retrieval.table.to_json(),
        "judge_table": judged.table.to_json(),
        "excluded_from_retrieval": retrieval.scores.excluded,
    }


def write_run_folder(
    reports_dir: Path,
    inputs: Inputs,
    retrieval: RetrievalResult,
    judged: JudgeResult,
    context_k: int,
) -> Path:
    """Write results.json, verdicts.jsonl and the judged run into a new folder; return it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    short = judged.outcome.fingerprint.value.split(":")[1][:8]
    name = f"{stamp}-{short}"
    final, suffix = reports_dir / name, 2
    while final.exists():  # two runs in the same second with the same judge
        final, suffix = reports_dir / f"{name}-{suffix}", suffix + 1
    tmp = reports_dir / f".{final.name}.{os.getpid()}.partial"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    payload = results_payload(inputs, retrieval, judged, context_k)
    (tmp / "results.json").write_text(
        json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    order = [q.id for q in inputs.golden.questions if q.id in judged.outcome.verdicts]
    write_jsonl(tmp / "verdicts.jsonl", [judged.outcome.verdicts[qid] for qid in order])
    save_run(inputs.run, tmp / "run.jsonl")
    os.replace(tmp, final)
    return final
