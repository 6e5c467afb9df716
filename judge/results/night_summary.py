"""One night of the season, summarised once when its folder is written: what the season's views
(``reports/history.html`` and ``judge history``) need of it, and nothing more.

Per charted metric (retrieval at ``context_k`` and MRR, then the judge's) and per type and
``all``, the night's mean with its 95 % interval and n (``point``); the parts of its manifest
the changes under the numbers are computed from (``context_k``, the judge's backend, model,
digest and prompt hash, the harness version); and its golden questions as a count and a digest
of their ids, so that an edit of labels or texts is told from questions added or retired.

A run writes it into its folder's ``marks.json`` beside the gate's marks
(``judge.report.history_page``), so that a season of a year of nights on 10,000 questions is a
read of 365 small files instead of every night's ``values.json``. A folder written before has
none: its summary is made from its ``manifest.json`` and ``values.json`` when the season is
drawn (``summarise_night``, the same function the writer calls, so both paths draw the same picture).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from judge.axes import SCORE_METRICS
from judge.grouped import ALL
from judge.results.compare import QuestionValues
from judge.results.manifest import Manifest

#: The judge metrics charted, in order; retrieval metrics are those at ``context_k``.
CHARTED_JUDGE = ("faithfulness", "relevance", "correctness", "ok_share")
CHARTED_RETRIEVAL = ("recall", "ndcg", "hit")
#: z of a two-sided 95 % normal interval.
Z95 = 1.959964
#: ``context_k`` of a night whose manifest is not known (the configuration's default).
DEFAULT_CONTEXT_K = 5


class Point(NamedTuple):
    """One night's value of a cell: the mean with its 95 % interval over ``n`` questions."""

    mean: float
    low: float
    high: float
    n: int


def point(values: Sequence[float], top: float = 1.0) -> Point | None:
    """The mean of ``values`` (each in 0..``top``) with its 95 % interval (None: no values):
    Wilson's for values that are all 0 or ``top`` (a share of full marks: honest at the ends,
    where a normal interval shrinks to nothing), else the normal interval of the mean cut to
    0..``top``."""
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    if all(v in (0.0, top) for v in values):
        share = mean / top
        z2 = Z95 * Z95
        centre = (share + z2 / (2 * n)) / (1 + z2 / n)
        half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        # The bounds hold the mean exactly (at 0 or 1 rounding would leave it just outside).
        low, high = top * max(0.0, centre - half), top * min(1.0, centre + half)
        return Point(mean, min(low, mean), max(high, mean), n)
    if n == 1:
        return Point(mean, mean, mean, 1)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    return Point(mean, max(0.0, mean - half), min(top, mean + half), n)


def charted_metrics(values: QuestionValues, context_k: int) -> list[str]:
    """The metrics a night's values chart: retrieval at ``context_k`` (and MRR), then the
    judge's, as ``section:metric``."""
    retrieval = values.values.get("retrieval", {})
    wanted = [f"{m}@{context_k}" for m in CHARTED_RETRIEVAL] + ["mrr"]
    charted = [f"retrieval:{m}" for m in wanted if m in retrieval]
    judge = values.values.get("judge", {})
    return charted + [f"judge:{m}" for m in CHARTED_JUDGE if m in judge]


def type_points(values: QuestionValues, metric: str) -> dict[str, Point | None]:
    """Per type (and ``all``) the point of one ``section:metric`` of a night."""
    section, _, name = metric.partition(":")
    per_question = values.values.get(section, {}).get(name, {})  # type: ignore[call-overload]
    grouped: dict[str, list[float]] = {ALL: []}
    for qid, value in per_question.items():
        grouped[ALL].append(value)
        grouped.setdefault(values.types.get(qid, "?"), []).append(value)
    top = 2.0 if name in SCORE_METRICS else 1.0
    return {t: point(v, top) for t, v in grouped.items()}


class JudgeSummary(BaseModel):
    """The judge of a night, as its manifest names it: what a judge change is read from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: str
    model: str
    digest: str | None
    prompt_sha256: str


class GoldenSummary(BaseModel):
    """A night's golden questions: how many, and a digest of their ids (sorted, one a line)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: int
    ids_sha256: str


class NightSummary(BaseModel):
    """What the season's views need of one night (besides its history line and its marks)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context_k: int | None
    """None: the night's manifest was not known (then ``DEFAULT_CONTEXT_K`` is charted, and
    neither ``context_k`` nor the harness version is compared with its neighbours)."""
    judge: JudgeSummary | None
    """None: not known; the history line's judge parts are compared instead."""
    harness: str | None
    """The harness version that wrote the night (``versions.judge`` of its manifest)."""
    golden: GoldenSummary
    points: dict[str, dict[str, Point | None]]
    """``section:metric`` → type (``all`` first) → the night's point, in the charted order."""


def ids_digest(ids: Iterable[str]) -> str:
    """The digest of a set of question ids: equal sets, equal digests."""
    text = "\n".join(sorted(ids))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def summarise_night(manifest: Manifest | None, values: QuestionValues) -> NightSummary:
    """The summary of a night from its manifest (None: unknown) and its values question by
    question: the writer's and the fallback's one computation."""
    k = DEFAULT_CONTEXT_K if manifest is None else manifest.config.retrieval.context_k
    judge = None
    if manifest is not None:
        info = manifest.judge
        judge = JudgeSummary(
            backend=info.backend,
            model=info.model,
            digest=info.digest,
            prompt_sha256=info.prompt_sha256,
        )
    return NightSummary(
        context_k=None if manifest is None else k,
        judge=judge,
        harness=None if manifest is None else manifest.versions.get("judge"),
        golden=GoldenSummary(questions=len(values.types), ids_sha256=ids_digest(values.types)),
        points={metric: type_points(values, metric) for metric in charted_metrics(values, k)},
    )
