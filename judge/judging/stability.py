"""The judge's own stability: do its verdicts change when nothing that matters changes?

LLM judges are known to react to the order their inputs come in, and small ones obey
instructions written into the text they grade. ``check_stability`` re-judges a seeded random
sample of items in four variants and counts, per axis and question type, how often the verdict
moves:

- ``reversed``: the same chunks in reverse order (skipped for an item with fewer than 2 chunks:
  there is nothing to reverse);
- ``shuffled``: a seeded permutation that is neither the original nor the reversed order
  (skipped for fewer than 3 chunks: with 2, the only other order is the reversed one);
- ``injection_en`` and ``injection_ja``: the answer with a fixed instruction to the judge
  appended (``judge.judging.injection.INJECTION_EN`` after a space, ``INJECTION_JA`` after a
  line break). Nothing the rubric looks at changes, so every move is the instruction's doing;
  moving *up*, and above all to 2/2 from below, is the judge obeying it.

Chunks are renumbered in the order presented (rank 1 is the first the judge reads). Each
variant is an ordinary ``JudgeItem`` with its own item key (the key hashes the chunks in order
and the answer), judged through ``judge_items``: variants are cached like any verdict, so a
second run costs nothing and an interrupted one resumes.

Counts are over *pairs* (the original's verdict and the variant's) where both are ok; a pair
with a verdict that is not ok on either side is counted as such and listed, never dropped.
"""

from __future__ import annotations

import random
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from judge.errors import ConfigError, Interrupted
from judge.formatting import markdown_text, terminal_text
from judge.judging.backends import JudgeBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import JudgeProgress, judge_items
from judge.judging.injection import INJECTION_EN, INJECTION_JA
from judge.judging.items import ContextChunk, JudgeItem, item_key
from judge.judging.prompts import Prompt
from judge.judging.verdict import Verdict
from judge.results.tables import ALL

Variant = Literal["reversed", "shuffled", "injection_en", "injection_ja"]
VARIANTS: tuple[Variant, ...] = ("reversed", "shuffled", "injection_en", "injection_ja")
INJECTIONS: tuple[Variant, ...] = ("injection_en", "injection_ja")
AXES = ("faithfulness", "relevance")
DEFAULT_SAMPLE = 20
_FULL = (2, 2)


# --- the variants ----------------------------------------------------------------------------


def _with_context(item: JudgeItem, chunks: Sequence[ContextChunk]) -> JudgeItem:
    context = [ContextChunk(rank, c.chunk_id, c.text) for rank, c in enumerate(chunks, start=1)]
    return _rekeyed(item._replace(context=context))


def _with_answer(item: JudgeItem, answer: str) -> JudgeItem:
    record = item.record.model_copy(update={"answer": answer})
    return _rekeyed(item._replace(record=record))


def _rekeyed(item: JudgeItem) -> JudgeItem:
    """The item with the key of what it now shows (``build_items``' formula)."""
    question = item.question
    key = item_key(question.question, item.context, item.record.answer, question.reference_answer)
    return item._replace(key=key)


def shuffled_order(count: int, rng: random.Random) -> list[int] | None:
    """A permutation of ``range(count)`` that is neither the identity nor its reverse (None
    for fewer than 3 elements, where no such permutation exists)."""
    if count < 3:
        return None
    identity, backwards = list(range(count)), list(reversed(range(count)))
    order = identity[:]
    while order in (identity, backwards):  # at least 4 of the count! orders qualify
        rng.shuffle(order)
    return order


def make_variant(item: JudgeItem, variant: Variant, seed: int = 0) -> JudgeItem | None:
    """``item`` as the ``variant`` shows it, or None where the variant would be the item
    itself (nothing to reorder). The shuffle is seeded by ``seed`` and the question id, so it
    does not depend on which other items were sampled."""
    chunks = item.context
    if variant == "reversed":
        return _with_context(item, chunks[::-1]) if len(chunks) >= 2 else None
    if variant == "shuffled":
        order = shuffled_order(len(chunks), random.Random(f"{seed}:{item.question.id}"))
        return None if order is None else _with_context(item, [chunks[i] for i in order])
    if variant == "injection_en":
        return _with_answer(item, f"{item.record.answer.rstrip()} {INJECTION_EN}")
    return _with_answer(item, f"{item.record.answer.rstrip()}\n{INJECTION_JA}")


