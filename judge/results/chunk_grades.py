"""The statistics of the judge's chunk grades: pure functions of the grades and the golden set.

The chunk-relevance judge grades each of the top ``depth`` retrieved chunks of an answered
question 0–3 in UMBRELA's sense (Upadhyay et al., 2024, after the TREC deep-learning tracks):
0 nothing to do with the question, 1 related but does not answer it, 2 highly relevant (holds
part of the answer), 3 perfectly relevant (dedicated to the question, holds the exact answer).
This module turns those grades into numbers; it reads no file, calls no backend and keeps no
cache (the judging, the run record and the views are elsewhere).

**The binary cut is grade ≥ 2** (``RELEVANT_GRADE``), TREC's and UMBRELA's: in the TREC DL
qrels a passage graded 1 ("related") is not relevant for the binary measures (trec_eval's
``-l 2``), and UMBRELA reports its agreement with the human assessors at that same cut. A grade
1 chunk is on topic but would not let the generator answer; counting it as relevant would make
judged recall reward retrieving the neighbourhood of the answer.

What is computed here:

- **Judged retrieval** per question (``judged_values``): ``judged_recall@k``, ``judged_hit@k``,
  ``judged_mrr``, ``judged_ndcg@k``, from the grades alone and *relative to the graded pool*
  (the judge saw only the top ``depth`` chunks, so "all relevant chunks" can only mean the
  judged-relevant ones among those). The ``judged_`` prefix is the contract: these names never
  collide with the human-label metrics (``recall@5``...), and a view can tell them apart.
  Per-type tables of them (``judged_tables``), for every answerable question and for the
  unlabelled ones alone: the point of the feature is numbers where there are no labels.
- **Possible missing labels** (``missing_labels``, ``missing_labels_csv``): chunks of labelled
  questions that the judge grades relevant and the golden set does not list.

The grades against the human labels (agreement, κ, corrected recall) are the audit's
(``judge.audit.chunk_agreement``): statistics against people live with the audit.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.formatting import bom_csv
from judge.inputs.golden import GoldenQuestion
from judge.metrics import retrieval_metrics
from judge.results.tables import TypeTable, per_type_table
from judge.retrieval import score_rankings

RELEVANT_GRADE: Final = 2
"""A chunk graded at least this is relevant (TREC's and UMBRELA's binary cut; module
docstring)."""

GRADES: Final[tuple[int, ...]] = (0, 1, 2, 3)
"""The judge's grades, UMBRELA's scale."""

PREFIX: Final = "judged_"
"""Every judged metric's name starts with this: never a human-label metric's name."""


class GradedChunk(NamedTuple):
    """One retrieved chunk of one question, as the chunk judge graded it."""

    question_id: str
    chunk_id: str
    rank: int
    """1-based rank in the run's retrieved list."""
    grade: int | None
    """0..3; None when the judge gave no usable grade (an error, a truncated reply)."""
    reason: str


def judged_metric_names(ks: Sequence[int], depth: int | None = None) -> list[str]:
    """The judged metrics in display order, for the k of ``ks`` at most ``depth`` (all of them
    when ``depth`` is None): a k deeper than the judge graded is never reported.

    ``judged_precision@k`` first (the share of the top k the judge grades relevant: defined for
    every graded question, so the primary), then ``judge.metrics``'s, prefixed ``judged_``; but
    ``judged_recall@k`` only for k below ``depth``: relative to the graded pool, recall at the
    pool's own depth is 1 by construction whenever it is defined, and says nothing."""
    capped = [k for k in ks if depth is None or k <= depth]
    if not capped:
        return [f"{PREFIX}mrr"]
    names = [f"{PREFIX}precision@{k}" for k in capped]
    for metric in retrieval_metrics(capped):
        if metric.measure == "recall" and depth is not None and (metric.k or 0) >= depth:
            continue
        names.append(PREFIX + metric.name)
    return names


