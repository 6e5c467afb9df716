"""``validate_run`` skips the rank-by-rank check of a ranking without a repeated or unknown
chunk: its problems must be exactly those of the check done for every record."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judge.errors import InputError
from judge.inputs.golden import Chunk, GoldenQuestion, GoldenSet
from judge.inputs.runs import Run, RunMeta, RunRecord, validate_run


def _reference(
    run: Run, golden: GoldenSet, where: Callable[[str], str], invalid_ids: frozenset[str]
) -> list[str]:
    """``validate_run`` as it was: every ranking checked rank by rank."""
    problems = []
    golden_ids = {q.id for q in golden.questions}
    for qid, record in run.records.items():
        if qid not in golden_ids:
            problems.append(f"{where(qid)}: id: '{qid}' is not a golden question")
        seen: set[str] = set()
        for rank, item in enumerate(record.retrieved, start=1):
            if item.chunk_id in seen:
                problems.append(
                    f"{where(qid)}: retrieved: chunk '{item.chunk_id}' appears twice in the "
                    f"ranking for question '{qid}' (again at rank {rank})"
                )
            seen.add(item.chunk_id)
            if item.chunk_id not in golden.corpus:
                problems.append(
                    f"{where(qid)}: retrieved: chunk '{item.chunk_id}' (rank {rank}) "
                    "is not in the corpus"
                )
    accounted = run.records.keys() | run.meta.failed.keys() | invalid_ids
    missing = [q.id for q in golden.questions if q.id not in accounted]
    if missing:
        problems.append(
            f"the run has no record for {len(missing)} golden question(s): {', '.join(missing)}"
        )
    return problems


CORPUS = ["料金/年額", "料金/月額", "faq/backup", "faq/restore"]
QUESTIONS = ["q1", "q2", "質問3", "q4", "q5"]


def _golden() -> GoldenSet:
    corpus = {c: Chunk(chunk_id=c, doc=c.split("/")[0], text=f"{c} の本文。") for c in CORPUS}
    questions = tuple(
        GoldenQuestion(
            id=q, type="factual", question=f"{q}?", relevant_chunks=(CORPUS[0],), answerable=True
        )
        for q in QUESTIONS
    )
    return GoldenSet(questions, corpus, "h1:q", "h1:c")


RANKINGS = {
    "clean": [["料金/年額", "faq/backup"], ["faq/restore"], [], ["料金/月額", "料金/年額"]],
    "repeated": [["料金/年額", "faq/backup", "料金/年額"], ["faq/restore", "faq/restore"]],
    "unknown": [["料金/年額", "料金/週額"], ["nowhere", "faq/backup", "nowhere"]],
    "both": [["x", "x", "料金/年額", "料金/年額", "y"], ["faq/backup"]],
}


@pytest.mark.parametrize("case", sorted(RANKINGS))
@pytest.mark.parametrize("extra_id", [None, "q9", "質問9"])
def test_problems_are_those_of_the_rank_by_rank_check(case: str, extra_id: str | None) -> None:
    golden = _golden()
    ids = [*QUESTIONS[: len(RANKINGS[case])]]
    if extra_id:
        ids[-1] = extra_id  # a record for no golden question, and a question without one
    records = {
        qid: RunRecord(id=qid, retrieved=tuple({"chunk_id": c} for c in ranking), answer="はい")
        for qid, ranking in zip(ids, RANKINGS[case], strict=True)
    }
    run = Run(RunMeta(failed={"q5": "boom"}), records)
    where = lambda qid: f"run.jsonl:{ids.index(qid) + 2}"  # noqa: E731
    for invalid in (frozenset(), frozenset({"q4"})):
        expected = _reference(run, golden, where, invalid)
        assert bool(expected) == (case != "clean" or extra_id is not None)
        try:
            validate_run(run, golden, where, invalid)
            got: list[str] = []
        except InputError as exc:
            got = exc.problems
        assert got == expected
