"""Which setting of a sweep to recommend, and whether the evidence is strong enough to adopt it.

Picking the setting with the best mean on the tuning questions always finds *a* winner, even
when every setting is equally good: the maximum of a few noisy means beats the default by
chance. So the winner is only adopted when guards hold, and the main guard measures the
selection procedure itself rather than the winner's in-sample margin:

- **leave-one-question-out**: for each question j, the setting with the best mean primary over
  the other N-1 questions is picked (the same tie rule as the winner), and
  ``d_j = primary[pick_j][j] - primary[default][j]`` is what that pick gains over the default on
  the question it did not see. ``mean(d)`` estimates the gain of "run the sweep, take the best";
  under the null it is about 0 or below, because the in-sample luck does not carry over.
- guards, in order: ``differs`` (the winner is not the default), ``gain`` (``mean(d)`` above a
  minimum), ``significant`` (``mean(d)`` above ``se_multiple`` paired standard errors),
  ``stable`` (most folds pick the winner), ``secondary`` (no secondary metric falls).

Ties are common, since retrieval metrics are discrete: a tie goes to the default, then to the
earlier setting in grid order, so that an equal setting is never recommended over what runs now.

Nothing here knows about files or configs: ``judge.sweep`` builds the value arrays and turns the
``ValueError`` of a refusal into a ``ConfigError``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

#: Fewer tuning questions than this and the leave-one-out standard error is itself noise.
MIN_QUESTIONS = 8
#: Means (and per-question values) closer than this are tied: sums of the same discrete values
#: in another order differ in the last bits.
TIE = 1e-12
#: Slack when comparing a secondary metric's mean change with its tolerance (sums of floats).
SECONDARY_EPS = 1e-9

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


class SweepRule(NamedTuple):
    """When a sweep's winner is adopted."""

    min_gain: float = 0.02
    """The leave-one-question-out gain over the default must be above this (primary's scale)."""
    se_multiple: float = 3.0
    """... and above this many paired standard errors."""
    min_stability: float = 0.5
    """The share of leave-one-out folds that pick the winner must be above this."""
    secondary_tolerance: float = 0.0
    """How far a secondary metric's mean may fall (winner vs default); 0: any fall blocks."""


#: The rule when the configuration says nothing.
DEFAULT_RULE = SweepRule()


class Guard(NamedTuple):
    """One condition for adopting the winner, with a one-line reason for the report."""

    name: str
    passed: bool
    detail: str


class QuestionDelta(NamedTuple):
    """The winner's primary value minus the default's on one question (in-sample: the
    question-level view of the winner against the default, not a paired change with an
    interval; ``change`` keeps its name in ``sweep.json``)."""

    question_id: str
    change: float


class Selection(NamedTuple):
    """What the sweep recommends and every number the guards looked at."""

    settings: tuple[str, ...]
    """Grid order."""
    default: str
    primary: str
    rule: SweepRule
    winner: str
    """Best mean primary over all questions; ties to the default, then to grid order."""
    adopt: bool
    """Every guard passed: recommend the winner."""
    guards: tuple[Guard, ...]
    """``differs``, ``gain``, ``significant``, ``stable``, ``secondary``, in this order."""
    decided_by: str | None
    """The first failed guard, or None when adopted."""
    n: int
    """Tuning questions."""
    held_out_gain: float
    """mean(d): the leave-one-question-out gain of the selection over the default."""
    held_out_se: float
    """SD(d, ddof=1) / sqrt(n): the standard error of the leave-one-question-out gain (of the
    selection procedure, not of one setting against another; no bootstrap). ``paired_se`` in
    ``sweep.json``."""
    stability: float
    """stability_count / n."""
    stability_count: int
    """Folds whose pick is the winner."""
    fold_picks: dict[str, int]
    """Setting → how many folds picked it, every setting in grid order (0 included)."""
    fold_winners: tuple[str, ...]
    """The pick of the fold that left out each question, question order."""
    held_out_changes: tuple[float, ...]
    """d_j per question, question order."""
    means: dict[str, float]
    """Setting → mean primary over all questions, grid order."""
    secondary_changes: dict[str, float]
    """Secondary metric → mean over questions of (winner - default)."""
    better: int
    """Questions where the winner's primary is above the default's."""
    worse: int
    equal: int
    losses: tuple[QuestionDelta, ...]
    """The questions that got worse (winner vs default, primary), most lost first."""

    @property
    def gain_over_se(self) -> float:
        """mean(d) / SE; infinite when SE is 0 and the gain is not (0 when both are)."""
        if self.held_out_se > 0:
            return self.held_out_gain / self.held_out_se
        if self.held_out_gain == 0:
            return 0.0
        return math.copysign(math.inf, self.held_out_gain)


def _pick(means: FloatArray, default_index: int) -> IntArray:
    """The best setting per column of ``means`` (settings x folds): within TIE of the best, the
    default if it is there, otherwise the first in grid order."""
    near = means >= means.max(axis=0) - TIE
    first = np.argmax(near, axis=0)
    return np.where(near[default_index], default_index, first).astype(np.intp)


