"""Synthetic sweeps where the truth is known: how often the guards adopt a setting that is no
better than the default (the null), and how often they adopt the one that is (detection).

A golden set of ``n_questions`` questions, each with 1 to 3 relevant chunks among ``CANDIDATES``
candidates. Every setting of the grid ranks the candidates of every question: a candidate's
score is a noise term, plus, for a relevant chunk, the setting's *quality* on that question:

    quality[s, j] = signal + effect[s] + difficulty[j] + setting_sd * e[s, j]

``difficulty[j]`` is shared by every setting (a hard question is hard for all of them, so the
settings' per-question values are correlated, as in a real grid), ``e[s, j]`` is the setting's
own luck on the question. The candidates' noise is partly shared too (``shared_noise``: the same
distractors look relevant to every setting), so settings often rank a question identically and
tie on it, as settings of one retriever do. How alike the settings are (``World``) decides the
paired noise, and so what the guards can detect. The top ``RETRIEVED`` chunks are the ranking,
scored by ``judge.retrieval.score_rankings``: nDCG@5 is the primary metric, recall@5 and MRR
the secondary ones.

The default is the first setting. Under the null every ``effect`` is 0; under the alternative
the last setting's is ``effect`` (``expected_gain`` measures what that is in nDCG@5).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from judge.retrieval import score_rankings
from judge.sweep.select import DEFAULT_RULE, Selection, SweepRule, select

CANDIDATES = 20
#: Chunks a setting retrieves per question (what the run file would list).
RETRIEVED = 10
#: P(1, 2, 3 relevant chunks).
RELEVANT_COUNTS = (1, 2, 3)
RELEVANT_P = (0.5, 0.3, 0.2)
PRIMARY = "ndcg@5"
SECONDARY = ("recall@5", "mrr")
KS = (5,)
#: Quality added to the better setting under the alternative: about +0.10 mean nDCG@5
#: (``expected_gain`` measures it; the bench prints the measured value).
ALTERNATIVE_EFFECT = 0.52
DEFAULT = "s0"


class World(NamedTuple):
    """How the settings of a grid resemble each other (the spreads of the model above)."""

    signal: float = 1.8
    """A relevant chunk's score lift on an average question, in noise standard deviations:
    the mean nDCG@5 is about 0.66 (the shipped sample measures 0.68)."""
    difficulty_sd: float = 1.0
    """Spread of the per-question difficulty that every setting shares."""
    setting_sd: float = 0.5
    """Spread of a setting's own luck on a question."""
    shared_noise: float = 0.6
    """Share of the candidates' noise variance common to every setting."""


#: Settings of one retriever with different knobs: per-question nDCG@5 of two null settings
#: correlates about 0.6, and 42 % of questions tie.
CORRELATED = World()
#: Near-identical settings (a knob that rarely matters): correlation 0.91, 65 % ties.
SIMILAR = World(setting_sd=0.1, shared_noise=0.95)
#: Unrelated retrievers that share only the questions' difficulty: correlation 0.27, 32 % ties.
INDEPENDENT = World(setting_sd=1.0, shared_noise=0.0)
WORLDS = {"correlated": CORRELATED, "similar": SIMILAR, "independent": INDEPENDENT}


class SweepData(NamedTuple):
    """One synthetic tuning set, as ``select`` takes it."""

    question_ids: list[str]
    values: dict[str, dict[str, list[float]]]
    """setting → metric → one value per question."""
    better: str | None
    """The setting with the effect, None under the null."""


def setting_names(n_settings: int) -> list[str]:
    return [f"s{i}" for i in range(n_settings)]


