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
Every share is a per-type mean of a 0/1 value per sampled question
(``judge.grouped``), the way every per-type figure is aggregated.

Every verdict of the check, the originals' and the variants', is also looked at the way the
run's review queue looks at it: its own review flags (a quote not found, a missing citation,
a judge-directed instruction in the answer or a chunk) and, for a verdict that is not ok, the
instruction detector's findings, which apply whatever the status (``VariantFlags``). The
injection variants should be flagged every time: that is the detector's own check.

The result, ``StabilityReport``, is plain data (``judge.judging.types``, with the rows and flags
it holds); ``judge.report.stability`` renders it (as a Markdown section and as console lines).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from judge.axes import AXES, FULL_MARKS
from judge.errors import ConfigError, Interrupted
from judge.grouped import ALL, grouped
from judge.grouped import type_order as grouped_type_order
from judge.judging.backends.base import JudgeBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import JudgeProgress
from judge.judging.injection import INJECTION_EN, INJECTION_JA, instruction_flags
from judge.judging.items import JudgeItem, item_key
from judge.judging.judge import judge_items
from judge.judging.prompts import Prompt
from judge.judging.types import (
    VARIANTS,
    ContextChunk,
    Count,
    Failure,
    FlaggedVerdict,
    StabilityReport,
    Variant,
    VariantFlags,
    VariantFlip,
    VariantRow,
    Verdict,
)

INJECTIONS: tuple[Variant, ...] = ("injection_en", "injection_ja")
DEFAULT_SAMPLE = 20


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


def verdict_flags(verdict: Verdict, item: JudgeItem) -> tuple[str, ...]:
    """Why a person should look at a verdict of the check: an ok verdict's own review flags
    (the instruction detector's among them), or, for one that is not ok, the detector's."""
    if verdict.status == "ok":
        return verdict.review
    return instruction_flags(item.record.answer, item.context)


def _flags(
    variant: Variant | None, judged: Mapping[str, Verdict], items: Sequence[JudgeItem]
) -> VariantFlags:
    flagged = []
    for item in items:
        verdict = judged[item.question.id]
        reasons = verdict_flags(verdict, item)
        if reasons:
            flagged.append(FlaggedVerdict(item.question.id, verdict.status, reasons))
    return VariantFlags(variant, len(items), tuple(flagged))


def _scores(verdict: Verdict) -> tuple[int, int] | None:
    if verdict.status != "ok" or verdict.faithfulness is None or verdict.relevance is None:
        return None
    return verdict.faithfulness, verdict.relevance


def _shares(
    outcomes: Mapping[str, bool], type_of: Mapping[str, str], types: Sequence[str]
) -> dict[str, Count]:
    """Per type of ``types``, then ``all``: how many of the questions in ``outcomes`` have a
    true outcome (the k), of how many there are (the n)."""
    groups = grouped({q: float(x) for q, x in outcomes.items()}, type_of, types, overall=ALL)
    return {name: Count(round(group.total), group.n) for name, group in groups.items()}


def _variant_rows(
    variant: Variant,
    types: Sequence[str],
    type_of: Mapping[str, str],
    shown: Mapping[str, JudgeItem | None],
    pairs: Mapping[str, tuple[tuple[int, int], tuple[int, int]]],
) -> list[VariantRow]:
    """One variant's rows: each type of ``types``, then ``all``.

    ``shown`` holds every sampled question's variant (None where the variant would be the item
    itself), ``pairs`` the (before, after) scores of the questions whose two verdicts are ok.
    """
    applicable = _shares({q: x is None for q, x in shown.items()}, type_of, types)
    judged = [q for q, x in shown.items() if x is not None]
    not_ok = _shares({q: q not in pairs for q in judged}, type_of, types)
    changed = {
        axis: _shares({q: a[i] != b[i] for q, (b, a) in pairs.items()}, type_of, types)
        for i, axis in enumerate(AXES)
    }
    moved_up = {
        axis: _shares({q: a[i] > b[i] for q, (b, a) in pairs.items()}, type_of, types)
        for i, axis in enumerate(AXES)
    }
    became_full = _shares(
        {q: a == FULL_MARKS for q, (b, a) in pairs.items() if b != FULL_MARKS}, type_of, types
    )
    return [
        VariantRow(
            variant=variant,
            question_type=name,
            sampled=applicable[name].n,
            not_applicable=applicable[name].k,
            not_ok=not_ok[name].k,
            pairs=changed[AXES[0]][name].n,
            changed={axis: changed[axis][name] for axis in AXES},
            moved_up={axis: moved_up[axis][name] for axis in AXES},
            became_full=became_full[name],
        )
        for name in applicable
    ]


# --- the check -------------------------------------------------------------------------------

_Shown = list[tuple[JudgeItem, JudgeItem | None]]
"""Each sampled item with its variant (None where the variant would be the item itself)."""

_Pairs = dict[str, tuple[tuple[int, int], tuple[int, int]]]
"""Per question whose two verdicts are ok: the (before, after) scores."""


class _Judged(NamedTuple):
    """Every verdict of the check, judged batch by batch."""

    verdicts: dict[Variant | None, dict[str, Verdict]]  # per variant (None: the originals)
    fingerprint: str  # the judge's fingerprint, as the last batch reported it
    cached: int  # how many verdicts came from the cache


