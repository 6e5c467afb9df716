"""TREC qrels and run files, so results can be cross-checked with trec_eval.

qrels line: ``<qid> 0 <docid> <relevance>``; run line: ``<qid> Q0 <docid> <rank> <score> <tag>``.

trec_eval ranks by score (descending; ties by docid, descending), not by the rank column. On
export we therefore write scores that strictly decrease down each list (``len - index``), so
trec_eval sees exactly our order whatever scores the run had. On import we order as trec_eval
does, so our metrics on an imported file equal trec_eval's on the same file.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from judge.errors import InputError
from judge.inputs.golden import GoldenQuestion, GoldenSet
from judge.inputs.runs import RetrievedChunk, Run, RunMeta, RunRecord
from judge.io.text import id_problem, read_text, split_lines
from judge.io.validation import in_line_order


def write_qrels(golden: GoldenSet, path: Path) -> int:
    """Write the golden relevant chunks as qrels; returns the number of lines.

    Questions whose relevant chunks are not labelled have no qrels lines (trec_eval then
    leaves them out, as the harness does).
    """
    lines = [
        f"{q.id} 0 {chunk_id} 1" for q in golden.questions for chunk_id in q.relevant_chunks or ()
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def write_trec_run(run: Run, path: Path, tag: str = "judge") -> int:
    """Write the run's rankings in TREC format; returns the number of lines."""
    lines = []
    for qid, record in run.records.items():
        total = len(record.retrieved)
        for index, item in enumerate(record.retrieved):
            lines.append(f"{qid} Q0 {item.chunk_id} {index + 1} {total - index} {tag}")
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def _short(field: str) -> str:
    return field if len(field) <= 40 else field[:39] + "…"


def _split_lines(
    path: Path, fields: int, what: str, problems: list[str]
) -> list[tuple[int, list[str]]]:
    rows = []
    for number, line in enumerate(split_lines(read_text(path)), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != fields:
            problems.append(
                f"{path}:{number}: a {what} line has {fields} fields, found {len(parts)}"
            )
            continue
        rows.append((number, parts))
    return rows


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read qrels: question id → chunk id → relevance grade."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    problems: list[str] = []
    for number, (qid, _, docid, grade) in _split_lines(path, 4, "qrels", problems):
        try:
            qrels[qid][docid] = int(grade)
        except ValueError:  # not digits, or more digits than Python reads
            problems.append(f"{path}:{number}: relevance '{_short(grade)}' is not an integer")
    if problems:
        raise InputError(in_line_order(path, problems))
    return dict(qrels)


def with_qrels(golden: GoldenSet, qrels: dict[str, dict[str, int]], path: Path) -> GoldenSet:
    """The golden set with its relevant chunks taken from qrels (grade > 0), to score against
    judgements made elsewhere. Every qrels question must be a golden question; an answerable
    question with no relevant qrels line is not labelled there (never scored 0 or 1)."""
    unknown = sorted(set(qrels) - {q.id for q in golden.questions})
    if unknown:
        raise InputError([f"{path}: question ids not in the golden set: {', '.join(unknown)}"])

    def relevant(q: GoldenQuestion) -> tuple[str, ...] | None:
        found = tuple(d for d, g in qrels.get(q.id, {}).items() if g > 0)
        return found if found or not q.answerable else None

    questions = tuple(
        q.model_copy(update={"relevant_chunks": relevant(q)}) for q in golden.questions
    )
    return golden._replace(questions=questions)


def read_trec_run(path: Path, golden: GoldenSet) -> Run:
    """Read a TREC run as a run with empty answers, ordered as trec_eval orders it.

    Only retrieval can be scored from it (there are no answers to judge). A golden question
    the file does not mention retrieved nothing and scores 0 (like ``trec_eval -c``).
    """
    scored: dict[str, list[tuple[float, str]]] = defaultdict(list)
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    known = {q.id for q in golden.questions}
    for number, (qid, _, docid, _, score, _) in _split_lines(path, 6, "run", problems):
        if qid not in known:
            problems.append(f"{path}:{number}: question '{qid}' is not in the golden set")
        if (qid, docid) in seen:
            problems.append(f"{path}:{number}: '{docid}' appears twice for question '{qid}'")
        seen.add((qid, docid))
        bad_id = id_problem(docid)
        if bad_id:  # a control character: not whitespace, so the line still had 6 fields
            problems.append(f"{path}:{number}: chunk id {docid!r}: {bad_id}")
            continue
        try:
            value = float(score)
        except ValueError:
            problems.append(f"{path}:{number}: score '{_short(score)}' is not a number")
            continue
        if math.isfinite(value):
            scored[qid].append((value, docid))
        else:  # nan would make the order undefined (and trec_eval reads it differently)
            problems.append(f"{path}:{number}: score '{_short(score)}' is not a finite number")
    if problems:
        raise InputError(in_line_order(path, problems))
    records = {}
    for qid in (q.id for q in golden.questions):
        items = scored.get(qid, [])
        items.sort(reverse=True)  # score descending, then docid descending: trec_eval's order
        retrieved = tuple(RetrievedChunk(chunk_id=d, score=s) for s, d in items)
        records[qid] = RunRecord.model_construct(id=qid, retrieved=retrieved, answer="")
    return Run(RunMeta(system=f"trec:{path.name}"), records)
