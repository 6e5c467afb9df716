"""The season's data: each night's points with intervals, the gate's strongest decision per
cell, and what changed under the numbers from night to night."""

from __future__ import annotations

import pytest

from judge.inputs.runs import RunSettings
from judge.results.compare import SEASON, Change, Moved, QuestionValues, SectionComparison
from judge.results.night_summary import charted_metrics, point, type_points
from judge.results.season_view import (
    NightInput,
    build_season,
    night_changes,
    night_marks,
)
from tests.report import history_screens as screens


def _change(metric: str, direction: str, type_name: str = "factual") -> Change:
    return Change(
        "judge",
        type_name,
        metric,
        4,
        2.0,
        1.0,
        -1.0,
        -1.5,
        -0.5,
        0.1,
        direction,  # type: ignore[arg-type]
        (Moved("q1", 2.0, 0.0), Moved("q2", 2.0, 1.0)),
    )


def test_the_strongest_decision_per_cell_with_the_moved_questions_diagnosed() -> None:
    last = SectionComparison(
        "judge",
        "20261101T000000Z-a",
        [_change("faithfulness", "listed"), _change("relevance", "noise")],
        "",
    )
    season = SectionComparison("judge", SEASON, [_change("faithfulness", "regressed")], "")
    pinned = SectionComparison("judge", "baseline", [_change("ok_share", "collapsed")], "")
    marks = night_marks("REGRESSED: …", [last, season, pinned], {"q1": "retrieval miss"})
    by_metric = {m.metric: m for m in marks.marks}
    assert set(by_metric) == {"faithfulness", "ok_share"}  # noise is no mark
    assert by_metric["faithfulness"].decision == "season"  # stronger than listed
    assert by_metric["ok_share"].decision == "collapsed"
    moved = by_metric["faithfulness"].moved
    assert [(m.id, m.diagnosis) for m in moved] == [("q1", "retrieval miss"), ("q2", "")]
    assert marks.verdict == "REGRESSED: …"


def test_a_regression_against_the_last_run_is_regressed() -> None:
    comp = SectionComparison("judge", "20261101T000000Z-a", [_change("relevance", "regressed")], "")
    assert night_marks("", [comp], {}).marks[0].decision == "regressed"


def test_points_carry_their_interval_and_n() -> None:
    assert point([]) is None
    one = point([1.5], top=2.0)
    assert one is not None and (one.mean, one.low, one.high, one.n) == (1.5, 1.5, 1.5, 1)
    share = point([1.0] * 10)
    assert share is not None and share.mean == 1.0 and share.high == 1.0
    assert share.low == pytest.approx(0.7225, abs=1e-3)  # Wilson, not a zero-width interval
    scores = point([0.0, 1.0, 2.0, 2.0], top=2.0)
    assert scores is not None and scores.low >= 0.0 and scores.high == 2.0  # cut to the scale
    assert scores.low < scores.mean < scores.high and scores.n == 4


def test_metrics_at_context_k_and_per_type_points() -> None:
    values = QuestionValues(
        {"a": "x", "b": "y", "c": "y"},
        {
            "retrieval": {"recall@5": {"a": 1.0, "b": 0.0}, "recall@10": {"a": 1.0}, "mrr": {}},
            "judge": {"faithfulness": {"a": 2.0, "b": 1.0, "c": 0.0}, "full_marks": {"a": 1.0}},
        },
    )
    assert charted_metrics(values, 5) == [
        "retrieval:recall@5",
        "retrieval:mrr",
        "judge:faithfulness",
    ]
    points = type_points(values, "judge:faithfulness")
    assert {t: (p.mean, p.n) for t, p in points.items() if p} == {
        "all": (1.0, 3),
        "x": (2.0, 1),
        "y": (0.5, 2),
    }


def test_changes_night_to_night() -> None:
    nights = screens.season_nights()
    before, after = nights[0], nights[1]
    entry = after.entry.model_copy(
        update={
            "golden_hash": "h1:other",
            "corpus_hash": "h1:other",
            "settings": RunSettings(
                embedding_model="bge-m3",
                embedding_version="2024-02",
                embedding_dimension=1024,
                embedding_canary="c:aaaaaaaaaaaa",
                chunking={"max_chars": 800},
                generator_model="gemma3:4b",
            ),
            "judge_parts": {**before.entry.judge_parts, "model": "gemma3:12b"},
        }
    )
    types = dict(before.values.types) if before.values else {}
    types.pop("f00")
    types["new1"] = "factual"
    values = QuestionValues(types, {})
    changes = night_changes(before, NightInput(entry, None, values, None))
    kinds = [kind for kind, _ in changes]
    assert kinds == ["judge", "golden", "corpus", "index", "index", "settings", "settings"]
    texts = dict(zip(range(len(changes)), (t for _, t in changes), strict=True))
    assert texts[0] == "the judge model (gemma3:27b → gemma3:12b)"
    assert texts[1] == "the golden set changed (1 question(s) added, 1 retired)"
    assert texts[3] == "the embedding model (multilingual-e5-small → bge-m3)"
    assert texts[4] == "the embedding dimension (384 → 1024)"
    assert texts[5].startswith("the chunking (max_chars not stated → 800)")


def test_the_season_of_the_generated_nights() -> None:
    view = build_season(screens.season_nights())
    assert len(view.nights) == screens.NIGHTS
    assert [(c.night, c.kind) for c in view.changes] == [
        (screens.EMBEDDING_CHANGE, "index"),
        (screens.PROMPT_CHANGE, "judge"),
    ]
    series = view.series[("factual", "judge:faithfulness")]
    assert series.decisions[screens.COLLAPSE] == "collapsed" and series.baseline is None
    assert len(series.moved[screens.COLLAPSE]) == 12
    pinned = build_season(screens.season_nights(), screens.season_nights()[0].values)
    assert pinned.series[("all", "judge:ok_share")].baseline == 1.0