class _Paired(NamedTuple):
    """One variant against the originals."""

    pairs: _Pairs  # the scores of the questions whose two verdicts are ok
    flips: list[VariantFlip]  # the pairs whose scores differ
    failures: list[Failure]  # the variant's verdicts that are not ok


class _Moves(NamedTuple):
    """How the verdicts moved: rows per variant and type, flipped pairs, verdicts not ok."""

    rows: list[VariantRow]
    flips: list[VariantFlip]
    failures: list[Failure]


def _judge_batches(
    batches: Sequence[tuple[Variant | None, list[JudgeItem]]],
    backend: JudgeBackend,
    prompt: Prompt,
    cache: VerdictCache,
    *,
    concurrency: int,
    max_attempts: int,
    on_progress: Callable[[JudgeProgress], None],
) -> _Judged:
    """Judge the batches one after the other, reporting progress over all of them together.

    Raises ``Interrupted`` on Ctrl-C, after what was judged is in the cache.
    """
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
    return _Judged(verdicts, fingerprint, cached)


def _paired(
    variant: Variant, shown: _Shown, originals: Mapping[str, Verdict], judged: Mapping[str, Verdict]
) -> _Paired:
    """One variant's verdicts (``judged``) against the originals'."""
    paired = _Paired(pairs={}, flips=[], failures=[])
    for item, changed_item in shown:
        if changed_item is None:
            continue
        qid = item.question.id
        after_verdict = judged[qid]
        if after_verdict.status != "ok":
            paired.failures.append(Failure(qid, variant, after_verdict.status, after_verdict.error))
        before, after = _scores(originals[qid]), _scores(after_verdict)
        if before is None or after is None:
            continue
        paired.pairs[qid] = before, after
        if after != before:
            paired.flips.append(VariantFlip(qid, item.question.type, variant, before, after))
    return paired


def _moves(
    chosen: Sequence[JudgeItem],
    variants: Mapping[Variant, _Shown],
    verdicts: Mapping[Variant | None, Mapping[str, Verdict]],
    types: Sequence[str],
) -> _Moves:
    """Every variant against the originals: rows variant by variant, then flips and failures
    (the originals' first, then each variant's, in the order of ``VARIANTS``)."""
    type_of = {item.question.id: item.question.type for item in chosen}
    originals = verdicts[None]
    moves = _Moves(rows=[], flips=[], failures=[])
    moves.failures.extend(
        Failure(qid, None, originals[qid].status, originals[qid].error)
        for qid in (item.question.id for item in chosen)
        if originals[qid].status != "ok"
    )
    for variant in VARIANTS:
        paired = _paired(variant, variants[variant], originals, verdicts[variant])
        moves.flips.extend(paired.flips)
        moves.failures.extend(paired.failures)
        shown = {item.question.id: shown_item for item, shown_item in variants[variant]}
        moves.rows.extend(_variant_rows(variant, types, type_of, shown, paired.pairs))
    return moves


def _sample_types(chosen: Sequence[JudgeItem], type_order: Sequence[str]) -> tuple[str, ...]:
    """The question types of the sample, in the order of every per-type table."""
    type_of = {item.question.id: item.question.type for item in chosen}
    present = set(type_of.values())
    return tuple(t for t in grouped_type_order(type_of, type_order) if t in present)


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
    type_order: Sequence[str] = (),
) -> StabilityReport:
    """Judge a seeded sample of ``items`` and its variants; count how verdicts move.

    The rows go type by type in the order of every per-type table (``judge.grouped
    .type_order``: the types of ``type_order``, the configured ``data.question_types``, that
    the sample has, then any other in golden order), ``all`` last.

    Originals come from the cache when a run judged them already. Progress covers the whole
    check (originals and variants). Raises ``Interrupted`` on Ctrl-C, after what was judged
    is in the cache (the next run resumes).
    """
    start = time.perf_counter()
    chosen = sample_items(items, sample, seed)
    variants: dict[Variant, _Shown] = {
        v: [(item, make_variant(item, v, seed)) for item in chosen] for v in VARIANTS
    }
    batches: list[tuple[Variant | None, list[JudgeItem]]] = [(None, chosen)]
    batches += [(v, [x for _, x in pairs if x is not None]) for v, pairs in variants.items()]
    judged = _judge_batches(
        batches,
        backend,
        prompt,
        cache,
        concurrency=concurrency,
        max_attempts=max_attempts,
        on_progress=on_progress,
    )
    types = _sample_types(chosen, type_order)
    moves = _moves(chosen, variants, judged.verdicts, types)
    flags = [_flags(variant, judged.verdicts[variant], batch) for variant, batch in batches]
    return StabilityReport(
        judge=f"{backend.identity.kind} {backend.identity.model} · {prompt.name}",
        fingerprint=judged.fingerprint,
        seed=seed,
        population=len(items),
        sampled=tuple(item.question.id for item in chosen),
        types=types,
        rows=tuple(moves.rows),
        flips=tuple(moves.flips),
        failures=tuple(moves.failures),
        verdicts=sum(len(batch) for _, batch in batches),
        from_cache=judged.cached,
        elapsed_s=time.perf_counter() - start,
        flags=tuple(flags),
    )
