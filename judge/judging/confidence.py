"""The judge's own confidence: its probability of each score, read at the score's token.

G-Eval's idea, for every backend that can report token probabilities: where the reply writes
``"faithfulness": 2``, the model's probabilities of the tokens "0", "1" and "2" at that
position, renormalised over the three, are the score distribution. The chosen score's share
is the judge's confidence in it; a distribution close to flat marks a verdict worth a look.

Backends give the steps of their reply (``Step``: the text before the token, the token, and
the log-probabilities of the candidate tokens there, as far as they report them);
``score_probabilities`` finds the score tokens in that stream. Nothing here calls a model.

Only scores the judge writes have a token: in the ``sentences`` prompt mode the reply has no
faithfulness (it follows from the per-sentence verdicts, ``judge.judging.verdict``), so only
relevance gets a distribution there; nothing is ever filled in for an axis without one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from judge.axes import AXES, SCALE

#: Below this probability of a score it gave, a verdict is low-confidence: the judge put less
#: than 60 % on its own choice among 0, 1 and 2 (review triage, audit sampling).
LOW_CONFIDENCE = 0.6
#: The score tokens, as the reply writes them.
SCORES = tuple(str(score) for score in SCALE)
#: The JSON key just before a score, as the schema makes every reply write it.
_KEY = {axis: re.compile(rf'"{axis}"\s*:\s*$') for axis in AXES}


#: axis → (P(0), P(1), P(2)).
ScoreProbabilities = dict[str, tuple[float, float, float]]


class Step(NamedTuple):
    """One generated token: what came before it, the token, and candidates' log-probabilities
    at its position (the token itself among them, where the backend reports it)."""

    before: str
    token: str
    logprobs: Mapping[str, float]


def distribution(logprobs: Mapping[str, float]) -> tuple[float, float, float] | None:
    """P(0), P(1), P(2) from the candidates at a score position, renormalised over the three;
    a candidate with spaces around the digit counts for the digit. None when no digit is among
    the candidates (the backend reported too few)."""
    mass = dict.fromkeys(SCORES, 0.0)
    found = False
    for token, logprob in logprobs.items():
        digit = token.strip()
        if digit in mass and math.isfinite(logprob):
            mass[digit] += math.exp(logprob)
            found = True
    total = sum(mass.values())
    if not found or total <= 0:
        return None
    p0, p1, p2 = (mass[s] / total for s in SCORES)
    return p0, p1, p2


def score_probabilities(steps: Iterable[Step]) -> ScoreProbabilities | None:
    """Per axis, the score distribution at the token that wrote the score; None when no axis
    could be read (no probabilities reported, or a reply that is not the schema's JSON)."""
    found: ScoreProbabilities = {}
    for step in steps:
        if step.token.strip() not in SCORES:
            continue
        for axis in AXES:
            leading = step.token[: len(step.token) - len(step.token.lstrip())]
            if axis not in found and _KEY[axis].search(step.before + leading):
                probabilities = distribution(step.logprobs)
                if probabilities is not None:
                    found[axis] = probabilities
    return found or None


def from_token_list(entries: object) -> ScoreProbabilities | None:
    """Score distributions from a list of ``{token, logprob, top_logprobs: [{token,
    logprob}]}``: Ollama's ``logprobs`` (0.12.11+) and an OpenAI-compatible server's
    ``choices[0].logprobs.content`` have this shape. None when absent or not in that shape."""
    if not isinstance(entries, list):
        return None
    steps, before = [], ""
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        token = entry["token"]
        candidates = {
            str(c["token"]): float(c["logprob"])
            for c in entry.get("top_logprobs") or []
            if isinstance(c, dict) and isinstance(c.get("logprob"), int | float) and "token" in c
        }
        if isinstance(entry.get("logprob"), int | float):
            candidates.setdefault(token, float(entry["logprob"]))
        steps.append(Step(before, token, candidates))
        before += token
    return score_probabilities(steps)
