"""Simulated seasons for the regression gate (issue 19): how often it cries wolf over 30
nights, how many nights it takes to see a real fall, and that a collapse always fails. Figures
in docs/gate.md and docs/benchmarks.md; ``python bench/gate_sim.py [--histories N]``; ``make
bench`` runs it.

Golden sets shaped like the shipped sample (factual 12, procedural 8, negative 5, out_of_scope
5) and like a 10-question set (3/3/2/2), with per-question values drawn once per history. On
each night each verdict is re-drawn with probability ``flip`` (one point away; the generator
rewrote an answer a little, the judge read it differently), the quote check with half that,
and each ranking with probability ``RETRIEVAL_FLIP``. A baseline is pinned on the first night;
every later night is checked as ``judge nightly`` checks it:

- **new rule** (this release): question by question against the last night and the baseline,
  one family decided by Holm's rule over exact sign-flip p-values (``compare.decide``), plus
  collapses, plus the season (``judge.results.season``) once five earlier nights exist;
- **previous rule** (the last release): per type, a percentile bootstrap interval below 0 with
  the seed taken from the cell's name, the margin, and at least 8 questions; types below 8 are
  listed, never failed.

A false alarm is any regression on a night where nothing changed; a history has one when any
of its 30 checked nights does. A drop starts after 20 quiet nights and stays; it is caught
within k nights when the rule calls a regression in the dropped type on one of the first k
nights of the drop.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.results.baseline import ratchet_values
from judge.results.compare import (
    SECTIONS,
    GateRule,
    QuestionValues,
    SectionComparison,
    compare_values,
    decide,
)
from judge.results.paired import bootstrap_interval, holm, seed_for
from judge.results.season import (
    DECIDED,
    MIN_REFERENCE,
    RECENT,
    WINDOW,
    _binomial_tail,
    cell_tests,
    season_comparison,
    tarone,
)

TYPES = {"factual": 12, "procedural": 8, "negative": 5, "out_of_scope": 5}
OUT_OF_SCOPE = {"out_of_scope"}
#: Judge scores of the sample's kind of RAG system: mostly good, some partly grounded.
FAITHFULNESS = (0.10, 0.25, 0.65)  # P(0), P(1), P(2)
RELEVANCE = (0.05, 0.20, 0.75)
QUOTE_VERIFIED = 0.8
#: Rank of the first relevant chunk (one relevant chunk per question): 1, 2, 3, 4-10, none.
RANKS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None)
RANK_P = (0.45, 0.15, 0.10, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03, 0.02, 0.10)
KS = (5, 1, 10)
#: A question's ranking changes between nights this often (an index rebuild, ties).
RETRIEVAL_FLIP = 0.05


class Question(NamedTuple):
    qid: str
    type: str
    faithfulness: int
    relevance: int
    quote: bool
    rank: int | None
    """None: no relevant chunk retrieved; out-of-scope questions have no retrieval at all."""


def _question(qid: str, type_name: str, rng: np.random.Generator) -> Question:
    """A question's values as they are when nothing disturbs them."""
    return Question(
        qid,
        type_name,
        int(rng.choice(3, p=FAITHFULNESS)),
        int(rng.choice(3, p=RELEVANCE)),
        bool(rng.random() < QUOTE_VERIFIED),
        RANKS[int(rng.choice(len(RANKS), p=RANK_P))],
    )


def _golden(rng: np.random.Generator, sizes: dict[str, int] = TYPES) -> list[Question]:
    return [
        _question(f"{type_name}-{i:02d}", type_name, rng)
        for type_name, count in sizes.items()
        for i in range(count)
    ]


def _neighbour(score: int, rng: np.random.Generator) -> int:
    """A re-drawn verdict lands one point away (a 0 or a 2 can only go to 1)."""
    if score in (0, 2):
        return 1
    return int(rng.choice([0, 2]))


def _night(
    questions: list[Question],
    flip: float,
    rng: np.random.Generator,
    retrieval_flip: float = 0.05,
) -> list[Question]:
    """One night's values: each verdict re-drawn with probability ``flip`` (each axis on its own),
    each ranking with probability ``retrieval_flip``."""
    night = []
    for q in questions:
        f = _neighbour(q.faithfulness, rng) if rng.random() < flip else q.faithfulness
        r = _neighbour(q.relevance, rng) if rng.random() < flip else q.relevance
        quote = (not q.quote) if rng.random() < flip / 2 else q.quote
        rank = q.rank
        if q.type not in OUT_OF_SCOPE and rng.random() < retrieval_flip:
            rank = RANKS[int(rng.choice(len(RANKS), p=RANK_P))]
        night.append(q._replace(faithfulness=f, relevance=r, quote=quote, rank=rank))
    return night


def _retrieval(rank: int | None) -> dict[str, float]:
    values: dict[str, float] = {}
    for index, k in enumerate(KS):
        found = rank is not None and rank <= k
        values[f"recall@{k}"] = float(found)
        values[f"hit@{k}"] = float(found)
        if index == 0:
            values["mrr"] = 0.0 if rank is None else 1.0 / rank
        values[f"ndcg@{k}"] = 1.0 / math.log2(rank + 1) if found and rank else 0.0
    return values