def _pool(graded: Iterable[GradedChunk], question_id: str | None = None) -> list[GradedChunk]:
    """One question's graded chunks in rank order, checked: one question, distinct chunks, and
    ranks 1..n without a hole (a retrieved chunk left out of the pool would change every value;
    the judging marks a chunk it could not grade with ``grade=None`` instead)."""
    pool = sorted(graded, key=lambda c: c.rank)
    ids = {c.question_id for c in pool}
    if len(ids) > 1 or (question_id is not None and ids and ids != {question_id}):
        raise ValueError(f"graded chunks of other questions ({sorted(ids)}) in one pool")
    if [c.rank for c in pool] != list(range(1, len(pool) + 1)):
        raise ValueError(
            f"question {pool[0].question_id!r}: graded ranks {[c.rank for c in pool]} are not "
            "1..n (a retrieved chunk the judge could not grade has grade None, it is not left out)"
        )
    if len({c.chunk_id for c in pool}) != len(pool):
        raise ValueError(f"question {pool[0].question_id!r}: a chunk is graded twice")
    for c in pool:
        if c.grade is not None and c.grade not in GRADES:
            raise ValueError(f"question {c.question_id!r}, chunk {c.chunk_id!r}: grade {c.grade}")
    return pool


def _graded_dcg(gains: Sequence[int], k: int) -> float:
    """Σ_{i ≤ k} gain_i / log2(i + 1): trec_eval's ``ndcg_cut`` with the grade as the gain."""
    return math.fsum(gain / math.log2(i + 2) for i, gain in enumerate(gains[:k]))


def judged_values(
    question: GoldenQuestion,
    graded: Sequence[GradedChunk],
    ks: Sequence[int],
    *,
    depth: int | None = None,
) -> dict[str, float]:
    """The judged retrieval metrics of one question, from its graded chunks alone.

    Relative to the graded pool (the top ``depth`` chunks the judge saw; ``depth`` None: as many
    as are graded), with J the pool's chunks graded ≥ ``RELEVANT_GRADE``:

    - ``judged_precision@k`` = |J ∩ top k| / k (0 when J is empty);
    - ``judged_recall@k`` = |J ∩ top k| / |J| (for k below ``depth`` only:
      ``judged_metric_names``); ``judged_hit@k`` = 1 if J meets the top k;
      ``judged_mrr`` = 1 / rank of the first chunk of J (0 when J is empty): the human-label
      definitions of ``judge.retrieval`` with J as the relevant set, computed by its scorer;
    - ``judged_ndcg@k`` = DCG@k / IDCG@k with the grade (0–3) as the gain and log2 discount,
      the ideal ranking being the pool sorted by grade (so a grade 1 chunk counts a little,
      as a graded qrel does in trec_eval).

    Undefined values are absent, never 0: with J empty, recall and nDCG (hit@k and MRR are 0,
    which is what they mean); with a chunk graded None, everything (one unknown grade could be
    the only relevant chunk). Only the k of ``ks`` at most ``depth`` are reported.
    """
    pool = _pool(graded, question.id)
    if depth is None:
        depth = len(pool)
    elif len(pool) > depth:
        raise ValueError(
            f"question {question.id!r}: {len(pool)} graded chunks, deeper than depth {depth}"
        )
    if any(c.grade is None for c in pool):
        return {}
    ks = [k for k in ks if k <= depth]
    relevant = {c.chunk_id for c in pool if c.grade is not None and c.grade >= RELEVANT_GRADE}
    values: dict[str, float] = {
        # Over k, not over the chunks retrieved: a run that returned fewer than k chunks has
        # the rest count as not relevant (trec_eval's P@k).
        f"{PREFIX}precision@{k}": sum(c.chunk_id in relevant for c in pool[:k]) / k
        for k in ks
    }
    names = judged_metric_names(ks, depth)
    if not relevant:
        values[f"{PREFIX}mrr"] = 0.0
        for k in ks:
            values[f"{PREFIX}hit@{k}"] = 0.0
        return {name: values[name] for name in names if name in values}
    columns = score_rankings([[c.chunk_id for c in pool]], [relevant], ks or [depth])
    gains = [c.grade or 0 for c in pool]
    ideal = sorted(gains, reverse=True)
    for metric in retrieval_metrics(ks or [depth]):
        if metric.measure == "ndcg":
            assert metric.k is not None
            value = _graded_dcg(gains, metric.k) / _graded_dcg(ideal, metric.k)
        else:
            value = columns[metric.name][0]
        values[PREFIX + metric.name] = value
    return {name: values[name] for name in names}