def _checked(
    question_ids: Sequence[str],
    values: Mapping[str, Mapping[str, Sequence[float]]],
    default: str,
    primary: str,
    secondary: Sequence[str],
) -> dict[str, FloatArray]:
    """metric → array (settings x questions); ValueError with one line for every refusal."""
    settings = list(values)
    if len(settings) < 2:
        raise ValueError(
            f"a sweep needs at least 2 settings to choose from, got {len(settings)}: "
            "add values to the grid"
        )
    if default not in values:
        raise ValueError(
            f"the default setting {default!r} is not among the settings "
            f"({', '.join(map(repr, settings))}): name one of them as the default"
        )
    n = len(question_ids)
    if len(set(question_ids)) != n:
        repeated = [q for q, count in Counter(question_ids).items() if count > 1]
        raise ValueError(
            f"question ids must be unique, repeated: {', '.join(repeated[:5])}; "
            "give each tuning question its own id"
        )
    arrays: dict[str, FloatArray] = {}
    for metric in [primary, *[m for m in secondary if m != primary]]:
        rows = []
        for setting in settings:
            column = values[setting].get(metric)
            if column is None:
                kind = "primary" if metric == primary else "secondary"
                raise ValueError(
                    f"setting {setting!r} has no values for the {kind} metric {metric!r}: "
                    f"it has {', '.join(sorted(values[setting])) or 'none'}"
                )
            if len(column) != n:
                raise ValueError(
                    f"setting {setting!r}, metric {metric!r}: {len(column)} values for "
                    f"{n} tuning questions; every setting must score the same questions"
                )
            rows.append(np.asarray(column, dtype=np.float64))
        array = np.vstack(rows)
        if not np.isfinite(array).all():
            row, col = (int(i) for i in np.argwhere(~np.isfinite(array))[0])
            raise ValueError(
                f"setting {settings[row]!r}, metric {metric!r}, question "
                f"{question_ids[col]!r}: value is {array[row, col]} (NaN or infinite); "
                "remove questions without retrieval values before selecting"
            )
        arrays[metric] = array
    if n < MIN_QUESTIONS:
        raise ValueError(
            f"the guards cannot work on fewer than {MIN_QUESTIONS} tuning questions: "
            f"got {n}; label more questions with relevant chunks"
        )
    return arrays


class _LeaveOneOut(NamedTuple):
    """The selection procedure measured on questions it did not see: one fold per question."""

    picks: IntArray  # each fold's pick (a setting's index), question order
    d: FloatArray  # d_j: the fold's pick minus the default on the question the fold left out
    gain: float  # mean(d)
    se: float  # SD(d, ddof=1) / sqrt(n)
    counts: IntArray  # per setting, grid order: how many folds picked it


def _leave_one_out(scores: FloatArray, totals: FloatArray, d_index: int) -> _LeaveOneOut:
    """Every leave-one-question-out fold of ``scores`` (settings x questions; ``totals`` their
    sums per setting): the fold's pick and its gain over the default on the left-out question."""
    settings, n = scores.shape
    # Leave-one-out without N re-computations: each fold's mean is (total - left out) / (n - 1).
    fold_means = (totals[:, None] - scores) / (n - 1)
    picks = _pick(fold_means, d_index)
    columns = np.arange(n)
    d = scores[picks, columns] - scores[d_index]
    gain = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(n))
    return _LeaveOneOut(picks, d, gain, se, np.bincount(picks, minlength=settings))


class _Changes(NamedTuple):
    """The winner against the default: on the primary metric question by question, on each
    secondary metric in the mean."""

    better: int  # questions where the winner's primary is above the default's
    losses: tuple[QuestionDelta, ...]  # the questions where it is below, most lost first
    secondary: dict[str, float]  # secondary metric → mean over questions of (winner - default)


def _changes(
    question_ids: Sequence[str],
    arrays: Mapping[str, FloatArray],
    primary: str,
    secondary: Sequence[str],
    w_index: int,
    d_index: int,
) -> _Changes:
    """The winner's rows of ``arrays`` against the default's (ties within TIE are equal)."""
    scores = arrays[primary]
    change = scores[w_index] - scores[d_index]
    better = int((change > TIE).sum())
    worse_mask = change < -TIE
    order = np.argsort(change, kind="stable")
    losses = tuple(
        QuestionDelta(question_ids[int(j)], float(change[j])) for j in order if worse_mask[j]
    )
    secondary_changes = {
        metric: float((arrays[metric][w_index] - arrays[metric][d_index]).mean())
        for metric in secondary
    }
    return _Changes(better, losses, secondary_changes)