def sample_items(items: Sequence[JudgeItem], sample: int, seed: int) -> list[JudgeItem]:
    """A seeded random sample of ``sample`` items (all when there are fewer), in their order."""
    if sample < 1:
        raise ConfigError(f"stability: the sample size must be at least 1, got {sample}")
    if sample >= len(items):
        return list(items)
    chosen = sorted(random.Random(seed).sample(range(len(items)), sample))
    return [items[i] for i in chosen]


# --- the report ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Count:
    """``k`` of ``n``: shown as "k/n (p %)"."""

    k: int
    n: int

    @property
    def share(self) -> float | None:
        return self.k / self.n if self.n else None

    def __str__(self) -> str:
        share = self.share
        return f"{self.k}/{self.n} ({'–' if share is None else f'{share * 100:.0f} %'})"


@dataclass(frozen=True, slots=True)
class VariantRow:
    """One variant on one question type (or ``all``)."""

    variant: Variant
    question_type: str
    sampled: int
    """Sampled items of this type."""
    not_applicable: int
    """Items the variant leaves as they are (too few chunks to reorder): not judged."""
    not_ok: int
    """Pairs with a verdict that is not ok on either side: not compared."""
    pairs: int
    """Pairs where both verdicts are ok: the n of every share below but ``became_full``."""
    changed: dict[str, Count]
    """Per axis: pairs whose score differs."""
    moved_up: dict[str, Count]
    """Per axis: pairs whose score is higher in the variant."""
    became_full: Count
    """Pairs whose original was below 2/2 (the n) and whose variant is 2/2 (the k)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One pair whose scores differ."""

    question_id: str
    question_type: str
    variant: Variant
    before: tuple[int, int]
    """(faithfulness, relevance) of the original."""
    after: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Failure:
    """A verdict that is not ok, so its pairs are not compared."""

    question_id: str
    variant: Variant | None
    """None for the original (every variant of the item is then not compared)."""
    status: str
    error: str | None


@dataclass(frozen=True, slots=True)
class StabilityReport:
    judge: str
    """Backend, model and prompt, as the judge progress labels them."""
    fingerprint: str
    seed: int
    population: int
    """Items there were to sample from."""
    sampled: tuple[str, ...]
    """Question ids of the sample, in golden order."""
    types: tuple[str, ...]
    """The question types of the sample, in golden order."""
    rows: tuple[VariantRow, ...]
    """Per variant: each question type (in golden order), then ``all``."""
    changes: tuple[Change, ...]
    failures: tuple[Failure, ...]
    verdicts: int
    """Verdicts the check used (originals and variants)."""
    from_cache: int
    elapsed_s: float

    def row(self, variant: Variant, question_type: str = ALL) -> VariantRow:
        return next(
            r for r in self.rows if r.variant == variant and r.question_type == question_type
        )


def _scores(verdict: Verdict) -> tuple[int, int] | None:
    if verdict.status != "ok" or verdict.faithfulness is None or verdict.relevance is None:
        return None
    return verdict.faithfulness, verdict.relevance


@dataclass(slots=True)
class _Tally:
    sampled: int = 0
    not_applicable: int = 0
    not_ok: int = 0
    pairs: int = 0
    changed: list[int] = field(default_factory=lambda: [0, 0])
    moved_up: list[int] = field(default_factory=lambda: [0, 0])
    below_full: int = 0
    became_full: int = 0

    def add(self, before: tuple[int, int], after: tuple[int, int]) -> None:
        self.pairs += 1
        for axis in range(2):
            self.changed[axis] += after[axis] != before[axis]
            self.moved_up[axis] += after[axis] > before[axis]
        if before != _FULL:
            self.below_full += 1
            self.became_full += after == _FULL

    def row(self, variant: Variant, question_type: str) -> VariantRow:
        return VariantRow(
            variant=variant,
            question_type=question_type,
            sampled=self.sampled,
            not_applicable=self.not_applicable,
            not_ok=self.not_ok,
            pairs=self.pairs,
            changed={a: Count(self.changed[i], self.pairs) for i, a in enumerate(AXES)},
            moved_up={a: Count(self.moved_up[i], self.pairs) for i, a in enumerate(AXES)},
            became_full=Count(self.became_full, self.below_full),
        )


# --- the check -------------------------------------------------------------------------------


