"""A night's summary: per charted metric and type the point with its interval and n, in the
order the season charts them, and the golden questions' count and digest; it survives
``marks.json`` exactly."""

from __future__ import annotations

from judge.results.compare import QuestionValues
from judge.results.night_summary import (
    DEFAULT_CONTEXT_K,
    NightSummary,
    charted_metrics,
    ids_digest,
    summarise_night,
    type_points,
)


def _values() -> QuestionValues:
    return QuestionValues(
        {"q1": "事実", "q2": "手順", "q3": "手順", "q4": "factual"},
        {
            "retrieval": {
                "recall@10": {"q1": 1.0},
                "recall@5": {"q1": 1.0, "q2": 0.0, "q3": 1.0},
                "mrr": {"q1": 1.0, "q2": 0.5},
            },
            "judge": {"faithfulness": {"q1": 2.0, "q2": 1.0, "q3": 0.0, "q4": 2.0}},
        },
    )


def test_the_summary_holds_every_charted_point_in_the_charted_order() -> None:
    values = _values()
    summary = summarise_night(None, values)
    assert list(summary.points) == charted_metrics(values, DEFAULT_CONTEXT_K)
    for metric, points in summary.points.items():
        assert points == type_points(values, metric)  # types in the order the values show them
    assert list(summary.points["judge:faithfulness"]) == ["all", "事実", "手順", "factual"]
    assert summary.context_k is None and summary.judge is None and summary.harness is None
    assert summary.golden.questions == 4


def test_the_summary_survives_json_exactly() -> None:
    values = QuestionValues(
        {f"q{i}": "x" for i in range(7)},
        {"judge": {"relevance": {f"q{i}": [0.0, 1.0, 2.0][i % 3] for i in range(7)}}},
    )
    summary = summarise_night(None, values)
    read = NightSummary.model_validate_json(summary.model_dump_json())
    assert read == summary  # every float as written: the picture from it is the same
    point = read.points["judge:relevance"]["all"]
    assert point is not None and point.n == 7 and point.low < point.mean < point.high


def test_the_ids_digest_is_of_the_set() -> None:
    assert ids_digest(["b", "a", "日本"]) == ids_digest(["日本", "a", "b"])
    assert ids_digest(["a", "b"]) != ids_digest(["a", "c"])
    assert ids_digest(["a", "b"]).startswith("sha256:")