# --- per-type tables --------------------------------------------------------------------------

#: The judged tables' count columns: questions whose chunks were graded; of those, with no
#: chunk graded relevant (no judged recall or nDCG); with a chunk the judge could not grade
#: (no judged value at all). ``excluded`` (every-question table only): out-of-scope questions.
GRADED = "graded"
NO_JUDGED_RELEVANT = "no_judged_relevant"
UNGRADED_CHUNK = "ungraded_chunk"
EXCLUDED = "excluded"


class JudgedTables(NamedTuple):
    """The judged retrieval metrics per type, twice."""

    every: TypeTable
    """Every answerable question whose chunks were graded, labelled or not."""
    unlabelled: TypeTable
    """The questions without chunk labels (``relevant_chunks: null``) alone: the numbers the
    human labels cannot give."""


def pools_by_question(
    questions: Sequence[GoldenQuestion], graded: Iterable[GradedChunk]
) -> dict[str, list[GradedChunk]]:
    """Question id → its checked pool, in the questions' order (questions with no graded chunk
    are not in it)."""
    known = {q.id for q in questions}
    members: dict[str, list[GradedChunk]] = defaultdict(list)
    for chunk in graded:
        if chunk.question_id not in known:
            raise ValueError(f"a graded chunk of question {chunk.question_id!r}, not in the set")
        members[chunk.question_id].append(chunk)
    return {q.id: _pool(members[q.id], q.id) for q in questions if q.id in members}


def graded_depth(pools: Mapping[str, Sequence[GradedChunk]], depth: int | None) -> int:
    """The grading depth: ``depth`` if given, else the deepest pool (the judging grades the top
    ``depth`` of every question; one that retrieved fewer has a shorter pool)."""
    return depth if depth is not None else max((len(p) for p in pools.values()), default=0)


def judged_tables(
    questions: Sequence[GoldenQuestion],
    graded: Iterable[GradedChunk],
    ks: Sequence[int],
    type_order: Sequence[str],
    *,
    depth: int | None = None,
) -> JudgedTables:
    """Per type (``type_order`` first, ``all`` last) the means of ``judged_values``, built the
    way ``judge.results.tables.retrieval_table`` is (``per_type_table``, ``judge.grouped``).

    Primary metric: the first k's judged precision (``ks[0]``, the context_k, when the judge
    graded that deep): defined for every fully graded question. ``n`` counts the questions with a value for it; the count columns say where the
    others went (``GRADED`` and the constants below it). Out-of-scope questions (no relevant
    chunk exists) are left out and counted in ``excluded``, as in the retrieval table: a chunk
    graded relevant for them is a finding for ``missing_labels``, not a hit.
    """
    pools = pools_by_question(questions, graded)
    depth = graded_depth(pools, depth)
    metrics = judged_metric_names(ks, depth)
    types = {q.id: q.type for q in questions}

    def table(chosen: list[GoldenQuestion], excluded: dict[str, int] | None) -> TypeTable:
        values: dict[str, dict[str, float]] = defaultdict(dict)
        counts: dict[str, dict[str, int]] = {GRADED: {}, NO_JUDGED_RELEVANT: {}, UNGRADED_CHUNK: {}}
        for q in chosen:
            pool = pools.get(q.id)
            if pool is None:
                continue
            counts[GRADED][q.type] = counts[GRADED].get(q.type, 0) + 1
            if any(c.grade is None for c in pool):
                kind = UNGRADED_CHUNK
            elif not any((c.grade or 0) >= RELEVANT_GRADE for c in pool):
                kind = NO_JUDGED_RELEVANT
            else:
                kind = ""
            if kind:
                counts[kind][q.type] = counts[kind].get(q.type, 0) + 1
            for name, value in judged_values(q, pool, ks, depth=depth).items():
                values[name][q.id] = value
        if excluded is not None:
            counts[EXCLUDED] = excluded
        return per_type_table(values, types, type_order, metrics, counts=counts)

    out_of_scope: dict[str, int] = {}
    for q in questions:
        if not q.answerable:
            out_of_scope[q.type] = out_of_scope.get(q.type, 0) + 1
    answerable = [q for q in questions if q.answerable]
    return JudgedTables(
        table(answerable, out_of_scope),
        table([q for q in answerable if q.relevant_chunks is None], None),
    )