def values_of(night: list[Question]) -> QuestionValues:
    """A night's per-question values, as ``judge.results.values`` reads them from a folder."""
    types = {q.qid: q.type for q in night}
    retrieval: dict[str, dict[str, float]] = {}
    judge: dict[str, dict[str, float]] = {
        m: {} for m in ("faithfulness", "relevance", "full_marks", "quote_verified", "ok_share")
    }
    for q in night:
        if q.type not in OUT_OF_SCOPE:
            for metric, value in _retrieval(q.rank).items():
                retrieval.setdefault(metric, {})[q.qid] = value
        judge["faithfulness"][q.qid] = float(q.faithfulness)
        judge["relevance"][q.qid] = float(q.relevance)
        judge["full_marks"][q.qid] = float(q.faithfulness == 2 and q.relevance == 2)
        judge["quote_verified"][q.qid] = float(q.quote)
        judge["ok_share"][q.qid] = 1.0
    return QuestionValues(types, {"retrieval": retrieval, "judge": judge})


SMALL = {"factual": 3, "procedural": 3, "negative": 2, "out_of_scope": 2}
SHAPES = {"sample": TYPES, "10 questions": SMALL}
SCORES = ("faithfulness", "relevance")
#: What the previous release's gate needed (reports.min_questions).
PREVIOUS_MIN_QUESTIONS = 8
RULE = GateRule()
Key = tuple[str, str, str]
"""(section, type, metric)."""


def previous_rule(before: QuestionValues, after: QuestionValues) -> set[Key]:
    """The last release's paired gate: per type, the percentile bootstrap interval (seeded from
    the cell's names) wholly below 0, a fall beyond the margin, at least 8 pairs."""
    fell = set()
    for section in SECTIONS:
        old_metrics = before.values[section]
        for metric, new in after.values[section].items():
            old = old_metrics.get(metric, {})
            groups: dict[str, list[str]] = {}
            for q in new:
                if q in old:
                    groups.setdefault(after.types[q], []).append(q)
            for type_name, ids in groups.items():
                d = np.asarray([new[q] - old[q] for q in ids])
                if len(ids) < PREVIOUS_MIN_QUESTIONS or d.mean() >= -RULE.margin(metric) - 1e-9:
                    continue
                _, high = bootstrap_interval(d, seed_for(section, type_name, metric))
                if high < 0:
                    fell.add((section, type_name, metric))
    return fell


def new_rule(
    before: QuestionValues,
    after: QuestionValues,
    baseline: QuestionValues | None,
    season: list[QuestionValues],
    order: tuple[str, ...],
) -> tuple[set[tuple[str, Key]], set[tuple[str, Key]]]:
    """What ``judge nightly`` calls regressed tonight, as (kind, key) with kind "paired",
    "collapse" or "season": with the baseline checked too, and without it."""
    last = [
        SectionComparison(s, "last", compare_values(s, before, after, RULE, order), "")
        for s in SECTIONS
    ]
    pinned = (
        [
            SectionComparison(s, "baseline", compare_values(s, baseline, after, RULE, order), "")
            for s in SECTIONS
        ]
        if baseline is not None
        else []
    )
    seasonal: set[tuple[str, Key]] = set()
    for s in SECTIONS:
        comp = season_comparison(s, season[-(WINDOW + RECENT - 1) :], after, RULE, order)
        for c in comp.regressions if comp is not None else []:
            seasonal.add(("season", (c.section, c.type, c.metric)))

    def called(comparisons: list[SectionComparison]) -> set[tuple[str, Key]]:
        found = set(seasonal)
        for comp in decide(comparisons, RULE):
            for c in comp.regressions:
                kind = "collapse" if c.direction == "collapsed" else "paired"
                found.add((kind, (c.section, c.type, c.metric)))
        return found

    return called(last + pinned), called(last)


Drop = Callable[[list[Question]], list[Question]]


class Night(NamedTuple):
    new: set[tuple[str, Key]]
    new_last_only: set[tuple[str, Key]]
    """The new rule without the baseline (a nightly with no pinned baseline)."""
    previous: set[Key]
    """The previous rule, against the last night and the baseline."""


def history(
    sizes: dict[str, int],
    flip: float,
    nights: int,
    rng: np.random.Generator,
    drop: Drop | None = None,
    drop_from: int = 0,
    retrieval_flip: float = RETRIEVAL_FLIP,
) -> list[Night]:
    """The checks of nights 1..nights (night 0 pins the baseline) on a golden set of its own;
    from ``drop_from`` on, each night's values pass through ``drop`` first."""
    golden = _golden(rng, sizes)
    return history_with(golden, sizes, flip, nights, rng, drop, drop_from, retrieval_flip)


def quiet(
    sizes: dict[str, int], flip: float, histories: int, seed: int, nights: int = 30
) -> dict[str, Any]:
    """False alarms on histories where nothing changes: per night and per 30-night history, for
    the new rule (with and without a baseline) and the previous one; the kinds of check that
    raised the new rule's."""
    rng = np.random.default_rng(seed)
    night_counts = {"new": 0, "new_last_only": 0, "previous": 0}
    history_counts = dict.fromkeys(night_counts, 0)
    kinds: dict[str, int] = {}
    retrieval_flip = RETRIEVAL_FLIP if flip > 0 else 0.0
    for _ in range(histories):
        checked = history(sizes, flip, nights, rng, retrieval_flip=retrieval_flip)
        for name in night_counts:
            alarms = [bool(getattr(n, name)) for n in checked]
            night_counts[name] += sum(alarms)
            history_counts[name] += any(alarms)
        for n in checked:
            for kind in {kind for kind, _ in n.new}:
                kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "flip": flip,
        "histories": histories,
        "per_night": {k: v / (histories * nights) for k, v in night_counts.items()},
        "per_history": {k: v / histories for k, v in history_counts.items()},
        "kinds": kinds,
    }


