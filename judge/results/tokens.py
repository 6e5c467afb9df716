"""What judging cost: tokens and seconds per question type and per run, and an estimate of
what the pending items will cost before they are sent.

Pure functions of verdicts (and, for the estimate, of earlier replies' recorded counts):
``judge.record.model.Record.tokens`` and the manifest read ``token_totals``; the pipeline computes
``estimate`` from the verdict cache before a run or a batch export
(``judge.pipeline.session``), and ``judge.report.tokens_text`` writes the lines.

A backend that reports no counts (the lexical baseline; a server without ``usage``) gives
``None`` everywhere, shown as "not reported": a silent 0 would read as "free". Counts are
those the backend reported for each reply, so a verdict taken from the cache carries what its
reply cost when it was made (``cached`` says how many): the run's own spending is the
total less those. A count is taken only as a plain integer within ``judge.io.limits.MAX_COUNT``
(``bounded_count``): a server's 400-digit ``usage.prompt_tokens``, cached, is "not reported",
never an ``OverflowError`` in every later estimate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict

from judge.io.limits import bounded_count
from judge.judging.types import Verdict


class TokenCount(BaseModel):
    """Tokens and seconds of a group of verdicts (one question type, or all)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: int = 0
    """Verdicts in the group (judged answers; an adapter failure has none)."""
    counted: int = 0
    """Of those, the ones whose reply came with token counts."""
    prompt_tokens: int | None = None
    """Sum over the counted items; None when none is counted ("not reported", never 0)."""
    completion_tokens: int | None = None
    timed: int = 0
    """Verdicts whose reply has a measured time (an imported batch reply has none)."""
    seconds: float | None = None
    """Sum of the timed items' request times (the judge's time per item added up; with
    several requests in flight, more than the wall time). None when none is timed."""
    cached: int = 0
    """Verdicts taken from the verdict cache (their counts are the original reply's)."""

    @property
    def reported(self) -> bool:
        """Whether the backend reported token counts for any item of the group."""
        return self.counted > 0