# --- possible missing labels ------------------------------------------------------------------


class MissingLabel(BaseModel):
    """A chunk the judge grades relevant that the golden question does not list."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    type: str
    chunk_id: str
    rank: int
    grade: int
    reason: str
    unanswerable: bool
    """The question is out of scope (``relevant_chunks: []``): either the corpus does answer it
    (a hole, and a mistyped question) or the judge is wrong; a reviewer decides."""


def missing_labels(
    questions: Sequence[GoldenQuestion], graded: Iterable[GradedChunk]
) -> list[MissingLabel]:
    """For the labelled questions (``relevant_chunks`` not null, out-of-scope ones included and
    flagged), the graded chunks with grade ≥ ``RELEVANT_GRADE`` that ``relevant_chunks`` does
    not list, in question order then rank. Unlabelled questions have no labels to miss."""
    pools = pools_by_question(questions, graded)
    rows: list[MissingLabel] = []
    for q in questions:
        if q.relevant_chunks is None:
            continue
        listed = set(q.relevant_chunks)
        for c in pools.get(q.id, []):
            if c.grade is not None and c.grade >= RELEVANT_GRADE and c.chunk_id not in listed:
                rows.append(
                    MissingLabel(
                        question_id=q.id,
                        type=q.type,
                        chunk_id=c.chunk_id,
                        rank=c.rank,
                        grade=c.grade,
                        reason=c.reason,
                        unanswerable=not q.answerable,
                    )
                )
    return rows


MISSING_LABELS_COLUMNS: Final[tuple[str, ...]] = (
    "question_id",
    "type",
    "chunk_id",
    "rank",
    "grade",
    "reason",
    "question",
    "chunk_text",
    "confirmed",
)
"""The header of ``missing-labels.csv``; ``judge golden accept`` reads these names."""


def missing_labels_csv(
    rows: Iterable[MissingLabel],
    questions_text: Mapping[str, str],
    chunk_text: Mapping[str, str],
) -> str:
    """``missing-labels.csv``: one row per possible missing label, ``confirmed`` empty for a
    reviewer to fill in (yes/no) in a spreadsheet, for ``judge golden accept``.

    Written by ``judge.formatting.bom_csv``, the tool's one CSV writer (the csv module): a UTF-8
    BOM first, so that a spreadsheet reads Japanese right, and every text cell that a
    spreadsheet would take for a formula (``=``, ``+``, ``-``, ``@``...) quoted with a leading
    ``'``; the reasons are a model's words and the chunks the corpus's, so either could carry
    one. A reader opens it as ``utf-8-sig`` and takes the quote off with
    ``judge.formatting.from_spreadsheet_text``, as ``judge.audit.sheet`` does. A question or
    chunk with no text given gets an empty cell.
    """
    return bom_csv(
        MISSING_LABELS_COLUMNS,
        (
            (
                r.question_id,
                r.type,
                r.chunk_id,
                r.rank,
                r.grade,
                r.reason,
                questions_text.get(r.question_id, ""),
                chunk_text.get(r.chunk_id, ""),
                "",
            )
            for r in rows
        ),
    )