def _lose(
    type_name: str,
    count: int,
    what: str,
    amount: int,
    rng: np.random.Generator,
    golden: list[Question],
) -> Drop:
    """A persistent fall: ``count`` questions of ``type_name`` (chosen once, among those that can
    fall) lose ``amount`` points of ``what`` ("faithfulness") or their relevant chunk ("chunk")."""
    if what == "chunk":
        can = [q.qid for q in golden if q.type == type_name and q.rank is not None and q.rank <= 5]
    elif what == "collapse":
        can = [q.qid for q in golden if q.type == type_name and q.faithfulness > 0]
    else:
        can = [q.qid for q in golden if q.type == type_name and getattr(q, what) >= amount]
    if len(can) < count:
        can = [q.qid for q in golden if q.type == type_name]
    chosen = set(rng.choice(can, size=min(count, len(can)), replace=False).tolist())

    def drop(night: list[Question]) -> list[Question]:
        out = []
        for q in night:
            if q.qid in chosen:
                if what == "chunk":
                    q = q._replace(rank=None)
                elif what == "collapse":
                    q = q._replace(faithfulness=0, relevance=0)
                else:
                    q = q._replace(**{what: max(0, getattr(q, what) - amount)})
            out.append(q)
        return out

    return drop


#: Drop shapes of the issue: (name, golden shape, type, questions, what, points).
DROP_SHAPES = (
    (
        "a third of a point on 12 (4 of 12 factual lose a point)",
        "sample",
        "factual",
        4,
        "faithfulness",
        1,
    ),
    ("half a point on 12 (6 of 12 lose a point)", "sample", "factual", 6, "faithfulness", 1),
    ("2 questions × 2 points (of 12)", "sample", "factual", 2, "faithfulness", 2),
    ("3 of 12 lose their relevant chunk", "sample", "factual", 3, "chunk", 0),
    ("3 of 8 procedural lose a point", "sample", "procedural", 3, "faithfulness", 1),
    ("3 of 5 negative answers fail (scores to 0)", "sample", "negative", 3, "collapse", 0),
    ("2 of 2 negative fail (10-question set)", "10 questions", "negative", 2, "collapse", 0),
    ("3 of 3 procedural fail (10-question set)", "10 questions", "procedural", 3, "collapse", 0),
)


def detect(
    shape: tuple[Any, ...], flip: float, histories: int, seed: int, warm: int = 20
) -> dict[str, Any]:
    """Of ``histories`` with the drop starting after ``warm`` quiet nights: the share caught
    within 1, 2 and 3 nights (a regression in the dropped type), new rule and previous rule."""
    name, golden_shape, type_name, count, what, amount = shape
    sizes = SHAPES[golden_shape]
    rng = np.random.default_rng(seed)
    caught = {"new": [0, 0, 0], "previous": [0, 0, 0]}
    for _ in range(histories):
        # A golden set of its own per history (two seeds deep: the figures in docs/gate.md were
        # drawn so), the fallen questions picked from it, then its nights.
        golden_rng = np.random.default_rng(rng.integers(1 << 62))
        probe = _golden(np.random.default_rng(golden_rng.integers(1 << 62)), sizes)
        drop = _lose(type_name, count, what, amount, rng, probe)
        checked = history_with(probe, sizes, flip, warm + 3, rng, drop, warm + 1)
        for rule_name in caught:
            first = None
            for k, n in enumerate(checked[warm : warm + 3]):
                keys = {key for _, key in n.new} if rule_name == "new" else n.previous
                if any(key[1] == type_name for key in keys):
                    first = k
                    break
            if first is not None:
                for k in range(first, 3):
                    caught[rule_name][k] += 1
    return {
        "shape": name,
        "flip": flip,
        "histories": histories,
        "within": {r: [c / histories for c in counts] for r, counts in caught.items()},
    }


def history_with(
    golden: list[Question],
    sizes: dict[str, int],
    flip: float,
    nights: int,
    rng: np.random.Generator,
    drop: Drop | None,
    drop_from: int,
    retrieval_flip: float = RETRIEVAL_FLIP,
) -> list[Night]:
    """``history`` on a given golden set."""
    order = tuple(sizes)
    first = values_of(_night(golden, flip, rng, retrieval_flip))
    before, baseline, season = first, first, [first]
    out = []
    for t in range(1, nights + 1):
        night = _night(golden, flip, rng, retrieval_flip)
        if drop is not None and t >= drop_from:
            night = drop(night)
        tonight = values_of(night)
        with_baseline, last_only = new_rule(before, tonight, baseline, season, order)
        out.append(
            Night(
                with_baseline,
                last_only,
                previous_rule(before, tonight) | previous_rule(baseline, tonight),
            )
        )
        before = tonight
        season.append(tonight)
    return out


def _nonsense(night: list[Question]) -> list[Question]:
    """Every answer replaced by nonsense, every ranking reversed (the relevant chunk last)."""
    return [
        q._replace(faithfulness=0, relevance=0, quote=False, rank=None if q.rank else q.rank)
        for q in night
    ]