class TokenTotals(BaseModel):
    """Per question type (in the declared order, then any other in golden-set order) and for
    the whole run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    types: dict[str, TokenCount]
    total: TokenCount

    @property
    def reported(self) -> bool:
        return self.total.reported


class Costed(Protocol):
    """What a judgement's cost is read from: a ``Verdict``, a ``ChunkGrade`` or a
    ``CorrectnessVerdict`` (``judge.judging.types``) alike."""

    @property
    def question_id(self) -> str: ...
    @property
    def prompt_tokens(self) -> int | None: ...
    @property
    def completion_tokens(self) -> int | None: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def cached(self) -> bool: ...


def count_of(verdicts: Sequence[Costed]) -> TokenCount:
    """The tokens and seconds of a group of judgements (answers, chunk grades, correctness),
    in one pass (a report counts each of 10,000 verdicts twice: its type's and the total)."""
    counted = timed = cached = 0
    prompts: list[int] = []
    completions: list[int] = []
    seconds: float = 0  # as sum() adds: from the integer 0, in order
    for v in verdicts:
        prompt, completion = bounded_count(v.prompt_tokens), bounded_count(v.completion_tokens)
        if prompt is not None or completion is not None:
            counted += 1
            if prompt is not None:
                prompts.append(prompt)
            if completion is not None:
                completions.append(completion)
        latency = v.latency_s
        if _seconds(latency) > 0:
            timed += 1
            seconds += latency
        cached += v.cached
    return TokenCount(
        items=len(verdicts),
        counted=counted,
        prompt_tokens=sum(prompts) if prompts else None,
        completion_tokens=sum(completions) if completions else None,
        timed=timed,
        seconds=round(seconds, 3) if timed else None,
        cached=cached,
    )


def _seconds(value: float) -> float:
    """A recorded request time, or 0 when it is no finite, plausible number of seconds."""
    return value if isinstance(value, int | float) and 0 <= value < MAX_SECONDS else 0


def token_totals(
    verdicts: Iterable[Verdict],
    types: Mapping[str, str],
    order: Sequence[str] = (),
) -> TokenTotals:
    """The totals of ``verdicts`` per question type and for all of them.

    ``types``: question id → type (a verdict of a question not in it counts in the total
    only). ``order``: the declared type order (``data.question_types``); a declared type
    without verdicts is listed with zeros, so every type of the set shows.
    """
    listed = list(verdicts)
    grouped: dict[str, list[Verdict]] = {name: [] for name in order}
    for verdict in listed:
        kind = types.get(verdict.question_id)
        if kind is not None:
            grouped.setdefault(kind, []).append(verdict)
    return TokenTotals(
        types={name: count_of(group) for name, group in grouped.items()},
        total=count_of(listed),
    )


# --- the estimate before a run ----------------------------------------------------------------


#: A recorded request time longer than a week is no time a reply took: not taken.
MAX_SECONDS = 7 * 24 * 3600.0


class Observed(NamedTuple):
    """What one earlier reply of the same judge cost (as the verdict cache recorded it)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float


class Estimate(NamedTuple):
    """What the pending items should cost, at the rate of the judge's earlier replies."""

    pending: int
    """Items to judge: not in the verdict cache under this judge's fingerprint."""
    total: int
    basis: int
    """Earlier replies the rate is read from (0: none to estimate from)."""
    prompt_tokens: int | None
    """Estimated, for the pending items; None without earlier counts."""
    completion_tokens: int | None
    seconds: float | None
    """Estimated time for the pending items, ``concurrency`` requests at a time; None
    without earlier timed replies."""
    concurrency: int = 1

    def line(self) -> str:
        """One line for the console, e.g. "to judge: 12 of 30 items (18 in the cache); about
        14,400 prompt and 960 completion tokens and 6 min at the rate of this judge's last 30
        replies"."""
        cached = self.total - self.pending
        if self.pending == 0:
            return f"to judge: none of {self.total} items (all in the cache)"
        head = f"to judge: {self.pending:,} of {self.total:,} items ({cached:,} in the cache)"
        if self.basis == 0:
            return f"{head}; no earlier replies of this judge to estimate from"
        parts = []
        if self.prompt_tokens is not None or self.completion_tokens is not None:
            parts.append(
                f"{_about(self.prompt_tokens)} prompt and "
                f"{_about(self.completion_tokens)} completion tokens"
            )
        if self.seconds is not None:
            at_once = f", {self.concurrency} at a time" if self.concurrency > 1 else ""
            parts.append(f"{duration(self.seconds)}{at_once}")
        replies = f"{self.basis:,} repl{'y' if self.basis == 1 else 'ies'}"
        rate = f"at the rate of this judge's last {replies}"
        if not parts:
            return f"{head}; its earlier replies report neither tokens nor time ({replies})"
        tokens = "" if parts[0].endswith("tokens") else "; tokens: not reported by this backend"
        return f"{head}; about {' and '.join(parts)} {rate}{tokens}"


def _about(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def duration(seconds: float) -> str:
    """A rough duration: "40 s", "6 min", "2.5 h"."""
    if seconds < 90:
        return f"{max(round(seconds), 1)} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def estimate(
    pending: int, total: int, earlier: Sequence[Observed], concurrency: int = 1
) -> Estimate:
    """The cost of ``pending`` items at the mean rate of ``earlier`` replies of the same judge.

    Tokens: the mean per reply over those that report each count, times ``pending``. Time:
    the mean request time over the timed replies (an imported batch reply has none), times
    ``pending``, divided by ``concurrency`` (requests in flight). Rounded: the figure is a
    guide, not a quote.
    """
    at_once = max(concurrency, 1)

    def scaled(values: list[float]) -> float | None:
        return sum(values) / len(values) * pending if values else None

    prompts = [bounded_count(o.prompt_tokens) for o in earlier]
    completions = [bounded_count(o.completion_tokens) for o in earlier]
    prompt = scaled([count for count in prompts if count is not None])
    completion = scaled([count for count in completions if count is not None])
    seconds = scaled([_seconds(o.latency_s) for o in earlier if _seconds(o.latency_s) > 0])
    return Estimate(
        pending=pending,
        total=total,
        basis=len(earlier),
        prompt_tokens=_rounded(prompt),
        completion_tokens=_rounded(completion),
        seconds=None if seconds is None else seconds / at_once,
        concurrency=at_once,
    )


def _rounded(value: float | None) -> int | None:
    """Two significant figures (1,234,567 → 1,200,000): the estimate's own precision."""
    if value is None:
        return None
    whole = round(value)
    if whole < 100:
        return whole
    scale: int = 10 ** (len(str(whole)) - 2)
    return round(whole / scale) * scale
