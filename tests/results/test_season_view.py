"""The season's data: each night's points with intervals, the gate's strongest decision per
cell, and what changed under the numbers from night to night."""

from __future__ import annotations

import pytest

from judge.inputs.runs import RunSettings
from judge.report.history_page import season_page_data
from judge.results.compare import SEASON, Change, Moved, QuestionValues, SectionComparison
from judge.results.night_summary import charted_metrics, point, summarise_night, type_points
from judge.results.season_view import (
    NightInput,
    NightMarks,
    build_season,
    golden_counts_needed,
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


def _from_summaries(nights: list[NightInput]) -> list[NightInput]:
    """The same nights as the season reads them from their ``marks.json``: marks and summary
    through JSON, no values."""
    out = []
    for night in nights:
        assert night.marks is not None and night.values is not None
        kept = night.marks.model_copy(
            update={"night": summarise_night(night.manifest, night.values)}
        )
        read = NightMarks.model_validate_json(kept.model_dump_json())
        out.append(NightInput(night.entry, None, None, read, read.night))
    return out


def test_the_season_from_summaries_equals_the_season_from_values() -> None:
    nights = screens.season_nights()
    summarised = _from_summaries(nights)
    assert all(n.values is None and n.summary is not None for n in summarised)
    assert build_season(summarised) == build_season(nights)
    assert season_page_data(build_season(summarised)) == season_page_data(build_season(nights))
    # Old folders (no summary: values) before new ones, as after an upgrade.
    mixed = nights[:10] + summarised[10:]
    assert build_season(mixed) == build_season(nights)
    pinned = nights[0].values
    assert build_season(summarised, pinned) == build_season(nights, pinned)


def test_a_golden_change_from_summaries() -> None:
    nights = screens.season_nights()[:2]
    before, after = nights
    assert before.values is not None and after.values is not None
    edited = after._replace(entry=after.entry.model_copy(update={"golden_hash": "h1:edited"}))
    # The same questions, their labels edited: told from the ids' digest alone.
    from_values = night_changes(before, edited)
    kept = _from_summaries([before, edited])
    assert night_changes(*kept) == from_values
    assert from_values == [
        ("golden", "the golden set changed (same questions: labels or texts edited)")
    ]
    # Questions added: the digests differ, so the values are needed to count them.
    grown = edited._replace(values=after.values._replace(types={**after.values.types, "n": "x"}))
    kept = _from_summaries([before, grown])
    pair = (kept[0], kept[1])
    assert golden_counts_needed(pair, (kept[0].summary, kept[1].summary))
    assert night_changes(*kept) == [("golden", "the golden set changed")]
    counted = night_changes(
        kept[0]._replace(values=before.values), kept[1]._replace(values=grown.values)
    )
    assert counted == night_changes(before, grown)
    assert counted == [("golden", "the golden set changed (1 question(s) added, 0 retired)")]
    assert not golden_counts_needed((before, grown), (None, None))  # values at hand