def check_stability(
    items: Sequence[JudgeItem],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    concurrency: int = 1,
    max_attempts: int = 4,
    on_progress: Callable[[JudgeProgress], None] = lambda _: None,
) -> StabilityReport:
    """Judge a seeded sample of ``items`` and its variants; count how verdicts move.

    Originals come from the cache when a run judged them already. Progress covers the whole
    check (originals and variants). Raises ``Interrupted`` on Ctrl-C, after what was judged
    is in the cache (the next run resumes).
    """
    start = time.perf_counter()
    chosen = sample_items(items, sample, seed)
    variants: dict[Variant, list[tuple[JudgeItem, JudgeItem | None]]] = {
        v: [(item, make_variant(item, v, seed)) for item in chosen] for v in VARIANTS
    }
    batches: list[tuple[Variant | None, list[JudgeItem]]] = [(None, chosen)]
    batches += [(v, [x for _, x in pairs if x is not None]) for v, pairs in variants.items()]
    total = sum(len(batch) for _, batch in batches)
    done = cached = not_ok = 0
    verdicts: dict[Variant | None, dict[str, Verdict]] = {}
    fingerprint = ""
    for variant, batch in batches:

        def progress(
            event: JudgeProgress, base: tuple[int, int, int] = (done, cached, not_ok)
        ) -> None:
            # Counts over the whole check: the batches before this one, then this one's.
            on_progress(
                JudgeProgress(
                    base[0] + event.done, total, base[1] + event.cached, base[2] + event.not_ok
                )
            )

        outcome = judge_items(
            batch,
            backend,
            prompt,
            cache,
            concurrency=concurrency,
            max_attempts=max_attempts,
            on_progress=progress,
        )
        fingerprint = outcome.fingerprint.value
        verdicts[variant] = outcome.verdicts
        done += len(outcome.verdicts)
        cached += sum(v.cached for v in outcome.verdicts.values())
        not_ok += sum(v.status != "ok" for v in outcome.verdicts.values())
        if outcome.interrupted:
            raise Interrupted(
                f"judge stability interrupted: {done} of {total} verdicts judged and cached; "
                "run the same command again to finish (what was judged is not asked again)"
            )

    types = tuple(dict.fromkeys(item.question.type for item in chosen))
    tallies = {(v, t): _Tally() for v in VARIANTS for t in (*types, ALL)}
    changes: list[Change] = []
    originals = verdicts[None]
    failures = [
        Failure(qid, None, originals[qid].status, originals[qid].error)
        for qid in (item.question.id for item in chosen)
        if originals[qid].status != "ok"
    ]
    for variant in VARIANTS:
        judged = verdicts[variant]
        for item, changed_item in variants[variant]:
            qid, qtype = item.question.id, item.question.type
            of_type, of_all = tallies[variant, qtype], tallies[variant, ALL]
            for tally in (of_type, of_all):
                tally.sampled += 1
            if changed_item is None:
                for tally in (of_type, of_all):
                    tally.not_applicable += 1
                continue
            after_verdict = judged[qid]
            if after_verdict.status != "ok":
                failures.append(Failure(qid, variant, after_verdict.status, after_verdict.error))
            before, after = _scores(originals[qid]), _scores(after_verdict)
            if before is None or after is None:
                for tally in (of_type, of_all):
                    tally.not_ok += 1
                continue
            for tally in (of_type, of_all):
                tally.add(before, after)
            if after != before:
                changes.append(Change(qid, qtype, variant, before, after))
    return StabilityReport(
        judge=f"{backend.identity.kind} {backend.identity.model} · {prompt.name}",
        fingerprint=fingerprint,
        seed=seed,
        population=len(items),
        sampled=tuple(item.question.id for item in chosen),
        types=types,
        rows=tuple(tallies[v, t].row(v, t) for v in VARIANTS for t in (*types, ALL)),
        changes=tuple(changes),
        failures=tuple(failures),
        verdicts=total,
        from_cache=cached,
        elapsed_s=time.perf_counter() - start,
    )


# --- rendering -------------------------------------------------------------------------------

_HEADER = (
    "variant",
    "type",
    "n",
    "F changed",
    "R changed",
    "F up",
    "R up",
    "to 2/2",
    "not ok",
    "n/a",
)


def _cells(row: VariantRow, count: Callable[[Count], str]) -> list[str]:
    return [
        row.variant,
        row.question_type,
        str(row.pairs),
        count(row.changed["faithfulness"]),
        count(row.changed["relevance"]),
        count(row.moved_up["faithfulness"]),
        count(row.moved_up["relevance"]),
        count(row.became_full),
        str(row.not_ok),
        str(row.not_applicable),
    ]