def select(
    question_ids: Sequence[str],
    values: Mapping[str, Mapping[str, Sequence[float]]],
    default: str,
    primary: str,
    secondary: Sequence[str] = (),
    rule: SweepRule = DEFAULT_RULE,
) -> Selection:
    """Choose among the settings (``values`` keys, in grid order) and decide whether to adopt.

    ``values[setting][metric]`` holds one value per question, aligned with ``question_ids``;
    every metric is better when higher. Raises ``ValueError`` (one line) when the input cannot
    be judged: fewer than 2 settings or MIN_QUESTIONS questions, an unknown default, a missing
    metric, lengths that differ, a NaN.
    """
    arrays = _checked(question_ids, values, default, primary, secondary)
    settings = tuple(values)
    d_index = settings.index(default)
    scores = arrays[primary]
    n = scores.shape[1]
    totals = scores.sum(axis=1)
    means = totals / n
    w_index = int(_pick(means[:, None], d_index)[0])
    winner = settings[w_index]
    folds = _leave_one_out(scores, totals, d_index)
    stability_count = int(folds.counts[w_index])
    changes = _changes(question_ids, arrays, primary, secondary, w_index, d_index)
    guards = (
        _differs(winner, default, primary, means, settings, d_index, w_index),
        _gain(folds.gain, rule),
        _significant(folds.gain, folds.se, rule),
        _stable(winner, stability_count, n, rule),
        _secondary(changes.secondary, rule),
    )
    failed = next((g.name for g in guards if not g.passed), None)
    return Selection(
        settings=settings,
        default=default,
        primary=primary,
        rule=rule,
        winner=winner,
        adopt=failed is None,
        guards=guards,
        decided_by=failed,
        n=n,
        held_out_gain=folds.gain,
        held_out_se=folds.se,
        stability=stability_count / n,
        stability_count=stability_count,
        fold_picks={s: int(c) for s, c in zip(settings, folds.counts, strict=True)},
        fold_winners=tuple(settings[int(p)] for p in folds.picks),
        held_out_changes=tuple(float(x) for x in folds.d),
        means={s: float(m) for s, m in zip(settings, means, strict=True)},
        secondary_changes=changes.secondary,
        better=changes.better,
        worse=len(changes.losses),
        equal=n - changes.better - len(changes.losses),
        losses=changes.losses,
    )


def _differs(
    winner: str,
    default: str,
    primary: str,
    means: FloatArray,
    settings: tuple[str, ...],
    d_index: int,
    w_index: int,
) -> Guard:
    if w_index != d_index:
        return Guard(
            "differs",
            True,
            f"{winner!r} has the best mean {primary} ({means[w_index]:.3f}, the default "
            f"{default!r} {means[d_index]:.3f})",
        )
    tied = [s for i, s in enumerate(settings) if i != d_index and means[i] >= means[d_index] - TIE]
    also = f", tied with {', '.join(map(repr, tied))}" if tied else ""
    return Guard(
        "differs",
        False,
        f"the default {default!r} already has the best mean {primary} "
        f"({means[d_index]:.3f}{also}): nothing to change",
    )


def _gain(gain: float, rule: SweepRule) -> Guard:
    passed = gain > rule.min_gain
    verdict = "above" if passed else "not above"
    return Guard(
        "gain",
        passed,
        f"held-out gain {gain:+.4f} over the default (leave-one-question-out) is {verdict} "
        f"the minimum {rule.min_gain:g}",
    )


def _significant(gain: float, se: float, rule: SweepRule) -> Guard:
    passed = gain > rule.se_multiple * se
    if se > 0:
        size = f"{gain / se:.2f} standard errors (SE {se:.4f})"
    else:
        size = "with a standard error of 0 (every fold gains the same)"
    verdict = "more than" if passed else "not more than"
    return Guard(
        "significant",
        passed,
        f"held-out gain {gain:+.4f} is {size}: {verdict} the {rule.se_multiple:g} required",
    )


def _stable(winner: str, count: int, n: int, rule: SweepRule) -> Guard:
    passed = count / n > rule.min_stability
    verdict = "more than" if passed else "not more than"
    return Guard(
        "stable",
        passed,
        f"{count} of {n} leave-one-out folds ({count / n:.0%}) pick {winner!r}: {verdict} "
        f"the {rule.min_stability:.0%} required",
    )


def _secondary(changes: Mapping[str, float], rule: SweepRule) -> Guard:
    if not changes:
        return Guard("secondary", True, "no secondary metrics to check")
    listed = ", ".join(f"{metric} {change:+.4f}" for metric, change in changes.items())
    fallen = [m for m, c in changes.items() if c < -rule.secondary_tolerance - SECONDARY_EPS]
    allowed = (
        "any fall blocks"
        if rule.secondary_tolerance == 0
        else f"a fall of {rule.secondary_tolerance:g} allowed"
    )
    if fallen:
        return Guard(
            "secondary",
            False,
            f"{', '.join(fallen)} {'falls' if len(fallen) == 1 else 'fall'} with the winner "
            f"({listed}; {allowed})",
        )
    return Guard("secondary", True, f"no secondary metric falls with the winner ({listed})")