def sweep_data(
    n_questions: int,
    n_settings: int,
    effect: float,
    rng: np.random.Generator,
    world: World = CORRELATED,
) -> SweepData:
    """A golden set and every setting's per-question retrieval values; the last setting's
    quality is raised by ``effect`` (0: the null)."""
    names = setting_names(n_settings)
    relevant_counts = rng.choice(RELEVANT_COUNTS, size=n_questions, p=RELEVANT_P)
    is_relevant = np.arange(CANDIDATES)[None, :] < relevant_counts[:, None]
    difficulty = world.difficulty_sd * rng.standard_normal(n_questions)
    effects = np.zeros(n_settings)
    effects[-1] = effect
    quality = (
        world.signal
        + effects[:, None]
        + difficulty[None, :]
        + world.setting_sd * rng.standard_normal((n_settings, n_questions))
    )
    shared = rng.standard_normal((1, n_questions, CANDIDATES))
    own = rng.standard_normal((n_settings, n_questions, CANDIDATES))
    noise = math.sqrt(world.shared_noise) * shared + math.sqrt(1 - world.shared_noise) * own
    scores = noise + quality[:, :, None] * is_relevant[None, :, :]
    top = np.argsort(-scores, axis=2, kind="stable")[:, :, :RETRIEVED]
    chunk_ids = [f"c{i}" for i in range(CANDIDATES)]
    relevant = [frozenset(chunk_ids[:count]) for count in relevant_counts.tolist()]
    values: dict[str, dict[str, list[float]]] = {}
    for index, name in enumerate(names):
        rankings = [[chunk_ids[c] for c in row] for row in top[index].tolist()]
        columns = score_rankings(rankings, relevant, KS)
        values[name] = {metric: columns[metric] for metric in (PRIMARY, *SECONDARY)}
    question_ids = [f"q{j:03d}" for j in range(n_questions)]
    return SweepData(question_ids, values, names[-1] if effect else None)


def select_on(data: SweepData, rule: SweepRule = DEFAULT_RULE) -> Selection:
    return select(data.question_ids, data.values, DEFAULT, PRIMARY, SECONDARY, rule)


class Rates(NamedTuple):
    """What the guards did over many synthetic sweeps of one shape."""

    replications: int
    adopted: int
    """Sweeps that adopted any setting."""
    adopted_better: int
    """Sweeps that adopted the better setting (0 under the null)."""
    decided_by: dict[str, int]
    """Guard name (or "adopted") → sweeps it decided."""

    @property
    def adoption_rate(self) -> float:
        return self.adopted / self.replications

    @property
    def detection_rate(self) -> float:
        return self.adopted_better / self.replications


def replicate(
    n_questions: int,
    n_settings: int,
    effect: float,
    replications: int,
    seed: int,
    rule: SweepRule = DEFAULT_RULE,
    world: World = CORRELATED,
) -> Rates:
    """Run the selection on ``replications`` fresh synthetic sweeps (seeded: the same counts
    every time)."""
    rng = np.random.default_rng(seed)
    adopted = adopted_better = 0
    decided: dict[str, int] = {}
    for _ in range(replications):
        data = sweep_data(n_questions, n_settings, effect, rng, world)
        selection = select_on(data, rule)
        key = selection.decided_by or "adopted"
        decided[key] = decided.get(key, 0) + 1
        if selection.adopt:
            adopted += 1
            adopted_better += selection.winner == data.better
    return Rates(replications, adopted, adopted_better, decided)


def expected_gain(
    effect: float, world: World = CORRELATED, n_questions: int = 20_000, seed: int = 0
) -> dict[str, float]:
    """The better setting's true mean gain over the default, per metric, on one large set
    (the standard error is about 0.003 on nDCG@5 at 20,000 questions)."""
    data = sweep_data(n_questions, 2, effect, np.random.default_rng(seed), world)
    return {
        metric: float(np.mean(data.values["s1"][metric]) - np.mean(data.values["s0"][metric]))
        for metric in (PRIMARY, *SECONDARY)
    }


def wilson(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default): sensible at 0 of n too,
    where the normal interval collapses to a point."""
    if trials <= 0:
        raise ValueError("wilson needs at least one trial")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