def _negative_fail(night: list[Question]) -> list[Question]:
    """4 of 5 negative answers judged unfaithful (the article's incident): those that were not
    already at 0 (``collapses`` draws golden sets where four are not)."""
    out, failed = [], 0
    for q in night:
        if q.type == "negative" and failed < 4 and q.faithfulness > 0:
            q = q._replace(faithfulness=0)
            failed += 1
        out.append(q)
    return out


def _pooled_score(night: list[Question], rng: np.random.Generator) -> list[Question]:
    """Relevance falls by at least 0.5 over all questions: a point off every other answer that
    can lose one, and more until the mean has fallen by half a point."""
    out = list(night)
    need = 0.5 * len(out)
    order = rng.permutation(len(out))
    lost = 0
    for i in order:
        q = out[i]
        if lost >= need:
            break
        if q.relevance > 0:
            out[i] = q._replace(relevance=q.relevance - 1)
            lost += 1
    return out


def _pooled_share(night: list[Question], rng: np.random.Generator) -> list[Question]:
    """A fifth of the questions with retrieval lose their relevant chunk (hit@5 falls by 0.2)."""
    out = list(night)
    found = [i for i, q in enumerate(out) if q.type not in OUT_OF_SCOPE and q.rank and q.rank <= 5]
    scored = sum(q.type not in OUT_OF_SCOPE for q in out)
    need = int(np.ceil(0.2 * scored))
    for i in rng.permutation(found)[:need]:
        out[int(i)] = out[int(i)]._replace(rank=None)
    return out


def collapses(flip: float, histories: int, seed: int) -> list[dict[str, Any]]:
    """Collapses on the first night checked (only the last night and the baseline to compare
    with, no season): the share failed by the new rule and by the previous one. The nonsense
    night and the failing negative answers come on a night of their own (with its noise); the
    pooled falls are measured falls (tonight is last night with the fall applied), since a
    fall "of 0.5" is what the gate sees."""
    rng = np.random.default_rng(seed)
    cases: list[tuple[str, str, Callable[[list[Question]], list[Question]], bool]] = [
        ("nonsense night (10-question set)", "10 questions", _nonsense, False),
        ("4 of 5 negative answers fail (sample)", "sample", _negative_fail, False),
        (
            "relevance falls 0.5 over all questions (sample)",
            "sample",
            lambda n: _pooled_score(n, rng),
            True,
        ),
        (
            "relevance falls 0.5 over all questions (10-question set)",
            "10 questions",
            lambda n: _pooled_score(n, rng),
            True,
        ),
        (
            "hit@5 falls 0.2 over all questions (sample)",
            "sample",
            lambda n: _pooled_share(n, rng),
            True,
        ),
        (
            "hit@5 falls 0.2 over all questions (10-question set)",
            "10 questions",
            lambda n: _pooled_share(n, rng),
            True,
        ),
    ]
    out = []
    for name, shape, change, measured in cases:
        sizes = SHAPES[shape]
        new = previous = 0
        for _ in range(histories):
            golden = _golden(rng, sizes)
            while (
                change is _negative_fail
                and sum(q.type == "negative" and q.faithfulness > 0 for q in golden) < 4
            ):
                golden = _golden(rng, sizes)
            last = _night(golden, flip, rng)
            first = values_of(last)
            tonight = values_of(change(last if measured else _night(golden, flip, rng)))
            new += bool(new_rule(first, tonight, first, [first], tuple(sizes))[0])
            previous += bool(previous_rule(first, tonight))
        out.append({"case": name, "new": new / histories, "previous": previous / histories})
    return out


def ratchet(flip: float, histories: int, seed: int, nights: int = 30) -> dict[str, Any]:
    """``judge baseline ratchet`` after every quiet night: the share of nights 20-30 with a
    false alarm against the ratcheted baseline, for the previous ratchet (raise a type wherever
    its mean is higher) and the new one (only where the run is shown better)."""
    rng = np.random.default_rng(seed)
    alarms = {"previous": 0, "new": 0}
    counted = 0
    for _ in range(histories):
        golden = _golden(rng, TYPES)
        first = values_of(_night(golden, flip, rng))
        pinned = {"previous": first, "new": first}
        for t in range(1, nights + 1):
            tonight = values_of(_night(golden, flip, rng))
            if t >= 20:
                counted += 1
                for name, base in pinned.items():
                    alarms[name] += bool(_against(base, tonight))
            pinned["previous"] = _ratchet_means(pinned["previous"], tonight)
            values, _ = ratchet_values(pinned["new"], tonight, RULE, SECTIONS, tuple(TYPES))
            pinned["new"] = QuestionValues(pinned["new"].types, values)
    return {"flip": flip, "histories": histories, **{k: v / counted for k, v in alarms.items()}}


def _against(baseline: QuestionValues, tonight: QuestionValues) -> bool:
    comparisons = [
        SectionComparison(
            s, "baseline", compare_values(s, baseline, tonight, RULE, tuple(TYPES)), ""
        )
        for s in SECTIONS
    ]
    return any(comp.regressions for comp in decide(comparisons, RULE))


