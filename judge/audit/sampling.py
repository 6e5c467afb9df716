"""Choosing items for people to label: stratified by type, none labelled already, optionally
weighted towards the items the judge may be unsure about, and towards the answers a panel of
judges disputed (``judge panel``: members 2 points apart or split)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Collection

from judge.audit.agreement import lexical_scores
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.confidence import LOW_CONFIDENCE
from judge.judging.types import Verdict
from judge.results.item_record import ItemRecord

#: The share of each type's quota taken first from the answers a panel disputed.
DISPUTED_SHARE = 0.5


def uncertainty(item: ItemRecord, verdict: Verdict) -> list[str]:
    """Why the judge may be unsure about this item (empty when nothing suggests it)."""
    reasons: list[str] = []
    if verdict.status != "ok":
        reasons.append(verdict.status)
    elif verdict.match is not None and verdict.match.kind in ("absent", "too_short", "partial"):
        reasons.append(f"quote {verdict.match.kind}")
    if verdict.status == "ok" and lexical_scores(item) != (verdict.faithfulness, verdict.relevance):
        reasons.append("lexical baseline disagrees")
    if verdict.confidence is not None and verdict.confidence < LOW_CONFIDENCE:
        reasons.append(f"judge confidence {verdict.confidence:.0%}")
    return reasons


def sample_items(
    items: dict[str, ItemRecord],
    verdicts: dict[str, Verdict],
    labels: list[HumanLabel],
    n: int,
    oversample_uncertain: float = 0.0,
    seed: int = 0,
    disputed: Collection[tuple[str, str]] = (),
) -> list[ItemRecord]:
    """``n`` items stratified by type, none already labelled for the same answer text.

    Each type gets a share of ``n`` proportional to its size (at least one where it has
    unlabelled items). ``oversample_uncertain`` (0-1) is the share of each type's quota filled
    first from items the judge may be unsure about (non-ok, quote not verified, lexical
    baseline disagreeing), the rest at random. ``disputed``: (question id, answer hash) of
    the answers a panel disputed; up to ``DISPUTED_SHARE`` of each type's quota is taken from
    those first (the exact answer only: a new answer of the question is not disputed).
    """
    labelled = {(label.question_id, label.answer_sha256) for label in labels}
    pool: dict[str, list[ItemRecord]] = defaultdict(list)
    for item in items.values():
        if (item.question_id, text_sha256(item.answer)) not in labelled:
            pool[item.type].append(item)
    total = sum(len(v) for v in pool.values())
    if total == 0:
        return []
    n = min(n, total)
    rng = random.Random(seed)
    quotas = {t: max(1, round(n * len(v) / total)) for t, v in pool.items()}
    while sum(quotas.values()) > n:  # rounding up may overshoot: trim the largest quota
        largest = max(quotas, key=lambda t: quotas[t])
        quotas[largest] -= 1
    while sum(quotas.values()) < n:  # or undershoot: give to the type with most left over
        spare = max(pool, key=lambda t: len(pool[t]) - quotas[t])
        quotas[spare] += 1
    chosen: list[ItemRecord] = []
    for type_name, candidates in sorted(pool.items()):
        candidates = sorted(candidates, key=lambda i: i.question_id)
        rng.shuffle(candidates)
        quota = min(quotas[type_name], len(candidates))
        panel = _disputed(candidates, disputed, quota)
        wanted = round(quota * oversample_uncertain)
        unsure = [
            i
            for i in candidates
            if wanted and i not in panel and uncertainty(i, verdicts[i.question_id])
        ]
        first = panel + unsure[: max(0, min(wanted, quota - len(panel)))]
        rest = [i for i in candidates if i not in first][: quota - len(first)]
        chosen += first + rest
    rng.shuffle(chosen)  # no type blocks: labellers see a mixed order
    return chosen


def _disputed(
    candidates: list[ItemRecord], disputed: Collection[tuple[str, str]], quota: int
) -> list[ItemRecord]:
    """The candidates a panel disputed, up to ``DISPUTED_SHARE`` of the quota (at least one
    when the type has any)."""
    if not disputed:
        return []
    found = [i for i in candidates if (i.question_id, text_sha256(i.answer)) in disputed]
    return found[: max(1, round(quota * DISPUTED_SHARE))] if quota else []
