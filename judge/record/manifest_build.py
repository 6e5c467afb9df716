"""The record's manifest and history line, assembled from a run's stages (reads nothing):
its fingerprints (``run_hash``, ``retrieval_fingerprint``), the configuration it ran with, the
per-type means the history keeps. Where the run was made (the git commit, the package
versions) and when it finished are read by the wiring (``judge.pipeline.build``) and come in
as a ``Provenance``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

from judge.config import Config
from judge.hashing import HASH_SCHEME, tagged_hash
from judge.inputs.runs import Run
from judge.record.stages import Judged, Measured
from judge.results.compare import TypeMetrics
from judge.results.history import HistoryEntry
from judge.results.manifest import (
    Fingerprints,
    GitInfo,
    Manifest,
    RunInfo,
    TaskFingerprint,
)
from judge.results.tables import ADAPTER_FAILED, JUDGE_METRICS, NOT_OK, TypeTable
from judge.results.tokens import token_totals


class Provenance(NamedTuple):
    """Where and when a run's record was made, as the manifest keeps it: read by the wiring
    (the clock, ``git``, the installed packages), so that the build itself reads nothing."""

    finished_at: datetime
    git: GitInfo
    versions: dict[str, str | None]


def run_hash(run: Run) -> str:
    """Hash of the rankings (with any text the run supplied) and answers, not of metadata:
    equal means the same RAG output.

    ``tagged_hash({qid: [[[chunk_id, text], ...], answer], ...}, 16)``, its canonical JSON
    written out with each retrieved chunk's part encoded once per chunk, not once per question
    that retrieved it (``tests/record/test_manifest_build.py`` compares the two)."""
    parts = []
    for qid in sorted(run.records):
        record = run.records[qid]
        ranking = ",".join([_retrieved_json(c.chunk_id, c.text) for c in record.retrieved])
        parts.append(f"{_json_string(qid)}:[[{ranking}],{_json_string(record.answer)}]")
    digest = hashlib.sha256(("{" + ",".join(parts) + "}").encode("utf-8")).hexdigest()
    return f"{HASH_SCHEME}:{digest[:16]}"


#: How ``json.dumps(..., ensure_ascii=False)`` (``hashing.canonical_json``) writes a string.
_json_string: Callable[[str], str] = json.encoder.encode_basestring


@functools.lru_cache(maxsize=1 << 14)
def _retrieved_json(chunk_id: str, text: str | None) -> str:
    """A retrieved chunk's ``[id, text]`` in canonical JSON (``null`` for no text)."""
    shown = "null" if text is None else _json_string(text)
    return f"[{_json_string(chunk_id)},{shown}]"


def retrieval_fingerprint(config: Config) -> str:
    return tagged_hash({"context_k": config.retrieval.context_k, "ks": config.retrieval.ks}, 16)


def _retrieval_metrics(table: TypeTable) -> TypeMetrics:
    """Per type: every metric, and ``n`` (questions scored)."""
    return {
        row["type"]: {m: row[m] for m in table.metrics} | {"n": float(row["n"])}
        for row in table.to_json()["rows"]
    }


def _judge_metrics(table: TypeTable) -> TypeMetrics:
    """Per type: the judge metrics and ``ok_share``, the share of questions with an ok verdict
    (the history's summary of a run; runs are compared question by question, from their
    folders: ``judge.results.values``).

    Retrieval at context_k sits in the judge table for reading; the retrieval section has it.
    ``ok_share`` makes failing verdicts count: they are left out of the means, so without it a
    judge that fails on hard items would look better. Its denominator holds the questions the
    adapter failed for too, so a failing RAG system cannot either.
    """
    out: TypeMetrics = {}
    for row in table.to_json()["rows"]:
        judged = row["n"] + sum(row[status] for status in NOT_OK) + row[ADAPTER_FAILED]
        out[row["type"]] = {m: row[m] for m in JUDGE_METRICS} | {
            "ok_share": row["n"] / judged if judged else None
        }
    return out


def build_manifest(
    config: Config,
    measured: Measured,
    judged: Judged,
    counts: dict[str, int],
    folder_name: str,
    started_at: datetime,
    provenance: Provenance,
) -> Manifest:
    """The run's manifest: its fingerprints, configuration (without its path), provenance,
    status counts, judge seconds and tokens."""
    golden = measured.golden
    return Manifest(
        folder=folder_name,
        started_at=started_at.isoformat(timespec="seconds"),
        finished_at=provenance.finished_at.isoformat(timespec="seconds"),
        judge=judged.judge,
        fingerprints=Fingerprints(
            judge=judged.fingerprint.value,
            judge_parts=judged.fingerprint.parts,
            retrieval=retrieval_fingerprint(config),
            golden=golden.questions_hash,
            corpus=golden.corpus_hash,
            run=run_hash(measured.run),
            tasks={
                name: TaskFingerprint(value=done.fingerprint.value, parts=done.fingerprint.parts)
                for name, done in judged.tasks.items()
            },
        ),
        run=RunInfo(source=measured.run_source, meta=measured.run.meta),
        config=config.model_copy(update={"source": None}),
        git=provenance.git,
        versions=provenance.versions,
        status_counts=counts,
        judge_seconds=round(judged.seconds, 3),
        tokens=token_totals(
            judged.verdicts.values(),
            {q.id: q.type for q in golden.questions},
            config.data.question_types,
        ),
    )


def run_entry(
    manifest: Manifest,
    measured: Measured,
    judged: Judged,
    table: TypeTable,
    counts: dict[str, int],
) -> HistoryEntry:
    """The run's history line: its compatibility keys and per-type means."""
    return HistoryEntry(
        folder=manifest.folder,
        started_at=manifest.started_at,
        golden_hash=manifest.fingerprints.golden,
        corpus_hash=manifest.fingerprints.corpus,
        run_hash=manifest.fingerprints.run,
        retrieval_fingerprint=manifest.fingerprints.retrieval,
        judge_fingerprint=judged.fingerprint.value,
        judge_parts=judged.fingerprint.parts,
        metrics={
            "retrieval": _retrieval_metrics(measured.retrieval),
            "judge": _judge_metrics(table),
        },
        status_counts=counts,
        settings=manifest.run.meta.settings(),
    )