def _ratchet_means(pinned: QuestionValues, run: QuestionValues) -> QuestionValues:
    """The previous ratchet: a type's values replaced wherever its mean is higher."""
    values = {s: {m: dict(v) for m, v in pinned.values[s].items()} for s in SECTIONS}
    for s in SECTIONS:
        for metric, now in run.values[s].items():
            target = values[s].setdefault(metric, {})
            for type_name in set(run.types.values()):
                ids = [q for q in now if run.types[q] == type_name]
                if not ids:
                    continue
                old = [target[q] for q in ids if q in target]
                if not old or statistics.fmean(now[q] for q in ids) > statistics.fmean(old) + 1e-9:
                    for q in ids:
                        target[q] = now[q]
    return QuestionValues(pinned.types, values)


def time_large_run(n_questions: int = 10_000, repeats: int = 3, seed: int = 4) -> dict[str, Any]:
    """Seconds for one night's checks of a ``n_questions`` run: both sections, every metric,
    against the last run and the baseline, decided as one family, and against a season of 22
    earlier nights; median of ``repeats``."""
    rng = np.random.default_rng(seed)
    total = sum(TYPES.values())
    sizes = {t: n_questions * n // total for t, n in TYPES.items()}
    sizes["factual"] += n_questions - sum(sizes.values())
    golden = _golden(rng, sizes)
    season = [values_of(_night(golden, 0.10, rng)) for _ in range(WINDOW + RECENT - 1)]
    tonight = values_of(_night(golden, 0.10, rng))
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        new_rule(season[-1], tonight, season[0], season, tuple(TYPES))
        seconds.append(time.perf_counter() - start)
    return {"questions": len(golden), "seconds": round(statistics.median(seconds), 3)}


def run(
    histories: int = 300, flips: tuple[float, ...] = (0.05, 0.10, 0.20), jobs: int = 2
) -> dict[str, Any]:
    """Every table of docs/gate.md; the rows run in ``jobs`` processes."""
    detect_histories = max(20, histories // 2)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        quiet_rows = [
            (shape, pool.submit(quiet, sizes, flip, histories, 10 + i))
            for shape, sizes in SHAPES.items()
            for i, flip in enumerate((0.0, *flips))
        ]
        detect_rows = [
            pool.submit(detect, shape, 0.10, detect_histories, 20 + i)
            for i, shape in enumerate(DROP_SHAPES)
        ]
        collapse_rows = pool.submit(collapses, 0.10, detect_histories, 30)
        ratchet_rows = [pool.submit(ratchet, 0.10, max(10, histories // 6), 40)]
        return {
            "quiet": [{"shape": shape, **row.result()} for shape, row in quiet_rows],
            "detect": [row.result() for row in detect_rows],
            "collapses": collapse_rows.result(),
            "ratchet": [row.result() for row in ratchet_rows],
            "large_run": time_large_run(),
        }


def describe(results: dict[str, Any]) -> list[str]:
    lines = [
        "  false alarms, nothing changed (per night · per 30-night history):",
        "  golden set    re-drawn | new rule        | new, no baseline | previous rule   | new rule's alarms by kind",
    ]
    for r in results["quiet"]:
        cells = " | ".join(
            f"{r['per_night'][k]:6.2%} · {r['per_history'][k]:5.1%}"
            for k in ("new", "new_last_only", "previous")
        )
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["kinds"].items())) or "none"
        lines.append(
            f"  {r['shape']:<13} {r['flip']:>7.0%} | {cells} | {kinds}   ({r['histories']} histories)"
        )
    lines.append("  a real fall that stays (10 % noise; caught within 1 · 2 · 3 nights):")
    for r in results["detect"]:
        new = " · ".join(f"{x:5.1%}" for x in r["within"]["new"])
        previous = " · ".join(f"{x:5.1%}" for x in r["within"]["previous"])
        lines.append(f"    {r['shape']:<52} new {new} | previous {previous}   ({r['histories']})")
    lines.append("  collapses on the first night (10 % noise; failed, new · previous):")
    for r in results["collapses"]:
        lines.append(f"    {r['case']:<58} {r['new']:6.1%} · {r['previous']:6.1%}")
    for r in results["ratchet"]:
        lines.append(
            f"  ratchet after every night ({r['flip']:.0%} noise): false alarms on nights 20-30 "
            f"against it: new {r['new']:.1%}, previous {r['previous']:.1%}   ({r['histories']} histories)"
        )
    large = results["large_run"]
    lines.append(
        f"  one night's checks of a {large['questions']:,}-question run (last run, baseline, "
        f"season of {WINDOW + RECENT - 1} nights): {large['seconds']} s"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=300, help="30-night histories per row")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument(
        "--persistent",
        type=int,
        metavar="SEASONS",
        help="only the persistent-verdict tables (issue 32), this many seasons per row",
    )
    args = parser.parse_args()
    if args.persistent:
        print("\n".join(describe_persistent(persistent_run(args.persistent, args.jobs))))
        return
    print("\n".join(describe(run(args.histories, jobs=args.jobs))))
    print("\n".join(describe_persistent(persistent_run(max(20, args.histories // 2), args.jobs))))


# --- persistent verdicts (issue 32): a judge at temperature 0 and answers that mostly stay ---

#: The judge section's metrics of the persistent simulation, in the order of its arrays; and
#: which are 0-2 scores (a point counting once).
P_METRICS = ("faithfulness", "relevance", "full_marks", "quote_verified", "ok_share")
P_POINTS = (True, True, False, False, False)
#: Regimes: (name, re-worded share a night, wordings per question: 0 for a fresh one each time).
REGIMES = (
    ("deterministic (no answer changes)", 0.0, 0),
    ("10 % re-worded a night", 0.10, 0),
    ("30 % re-worded a night", 0.30, 0),
    ("3 fixed wordings per question", 1.0, 3),
    ("every answer re-worded", 1.0, 0),
)


class Season(NamedTuple):
    """One simulated season of the judge section: values[night, question, metric], the answer
    each question gave (an id: equal ids, the same answer and so the same cached verdict), and
    the golden set's types."""

    values: npt.NDArray[np.float64]
    answers: npt.NDArray[np.int64]
    types: list[str]


def _verdicts(
    truth: npt.NDArray[np.int64], error: npt.NDArray[np.float64], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """A verdict per answer: its true score, or with the question's error one point away."""
    wrong = rng.random(truth.shape) < error
    side = np.where(rng.random(truth.shape) < 0.5, -1, 1)
    away = np.where(truth == 0, 1, np.where(truth == 2, 1, side))
    step = np.where(truth == 2, -1, away)
    return np.where(wrong, truth + step, truth)


def _quotes(quote: npt.NDArray[np.bool_], error: float, rng: np.random.Generator) -> Any:
    """Quote checks of new answers: the question's own, flipped with half the error."""
    return rng.random(quote.shape) < np.where(quote, 1 - error / 2, error / 2)


def persistent_season(
    sizes: dict[str, int],
    error: float,
    reworded: float,
    wordings: int,
    nights: int,
    rng: np.random.Generator,
    fall: tuple[int, int] | None = None,
    broken: int | None = None,
) -> Season:
    """A season of ``nights + 1`` nights. Each question's answers have a true faithfulness and
    relevance (drawn once, as ``_question``), its judge an error of its own (uniform between 0
    and twice ``error``: some questions are harder to judge); each night a question is re-worded
    with probability ``reworded`` (with ``wordings``, it gives one of that many fixed answers at
    random instead), and a new answer gets a verdict of its own, which it keeps. ``fall``
    (count, night): from that night, ``count`` factual questions' true faithfulness is a point
    lower (their answers change that night and are judged afresh, the judge's error on top);
    ``broken``: that night every answer is new and judged 0, and the night after, the answers
    of the night before it come back, byte for byte."""
    types = [t for t, n in sizes.items() for _ in range(n)]
    q = len(types)
    faith = rng.choice(3, size=q, p=FAITHFULNESS)
    relevance = rng.choice(3, size=q, p=RELEVANCE)
    own_error = rng.uniform(0.0, 2 * error, size=q)
    quote = rng.random(q) < QUOTE_VERIFIED
    fallen = np.zeros(q, dtype=bool)
    if fall is not None:
        can = [i for i in range(q) if types[i] == "factual" and faith[i] > 0]
        fallen[rng.choice(can, size=min(fall[0], len(can)), replace=False)] = True

    def judged(true_f: Any, n: int) -> Any:  # (3, n, q): n new answers per question
        return np.stack(
            [
                np.stack([_verdicts(true_f, own_error, rng) for _ in range(n)]),
                np.stack([_verdicts(relevance, own_error, rng) for _ in range(n)]),
                np.stack([_quotes(quote, error, rng) for _ in range(n)]),
            ]
        ).astype(float)

    fixed = judged(faith, wordings) if wordings else None
    values = np.zeros((nights + 1, q, len(P_METRICS)))
    values[:, :, 4] = 1.0  # ok_share: every verdict ok
    answers = np.zeros((nights + 1, q), dtype=np.int64)
    current = np.zeros((3, q))
    for t in range(nights + 1):
        falls_now = fall is not None and t == fall[1]
        true_f = faith - fallen if fall is not None and t >= fall[1] else faith
        if fixed is not None:
            if falls_now:  # the fallen questions' wordings are new, and worse
                fixed[:, :, fallen] = judged(true_f, wordings)[:, :, fallen]
            pick = rng.integers(wordings, size=q)
            current = fixed[:, pick, np.arange(q)]
            moved = fallen if fall is not None and t >= fall[1] else np.zeros(q, dtype=bool)
            ids = pick + 1 + np.where(moved, wordings, 0)
        else:
            change = (rng.random(q) < reworded) | (t == 0) | (fallen & falls_now)
            current = np.where(change, judged(true_f, 1)[:, 0], current)
            ids = np.where(change, 1 + t * q + np.arange(q), answers[t - 1])
        if broken is not None and t == broken:
            values[t, :, :4] = 0.0
            answers[t] = -1 - np.arange(q)
            continue
        if broken is not None and t == broken + 1:
            values[t], answers[t] = values[t - 2], answers[t - 2]
            current = values[t][:, [0, 1, 3]].T.copy()
            continue
        values[t, :, 0], values[t, :, 1], values[t, :, 3] = current
        values[t, :, 2] = (current[0] == 2) & (current[1] == 2)
        answers[t] = ids
    return Season(values, answers, types)


def season_runs(answers: npt.NDArray[np.int64], t: int) -> list[int]:
    """The earlier nights ``judge nightly`` puts in tonight's season: consecutive nights of the
    same run content (every answer the same) counted once (the latest), those of tonight's
    content at the end left out, the latest ``WINDOW + RECENT - 1``."""
    runs: list[int] = []
    for i in range(t):
        if runs and np.array_equal(answers[runs[-1]], answers[i]):
            runs[-1] = i
        else:
            runs.append(i)
    while runs and np.array_equal(answers[runs[-1]], answers[t]):
        runs.pop()
    return runs[-(WINDOW + RECENT - 1) :]


class PreviousTest(NamedTuple):
    """The previous season's test of one cell (the release before issue 32), kept here to
    measure it: every night an observation, one binomial share."""

    p_fall: float
    old: float
    new: float


def previous_tests(cell: npt.NDArray[np.float64], points: bool) -> list[PreviousTest]:
    """The previous rule's tests of a cell (rows: the season's runs, then tonight) for the last
    1, 2, 3 nights: each question's median over the reference nights, its nights below it
    counted (a point of a score once), ``P(X >= b)``, ``X ~ Binomial(b + r, m / (m + W))``."""
    out = []
    for m in range(1, RECENT + 1):
        split = cell.shape[0] - m
        if split < MIN_REFERENCE:
            break
        reference, recent = cell[max(0, split - WINDOW) : split], cell[split:]
        medians = np.median(reference, axis=0)
        away_ref, away = reference - medians, recent - medians
        size_ref = np.maximum(1.0, np.rint(np.abs(away_ref))) if points else np.ones_like(away_ref)
        size = np.maximum(1.0, np.rint(np.abs(away))) if points else np.ones_like(away)
        r = int(np.where(away_ref < -1e-9, size_ref, 0.0).sum())
        b = int(np.where(away < -1e-9, size, 0.0).sum())
        p = _binomial_tail(b, b + r, m / (m + reference.shape[0]))
        out.append(PreviousTest(p, float(medians.mean()), float(recent.mean())))
    return out


def season_calls(season: Season, t: int, rule: str) -> set[tuple[str, str]]:
    """The (type, metric) cells the season calls regressed on night ``t``: ``rule`` "previous"
    (every night an observation, Holm over every test, the recent mean alone) or "new"
    (``judge.results.season`` as it is: observations where an answer is new, Tarone's level,
    tonight's own mean beyond the margin too, never on the pinned baseline's values)."""
    runs = season_runs(season.answers, t)
    if len(runs) < MIN_REFERENCE:
        return set()
    rows = [*runs, t]
    answers = season.answers[rows]
    new = np.ones(answers.shape, dtype=bool)
    if rule == "new":  # an answer given before in the season is no new observation
        for i in range(answers.shape[1]):
            _, first = np.unique(answers[:, i], return_index=True)
            new[:, i] = False
            new[first, i] = True
    cells: list[tuple[str, str, Any, bool]] = []
    taken = season.values[rows]
    for type_name in dict.fromkeys(season.types):
        cols = [i for i, x in enumerate(season.types) if x == type_name]
        for m, metric in enumerate(P_METRICS):
            if metric == "ok_share":  # every verdict ok: no events, p = 1 at every length
                tests = min(RECENT, len(runs) - MIN_REFERENCE + 1)
                cells += [(type_name, metric, None, True)] * tests
                continue
            cell = taken[:, cols, m]
            pinned = bool(np.array_equal(cell[-1], season.values[0, cols, m]))
            found = (
                cell_tests(cell, new[:, cols], P_POINTS[m], RULE.margin(metric))
                if rule == "new"
                else previous_tests(cell, P_POINTS[m])
            )
            cells += [(type_name, metric, e, pinned) for e in found]
    called = set()
    if rule == "previous":
        rejected = holm([1.0 if e is None else e.p_fall for _, _, e, _ in cells], RULE.season_level)
        for (type_name, metric, e, _), r in zip(cells, rejected, strict=True):
            if r and e is not None and e.new - e.old < -RULE.margin(metric) - 1e-9:
                called.add((type_name, metric))
        return called
    # The new season decides on the scores alone (``judge.results.season.DECIDED``).
    cells = [c for c in cells if c[1] in DECIDED]
    level = tarone([1.0 if e is None else e.least_fall for _, _, e, _ in cells], RULE.season_level)
    for type_name, metric, e, pinned in cells:
        if e is None:
            continue
        margin = RULE.margin(metric) + 1e-9
        beyond = e.new - e.old < -margin and e.tonight - e.old < -margin
        if e.p_fall <= level and beyond and not pinned:
            called.add((type_name, metric))
    return called


RULES = ("previous", "new")


def persistent_quiet(
    sizes: dict[str, int],
    error: float,
    regime: tuple[str, float, int],
    seasons: int,
    seed: int,
    nights: int = 30,
) -> dict[str, Any]:
    """False alarms of the season over ``seasons`` quiet 30-night seasons: per night and per
    season, previous rule and new."""
    _, reworded, wordings = regime
    rng = np.random.default_rng(seed)
    per_night = dict.fromkeys(RULES, 0)
    per_season = dict.fromkeys(RULES, 0)
    for _ in range(seasons):
        season = persistent_season(sizes, error, reworded, wordings, nights, rng)
        for rule in RULES:
            alarms = [bool(season_calls(season, t, rule)) for t in range(1, nights + 1)]
            per_night[rule] += sum(alarms)
            per_season[rule] += any(alarms)
    return {
        "regime": regime[0],
        "error": error,
        "seasons": seasons,
        "per_night": {r: per_night[r] / (seasons * nights) for r in RULES},
        "per_season": {r: per_season[r] / seasons for r in RULES},
    }


def persistent_recovery(
    error: float,
    regime: tuple[str, float, int],
    seasons: int,
    seed: int,
    nights: int = 30,
    broken: int = 15,
) -> dict[str, Any]:
    """A broken night (every answer judged 0) after ``broken`` nights, then the answers of the
    night before it again: the share of seasons with a false alarm on a night after it."""
    _, reworded, wordings = regime
    rng = np.random.default_rng(seed)
    alarms = dict.fromkeys(RULES, 0)
    caught = dict.fromkeys(RULES, 0)
    for _ in range(seasons):
        season = persistent_season(TYPES, error, reworded, wordings, nights, rng, broken=broken)
        for rule in RULES:
            caught[rule] += bool(season_calls(season, broken, rule))
            alarms[rule] += any(
                season_calls(season, t, rule) for t in range(broken + 1, nights + 1)
            )
    return {
        "regime": regime[0],
        "seasons": seasons,
        "after": {r: alarms[r] / seasons for r in RULES},
        "broken_called": {r: caught[r] / seasons for r in RULES},
    }


#: Lasting falls: faithfulness a point lower on this many of the 12 factual questions.
FALLS = (1, 3, 4)
WITHIN = (1, 3, 7)


def persistent_detect(
    count: int,
    error: float,
    regime: tuple[str, float, int],
    seasons: int,
    seed: int,
    warm: int = 20,
) -> dict[str, Any]:
    """A lasting fall of ``count`` factual questions (their true faithfulness a point lower,
    the judge's error on top) after ``warm`` quiet nights: the share of seasons whose season
    calls a factual regression within 1, 3 and 7 nights."""
    _, reworded, wordings = regime
    rng = np.random.default_rng(seed)
    last = max(WITHIN)
    caught = {r: [0] * len(WITHIN) for r in RULES}
    for _ in range(seasons):
        season = persistent_season(
            TYPES, error, reworded, wordings, warm + last, rng, fall=(count, warm + 1)
        )
        for rule in RULES:
            first = next(
                (
                    k
                    for k in range(last)
                    if any(t == "factual" for t, _ in season_calls(season, warm + 1 + k, rule))
                ),
                None,
            )
            for i, within in enumerate(WITHIN):
                caught[rule][i] += first is not None and first < within
    return {
        "regime": regime[0],
        "count": count,
        "seasons": seasons,
        "within": {r: [c / seasons for c in caught[r]] for r in RULES},
    }


def persistent_run(seasons: int = 200, jobs: int = 2) -> dict[str, Any]:
    """The persistent tables of docs/gate.md (issue 32), on the sample's shape at 10 % verdict
    error: false alarms per regime, recovery after a broken night, lasting falls of 1, 3 and 4
    factual questions; the rows run in ``jobs`` processes."""
    falls = [r for r in REGIMES if r[1] in (0.10, 1.0) and not r[2]]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        quiet_rows = [
            pool.submit(persistent_quiet, TYPES, 0.10, regime, seasons, 100 + i)
            for i, regime in enumerate(REGIMES)
        ]
        recovery_rows = [
            pool.submit(persistent_recovery, 0.10, regime, seasons, 200 + i)
            for i, regime in enumerate(falls)
        ]
        detect_rows = [
            pool.submit(persistent_detect, count, 0.10, regime, seasons, 300 + i)
            for i, (count, regime) in enumerate((c, r) for r in falls for c in FALLS)
        ]
        out: dict[str, Any] = {}
        for name, rows in (("quiet", quiet_rows), ("recovery", recovery_rows)):
            out[name] = [row.result() for row in rows]
            print(json.dumps({name: out[name]}), file=sys.stderr, flush=True)
        out["detect"] = []
        for row in detect_rows:
            out["detect"].append(row.result())
            print(json.dumps({"detect": out["detect"][-1]}), file=sys.stderr, flush=True)
        return out


def describe_persistent(results: dict[str, Any]) -> list[str]:
    """The persistent tables as text (previous rule → new rule)."""
    lines = ["  the season, persistent verdicts (sample's shape, 10 % verdict error):"]
    lines.append("  false alarms, nothing changed: per night · per 30-night season, previous → new")
    for r in results["quiet"]:
        cells = " → ".join(f"{r['per_night'][k]:6.2%} · {r['per_season'][k]:5.1%}" for k in RULES)
        lines.append(f"    {r['regime']:<36} {cells}   ({r['seasons']} seasons)")
    lines.append("  after a broken night and the good answers back: seasons with an alarm after it")
    for r in results["recovery"]:
        lines.append(
            f"    {r['regime']:<36} {r['after']['previous']:5.1%} → {r['after']['new']:5.1%}"
            f"   (broken night called: {r['broken_called']['new']:.0%}; {r['seasons']} seasons)"
        )
    lines.append(
        "  a lasting fall (true faithfulness a point lower): caught within 1 · 3 · 7 nights"
    )
    for r in results["detect"]:
        cells = " → ".join(" · ".join(f"{x:5.1%}" for x in r["within"][k]) for k in RULES)
        lines.append(
            f"    {r['count']} of 12 factual, {r['regime']:<28} {cells}   ({r['seasons']} seasons)"
        )
    return lines


if __name__ == "__main__":
    main()
