"""The judge's axes, their scale, and the judge's per-question metrics with theirs: one home.

The judge scores every answer on two axes, ``faithfulness`` (is what it says supported by the
retrieved chunks?) and ``relevance`` (does it answer the question?), each an integer on 0-2.
From one verdict come the per-question judge metrics every view shows and every comparison
pairs (``judge.results.values.verdict_values`` computes them): the two scores and their
expected values from the judge's own probabilities, all on the 0-2 score scale, and shares on
0-1 (``full_marks``, ``quote_verified``, ``sentences_supported``, ``ok_share``). Which scale a
metric is on matters wherever a margin or a difference is read: a move of 0.1 is small on 0-2
and not on 0-1 (``judge.results.compare.GateRule``).

One axis is *optional*: ``correctness`` (the answer against the question's reference answer,
0-2; ``judge.judging.types.CorrectnessVerdict``) is judged in a call of its own, only when
``judge.correctness.enabled`` is set and only for questions with a reference answer (and
out-of-scope ones). It is not part of the answer's verdict payload (``AXES`` stays what the
answer judge scores), so it is defined apart: ``OPTIONAL_AXES``. Every table, value, gate
family and audit that iterates the axes takes the optional ones from here and shows one only
when the run has it (``present_axes``): adding an axis is a line in ``OPTIONAL_AXES`` and its
verdicts handed to ``judge.results.values.question_values``.

A leaf: it imports nothing from the package, so the judging layer (confidence, stability), the
results, the audit and the views can all take the axes from here without an import circle.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Final, Literal

Axis = Literal["faithfulness", "relevance"]
#: The axes, in display order.
AXES: Final[tuple[Axis, ...]] = ("faithfulness", "relevance")
#: The scores the judge can give on either axis.
SCALE: Final[tuple[int, ...]] = (0, 1, 2)
MAX_SCORE: Final = SCALE[-1]
#: (faithfulness, relevance) of an answer with full marks on both axes ("2/2").
FULL_MARKS: Final[tuple[int, int]] = (MAX_SCORE, MAX_SCORE)

OptionalAxis = Literal["correctness"]
#: The axes a run has only when a setting turns them on, in display order: shown after
#: relevance (before ``full_marks``), each a score on ``SCALE``, each its own per-question
#: metric (``correctness``: 0-2 for an ok correctness verdict).
OPTIONAL_AXES: Final[tuple[OptionalAxis, ...]] = ("correctness",)
#: Any axis a label or a table can carry: the answer's two, then the optional ones.
ScoredAxis = Literal["faithfulness", "relevance", "correctness"]
SCORED_AXES: Final[tuple[ScoredAxis, ...]] = (*AXES, *OPTIONAL_AXES)

#: ``score``: on the 0-2 scale of the axes; ``share``: on 0-1 (a 0/1 value per question, or a
#: fraction, whose mean is a share).
MetricScale = Literal["score", "share"]


def expected_metric(axis: Axis) -> str:
    """The metric of an axis' expected score (from the judge's probabilities of 0, 1 and 2)."""
    return f"expected_{axis}"


#: The expected scores, in axis order (shown beside the scores when a verdict has probabilities).
EXPECTED_METRICS: Final[tuple[str, ...]] = tuple(expected_metric(axis) for axis in AXES)

#: The per-question judge metrics a paired comparison uses, in display order (a question has
#: only those its verdict defines: scores for ok verdicts, ``ok_share`` for every verdict).
JUDGE_VALUES: Final[tuple[str, ...]] = (
    *AXES,
    "full_marks",
    "quote_verified",
    "sentences_supported",
    "ok_share",
)
#: The judge metrics the per-type judge table shows, in its column order (the first decides
#: the weakest type); ``sentences_supported`` and ``ok_share`` are not columns there.
JUDGE_TABLE_METRICS: Final[tuple[str, ...]] = (*AXES, "full_marks", "quote_verified")

#: Every per-question judge metric and its scale.
JUDGE_METRIC_SCALES: Final[Mapping[str, MetricScale]] = MappingProxyType(
    {
        **{axis: "score" for axis in SCORED_AXES},
        **{metric: "score" for metric in EXPECTED_METRICS},
        **{metric: "share" for metric in JUDGE_VALUES if metric not in AXES},
    }
)
#: The judge metrics on the 0-2 scale; every other metric (retrieval ones included) is on 0-1.
SCORE_METRICS: Final[frozenset[str]] = frozenset(
    metric for metric, scale in JUDGE_METRIC_SCALES.items() if scale == "score"
)


def metric_scale(metric: str) -> MetricScale:
    """The scale of any metric, judge or retrieval: only the judge's scores (the optional
    axes' included) are on 0-2."""
    return "score" if metric in SCORE_METRICS else "share"


def present_axes(present: Collection[str]) -> tuple[OptionalAxis, ...]:
    """The optional axes among ``present`` (metric names a run has values for, or axes), in
    display order: what a view shows beside faithfulness and relevance."""
    return tuple(axis for axis in OPTIONAL_AXES if axis in present)


def _after_the_axes(metrics: tuple[str, ...], optional: Collection[str]) -> tuple[str, ...]:
    return (*AXES, *present_axes(optional), *metrics[len(AXES) :])


def judge_values_with(optional: Collection[str] = ()) -> tuple[str, ...]:
    """``JUDGE_VALUES`` of a run with the optional axes ``optional``: each after relevance."""
    return _after_the_axes(JUDGE_VALUES, optional)


def judge_table_metrics(optional: Collection[str] = ()) -> tuple[str, ...]:
    """``JUDGE_TABLE_METRICS`` of a run with the optional axes ``optional`` (the judge table's
    columns; the first, faithfulness, still decides the weakest type)."""
    return _after_the_axes(JUDGE_TABLE_METRICS, optional)
