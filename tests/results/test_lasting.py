"""Answers below the baseline or the season since a date (judge.results.lasting)."""

from __future__ import annotations

from judge.results.compare import QuestionValues
from judge.results.lasting import (
    MIN_NIGHTS,
    Lasting,
    NightValues,
    ended_notes,
    lasting_falls,
    lasting_text,
)

TYPES = {"q01": "factual", "q02": "factual", "q03": "factual"}


def _values(faith: dict[str, float], hit: dict[str, float] | None = None) -> QuestionValues:
    retrieval = {"hit@1": {q: 1.0 for q in faith}, "hit@5": hit or {q: 1.0 for q in faith}}
    return QuestionValues(TYPES, {"retrieval": retrieval, "judge": {"faithfulness": faith}})


GOOD = {"q01": 2.0, "q02": 2.0, "q03": 1.0}


def test_a_fall_that_stays_is_listed_from_its_second_night_with_its_first_date() -> None:
    fell = GOOD | {"q02": 1.0}
    nights = [NightValues(f"2026-12-0{d}", _values(GOOD)) for d in (1, 2, 3)]
    one = [*nights, NightValues("2026-12-04", _values(fell))]
    assert lasting_falls(one, None) == []  # one night below: what noise does
    two = [*one, NightValues("2026-12-05", _values(fell))]
    assert lasting_falls(two, None) == [
        Lasting("q02", "judge", "faithfulness", "2026-12-04", 2.0, 1.0, 2, "season")
    ]
    assert MIN_NIGHTS == 2
    back = [*two, NightValues("2026-12-06", _values(GOOD))]
    assert lasting_falls(back, None) == []


def test_against_a_pinned_baseline_and_on_retrieval_at_the_largest_k() -> None:
    pinned = _values(GOOD | {"q03": 2.0})
    lost = _values(GOOD, {"q01": 0.0, "q02": 1.0, "q03": 1.0})
    nights = [
        NightValues("2026-12-01", _values(GOOD)),
        NightValues("2026-12-02", lost),
        NightValues("x", lost),
    ]
    found = lasting_falls(nights, pinned)
    assert [(x.question_id, x.section, x.metric, x.against, x.since) for x in found] == [
        ("q03", "judge", "faithfulness", "baseline", "2026-12-01"),
        ("q01", "retrieval", "hit@5", "baseline", "2026-12-02"),
    ]


def test_the_first_lines_count_and_the_ended_notes() -> None:
    assert lasting_text([]) is None
    listed = [
        Lasting("q02", "judge", "faithfulness", "2026-12-02", 2.0, 1.0, 3, "baseline"),
        Lasting("q02", "judge", "relevance", "2026-12-01", 2.0, 1.0, 4, "baseline"),
        Lasting("q10", "judge", "faithfulness", "2026-12-03", 2.0, 0.0, 2, "baseline"),
    ]
    assert lasting_text(listed) == "2 answers below the baseline since 2026-12-01: q02, q10"
    assert lasting_text(listed[:1]) == "1 answer below the baseline since 2026-12-02: q02"
    assert ended_notes(None, "", [], []) == []
    assert ended_notes(([], listed), "2026-12-04", [], listed[2:]) == [
        "q02 back at its reference: the fall ended"
    ]


def test_the_season_median_is_numpys_nanmedian_exactly() -> None:
    """``_nanmedian`` (one sort, issue 35) gives numpy's ``nanmedian`` bit for bit: scores,
    shares and arbitrary floats, odd and even counts, columns with gaps."""
    import numpy as np

    from judge.results.lasting import _nanmedian

    rng = np.random.default_rng(35)
    for trial in range(2000):
        rows, cols = int(rng.integers(1, 25)), int(rng.integers(1, 40))
        if trial % 2:
            matrix = rng.choice([0.0, 1.0, 2.0, 0.5, 1 / 3, np.nan], size=(rows, cols))
        else:
            matrix = rng.normal(size=(rows, cols))
        matrix[rng.random((rows, cols)) < 0.3] = np.nan
        valued = np.count_nonzero(~np.isnan(matrix), axis=0) >= 1
        if valued.any():
            expected = np.nanmedian(matrix[:, valued], axis=0)
            assert np.array_equal(_nanmedian(matrix[:, valued]), expected)
