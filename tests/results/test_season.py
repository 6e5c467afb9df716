"""The season: tonight and the last nights against each question's median over earlier runs
(judge.results.season), with exact binomial tails; and decisions that never depend on a name."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from judge.results.compare import (
    GateRule,
    QuestionValues,
    SectionComparison,
    compare_values,
    decide,
)
from judge.results.season import (
    MIN_REFERENCE,
    _binomial_tail,
    cell_tests,
    least_p,
    season_comparison,
    sum_tail,
    tarone,
)

RULE = GateRule()


def _night(values: dict[str, float], types: dict[str, str]) -> QuestionValues:
    return QuestionValues(types, {"retrieval": {}, "judge": {"faithfulness": dict(values)}})


def _noisy_nights(
    rng: np.random.Generator, truth: dict[str, float], types: dict[str, str], nights: int
) -> list[QuestionValues]:
    """Each score moved a point towards the middle with probability 0.1 (docs/gate.md's noise)."""
    out = []
    for _ in range(nights):
        values = {
            q: (1.0 if v != 1.0 else 2.0) if rng.random() < 0.1 else v for q, v in truth.items()
        }
        out.append(_night(values, types))
    return out


TYPES = {f"f{i:02d}": "factual" for i in range(1, 13)}
TRUTH = dict.fromkeys(TYPES, 2.0)


def test_the_binomial_tail_is_scipys() -> None:
    for k, n, p in [
        (5, 24, 1 / 21),
        (14, 33, 3 / 23),
        (1, 1, 0.5),
        (300, 20000, 0.01),
        (0, 5, 0.2),
    ]:
        assert _binomial_tail(k, n, p) == pytest.approx(binom.sf(k - 1, n, p), rel=1e-9)


def test_no_season_before_five_earlier_runs() -> None:
    nights = [_night(TRUTH, TYPES)] * (MIN_REFERENCE - 1)
    assert season_comparison("judge", nights, _night(TRUTH, TYPES), RULE) is None


def test_a_fall_that_stays_is_seen_by_the_season_when_one_night_cannot() -> None:
    # Twenty noisy nights, then four of twelve factual answers lose a point and stay there.
    # Against the last night each of the three nights shows at best p = 1/16 (listed); against
    # the season, tonight and the two nights before it are twelve events below the reference
    # where the season expects about one.
    rng = np.random.default_rng(3)
    earlier = _noisy_nights(rng, TRUTH, TYPES, 20)
    fallen = TRUTH | dict.fromkeys(["f01", "f02", "f03", "f04"], 1.0)
    after = [_night(fallen, TYPES) for _ in range(3)]
    one_night = compare_values("judge", earlier[-1], after[0], RULE)
    assert one_night[0].direction in {"listed", "noise"}
    comparison = season_comparison("judge", [*earlier, *after[:2]], after[2], RULE)
    assert comparison is not None
    (change,) = comparison.changes
    assert change.direction == "regressed"
    assert change.nights in (2, 3) and change.p_fall < 1e-3
    assert change.old == 2.0 and change.new == pytest.approx(5 / 3)
    assert [m.question_id for m in change.moved][:4] == ["f01", "f02", "f03", "f04"]
    assert comparison.regressions == [change]
    assert "median over 20 earlier compatible runs" in comparison.note


def test_quiet_noisy_nights_and_a_deterministic_system_raise_nothing() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        nights = _noisy_nights(rng, TRUTH, TYPES, 23)
        comparison = season_comparison("judge", nights[:-1], nights[-1], RULE)
        assert comparison is not None and comparison.regressions == []
    same = [_night(TRUTH, TYPES)] * 22
    comparison = season_comparison("judge", same, _night(TRUTH, TYPES), RULE)
    assert comparison is not None
    assert [(c.direction, c.p_fall, c.p_rise) for c in comparison.changes] == [("noise", 1.0, 1.0)]


def _renamed(values: QuestionValues, old: str, new: str) -> QuestionValues:
    return QuestionValues(
        {q: new if t == old else t for q, t in values.types.items()}, values.values
    )


@pytest.mark.parametrize("falls", [3, 4])
def test_renaming_a_type_or_reordering_questions_changes_no_decision(falls: int) -> None:
    # The previous gate seeded its bootstrap from the cell's name: eight questions with three
    # falling 2 -> 1 regressed as "procedural" and not as "factual". Exact tests cannot.
    rng = np.random.default_rng(falls)
    types = {f"q{i:02d}": "factual" for i in range(8)} | {f"h{i:02d}": "how_to" for i in range(12)}
    before = {q: 2.0 for q in types}
    after = (
        before
        | {q: 1.0 for q in list(types)[:falls]}
        | {q: 1.0 for q in list(types)[8 : 8 + falls]}
    )
    old, new = _night(before, types), _night(after, types)
    earlier = _noisy_nights(rng, before, types, 22)

    def decisions(
        old: QuestionValues, new: QuestionValues, earlier: list[QuestionValues]
    ) -> list[tuple[str, ...]]:
        paired = decide(
            [SectionComparison("judge", "last", compare_values("judge", old, new, RULE), "")], RULE
        )
        season = season_comparison("judge", earlier, new, RULE)
        assert season is not None
        return sorted(
            (c.metric, str(c.n), c.direction, f"{c.p_fall:.12g}")
            for comp in [*paired, season]
            for c in comp.changes
        )

    base = decisions(old, new, earlier)
    for a, b in (("factual", "procedural"), ("how_to", "zz"), ("factual", "how_to_2")):
        renamed = decisions(
            _renamed(old, a, b), _renamed(new, a, b), [_renamed(e, a, b) for e in earlier]
        )
        assert renamed == base
    # Questions in another order: the same decisions.
    order = list(types)[::-1]
    shuffled = [
        QuestionValues(
            {q: v.types[q] for q in order},
            {
                "retrieval": {},
                "judge": {"faithfulness": {q: v.values["judge"]["faithfulness"][q] for q in order}},
            },
        )
        for v in (old, new, *earlier)
    ]
    assert decisions(shuffled[0], shuffled[1], shuffled[2:]) == base


def _kept(values: dict[str, float], answers: dict[str, str]) -> QuestionValues:
    return QuestionValues(
        TYPES, {"retrieval": {}, "judge": {"faithfulness": dict(values)}}, dict(answers)
    )


def test_a_kept_answer_is_one_observation_however_many_nights_it_stays() -> None:
    # A temperature-0 judge: three answers re-worded once, judged a point lower, and kept for
    # three nights. Counted every night (answers unknown) that is nine events where the season
    # had none, and the third night fails; counted per answer, tonight brings nothing new.
    answers = {q: f"{q}-a" for q in TYPES}
    quiet = [_kept(TRUTH, answers) for _ in range(17)]
    worse_values = TRUTH | dict.fromkeys(["f01", "f02", "f03"], 1.0)
    worse = _kept(worse_values, answers | {q: f"{q}-b" for q in ("f01", "f02", "f03")})
    kept = season_comparison("judge", [*quiet, worse, worse], worse, RULE)
    assert kept is not None and kept.regressions == []
    unknown = [_night(v.values["judge"]["faithfulness"], TYPES) for v in (*quiet, worse, worse)]
    counted = season_comparison("judge", unknown, _night(worse_values, TYPES), RULE)
    assert counted is not None and [c.nights for c in counted.regressions] == [3]


def test_the_good_answers_back_after_a_broken_night_are_no_regression() -> None:
    # Noisy nights with new answers each night, a broken night (every answer new and judged 0),
    # then the answers of the night before it, byte for byte: tonight is no regression, over
    # one, two or three nights, and neither is a night whose values are the pinned baseline's.
    rng = np.random.default_rng(5)
    nights = [
        QuestionValues(n.types, n.values, {q: f"{q}-{i}" for q in TYPES})
        for i, n in enumerate(_noisy_nights(rng, TRUTH, TYPES, 20))
    ]
    broken = _kept(dict.fromkeys(TYPES, 0.0), {q: f"{q}-broken" for q in TYPES})
    back = nights[-1]
    comparison = season_comparison("judge", [*nights, broken], back, RULE)
    assert comparison is not None and comparison.regressions == []
    fallen = _kept(dict.fromkeys(TYPES, 1.0), {q: f"{q}-fallen" for q in TYPES})
    called = season_comparison("judge", nights, fallen, RULE)
    assert called is not None and len(called.regressions) == 1
    pinned = season_comparison("judge", nights, fallen, RULE, pinned=fallen)
    assert pinned is not None and pinned.regressions == []


def test_the_good_answers_re_worded_after_a_broken_night_are_no_regression() -> None:
    # The same broken night, then good answers that are new (re-worded, judged afresh): the
    # broken night is far below tonight, a fall that ended, and its zeros count only where a
    # question is still below tonight; no test over the nights that hold it fails tonight.
    rng = np.random.default_rng(6)
    nights = [
        QuestionValues(n.types, n.values, {q: f"{q}-{i}" for q in TYPES})
        for i, n in enumerate(_noisy_nights(rng, TRUTH, TYPES, 22))
    ]
    broken = _kept(dict.fromkeys(TYPES, 0.0), {q: f"{q}-broken" for q in TYPES})
    for tonight, before in ((nights[20], [broken]), (nights[21], [broken, nights[20]])):
        comparison = season_comparison("judge", [*nights[:20], *before], tonight, RULE)
        assert comparison is not None and comparison.regressions == []


def test_a_fallen_answer_judged_at_its_old_score_tonight_keeps_its_earlier_evidence() -> None:
    # Four of twelve answers fall a point for three nights, every answer new each night; the
    # judge's error puts one of them back at 2 tonight. The nights of the fall are alike (none
    # more than two margins below tonight), so the first two nights' events of that answer
    # still count: 11 events against none in the 20 nights before (p = (3/23)^11), not the 9
    # left when every night was clipped to tonight (the first version of the rule, which cost
    # a third of the detection: docs/gate.md).
    quiet = np.full((20, 12), 2.0)
    fallen = np.full((3, 12), 2.0)
    fallen[:, :4] = 1.0
    fallen[2, 3] = 2.0
    cell = np.vstack([quiet, fallen])
    new = np.ones(cell.shape, dtype=bool)
    kept = cell_tests(cell, new, True, RULE.margin("faithfulness"))
    clipped = cell_tests(cell, new, True, RULE.margin("faithfulness"), ended=None)
    assert kept[2].nights == clipped[2].nights == 3
    assert kept[2].p_fall == pytest.approx((3 / 23) ** 11, rel=1e-6)
    assert clipped[2].p_fall == pytest.approx((3 / 23) ** 9, rel=1e-6)


def test_tarone_leaves_out_the_tests_that_could_never_be_rejected() -> None:
    # Sixty tests, two of which could reach the level: each is held to 0.01 / 2, not 0.01 / 60.
    assert tarone([1e-6, 1e-6, *[1.0] * 58], 0.01) == 0.005
    assert tarone([1e-6] * 3, 0.01) == pytest.approx(0.01 / 3)
    assert sum_tail(2, {0.25: 4}) == pytest.approx(binom.sf(1, 4, 0.25))
    assert sum_tail(3, {0.25: 4, 0.5: 2}) == pytest.approx(
        sum(
            binom.pmf(i, 4, 0.25) * binom.pmf(j, 2, 0.5)
            for i in range(5)
            for j in range(3)
            if i + j >= 3
        )
    )
    assert least_p({0.25: 2, 0.5: 1}) == pytest.approx(0.25**2 * 0.5)