def _fr(scores: tuple[int, int]) -> str:
    return f"F{scores[0]} R{scores[1]}"


def _summary(report: StabilityReport) -> str:
    return (
        f"{len(report.sampled)} of {report.population} answers sampled (seed {report.seed}); "
        f"{report.verdicts} verdicts, {report.from_cache} from the cache, "
        f"{report.elapsed_s:.1f} s"
    )


def stability_markdown(report: StabilityReport) -> list[str]:
    """A Markdown section: what was done, the table, the changed items and the failures."""
    md = markdown_text
    lines = [
        "## Judge stability",
        "",
        f"Judge: {md(report.judge)}. {md(_summary(report))}.",
        "",
        f"Sampled: {', '.join(md(qid) for qid in report.sampled) or 'none'}.",
        "",
        "Each sampled answer was judged again with its chunks reversed and shuffled, and with a "
        "fixed instruction to the judge appended to the answer (English, Japanese). n counts "
        'the pairs where both verdicts are ok; "up" is a higher score in the variant; '
        '"to 2/2" counts, of the originals below 2/2, those the variant put at 2/2; "not ok" '
        'pairs are not compared; "n/a" answers have too few chunks to reorder.',
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|---|---|" + "---:|" * (len(_HEADER) - 2),
    ]
    for row in report.rows:
        cells = [md(c) for c in _cells(row, str)]
        if row.question_type == ALL:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if report.changes:
        lines += [
            f"Changed verdicts ({len(report.changes)}):",
            "",
            "| question | type | variant | before | after |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(c.question_id)} | {md(c.question_type)} | {c.variant} | {_fr(c.before)} "
            f"| {_fr(c.after)} |"
            for c in report.changes
        ]
    else:
        lines.append("No verdict changed.")
    if report.failures:
        lines += ["", f"Verdicts not ok ({len(report.failures)}), their pairs not compared:", ""]
        lines += [
            f"- {md(f.question_id)} ({f.variant or 'original'}): {md(f.status)}: {md(f.error)}"
            for f in report.failures
        ]
    lines.append("")
    return lines


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _compact(count: Count) -> str:
    share = count.share
    return f"{count.k}/{count.n}" + ("" if share is None else f" {share:.0%}")


#: Changed items listed on the console; the rest are in the Markdown section.
CONSOLE_CHANGES = 10


def stability_lines(report: StabilityReport) -> list[str]:
    """The report as plain-text lines for the console: one aligned table (shares as "k/n p%"),
    then the first changed items and the failures."""
    rows = [list(_HEADER)] + [
        [terminal_text(c, one_line=True) for c in _cells(row, _compact)] for row in report.rows
    ]
    widths = [max(_width(r[i]) for r in rows) for i in range(len(_HEADER))]

    def line(cells: list[str]) -> str:
        out = [
            cell + " " * (widths[i] - _width(cell))
            if i < 2
            else " " * (widths[i] - _width(cell)) + cell
            for i, cell in enumerate(cells)
        ]
        return "  ".join(out).rstrip()

    lines = [
        f"judge stability ({terminal_text(report.judge, one_line=True)}): "
        + terminal_text(_summary(report), one_line=True),
        line(rows[0]),
    ]
    previous = None
    for cells, row in zip(rows[1:], report.rows, strict=True):
        if row.variant != previous:
            lines.append("-" * _width(line(rows[0])))
            previous = row.variant
        lines.append(line(cells))
    if report.changes:
        lines.append(f"{len(report.changes)} changed verdicts:")
        lines += [
            f"  {terminal_text(c.question_id, one_line=True)} {c.variant}: "
            f"{_fr(c.before)} → {_fr(c.after)}"
            for c in report.changes[:CONSOLE_CHANGES]
        ]
        if len(report.changes) > CONSOLE_CHANGES:
            lines.append(f"  … {len(report.changes) - CONSOLE_CHANGES} more")
    else:
        lines.append("no verdict changed")
    for f in report.failures:
        lines.append(
            f"not ok: {terminal_text(f.question_id, one_line=True)} ({f.variant or 'original'}): "
            f"{f.status}: {terminal_text(f.error, one_line=True)}"
        )
    return lines
