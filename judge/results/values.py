"""A run's values question by question, from what its report folder keeps.

The current run's come from the report being built, an earlier run's from its folder
(``items.jsonl``: type and retrieval per question; ``verdicts.jsonl``): the same records, read
the same way. ``history.jsonl`` keeps only per-type means, so it stays small.

Per question:

- retrieval: every metric at every k (none for a question without relevant chunks);
- judge: ``faithfulness`` and ``relevance`` (0-2), ``full_marks`` (1 when both are 2) and
  ``quote_verified`` (1 when the quote was found; only for verdicts that quoted something: not
  for an empty quote, and not for a context sentence cited by number, which is real by
  construction and so verifies nothing), all for ok verdicts only, as in the judge table
  (``judge.results.tables.judge_values``); ``sentences_supported`` (``sentences`` mode only: the
  share of the answer's sentences that claim something which the judge found supported; none
  for an answer that claims nothing); and ``ok_share``: 1 for an ok verdict, 0 for any other,
  so its mean is the table's share of ok verdicts among the judged answers;
- the optional axes (``judge.axes.OPTIONAL_AXES``), when the run has them: ``correctness``
  (0-2) for an ok correctness verdict (``judge.judging.types.CorrectnessVerdict``); none for
  a question that was not asked (no reference answer) or whose verdict is not ok. Paired per
  question like the others, so a comparison, the season and the gate see it wherever both
  runs have it; a run without correctness has no such metric and compares as before.
  ``full_marks`` keeps its meaning (faithfulness and relevance both 2).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from judge.axes import AXES, JUDGE_VALUES, OPTIONAL_AXES
from judge.judging.types import CorrectnessVerdict, Verdict
from judge.results.compare import MetricValues, QuestionValues
from judge.results.item_record import ItemRecord


def verdict_values(verdict: Verdict) -> dict[str, float]:
    """The judge metrics of one verdict (``ok_share`` for every verdict, scores for ok ones)."""
    v = verdict
    if v.status != "ok" or v.faithfulness is None or v.relevance is None:
        return {"ok_share": 0.0}
    values = {
        "faithfulness": float(v.faithfulness),
        "relevance": float(v.relevance),
        "full_marks": float(v.faithfulness == 2 and v.relevance == 2),
    }
    if v.match is not None and v.match.kind not in ("empty", "cited"):
        values["quote_verified"] = float(v.match.found)
    checkable = [s.verdict for s in v.sentences or () if s.verdict != "no_claim"]
    if checkable:
        values["sentences_supported"] = checkable.count("supported") / len(checkable)
    values["ok_share"] = 1.0
    return values


def answer_digest(answer: str) -> str:
    """A short digest of an answer's exact text: equal digests, the same answer (and, from a
    judge at temperature 0, the same verdict). The season counts a kept answer once."""
    return hashlib.sha256(answer.encode("utf-8")).hexdigest()[:16]


def correctness_value(verdict: CorrectnessVerdict | None) -> float | None:
    """The ``correctness`` value of a question: its score for an ok verdict, else None (never a
    silent 0: a verdict that failed is no value)."""
    if verdict is None or verdict.status != "ok" or verdict.correctness is None:
        return None
    return float(verdict.correctness)


def question_values(
    items: Iterable[ItemRecord],
    verdicts: Mapping[str, Verdict],
    correctness: Mapping[str, CorrectnessVerdict] | None = None,
) -> QuestionValues:
    """Per question: its type, its retrieval metrics, its verdict's metrics and, where the run
    judged correctness (``correctness``: question id → verdict), its correctness."""
    types: dict[str, str] = {}
    answers: dict[str, str] = {}
    retrieval: MetricValues = {}
    judge: MetricValues = {name: {} for name in JUDGE_VALUES}
    optional: MetricValues = {axis: {} for axis in OPTIONAL_AXES}
    correctness = correctness or {}
    for item in items:
        qid = item.question_id
        types[qid] = item.type
        answers[qid] = answer_digest(item.answer)
        for metric, value in item.retrieval.items():
            retrieval.setdefault(metric, {})[qid] = value
        verdict = verdicts.get(qid)
        if verdict is not None:
            for metric, value in verdict_values(verdict).items():
                judge[metric][qid] = value
        score = correctness_value(correctness.get(qid))
        if score is not None:
            optional["correctness"][qid] = score
    # The optional axes after relevance, as every table shows them.
    ordered: MetricValues = {
        **{axis: judge[axis] for axis in AXES},
        **optional,
        **{m: v for m, v in judge.items() if m not in AXES},
    }
    scored = {m: v for m, v in ordered.items() if v}
    return QuestionValues(types, {"retrieval": retrieval, "judge": scored}, answers)
