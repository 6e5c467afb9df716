"""The judging package's public data: what a verdict, the evidence it cites, the chunks it was
given and the stability check's report are, apart from how they are made.

The record (``judge.record``) keeps these types and the views (``judge.report``) read them; the
views must not depend on how a reply is parsed, a quote searched or a check run, so the types
live here, in a module with no logic of judging's and no import of the rest of
``judge.judging`` or of ``judge.inputs`` (``tests/test_layering.py`` and ``.importlinter``
keep it so). What remains a method here is a property of the data (``Verdict.confidence``,
``Count.share``) that needs nothing but the fields.

``JudgeItem`` is not here: it holds the golden question and the run's record
(``judge.inputs``), so it stays with the code that builds it (``judge.judging.items``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from judge.axes import Axis
from judge.grouped import ALL

# --- what the judge was shown ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContextChunk:
    """A chunk as the generator (and therefore the judge) saw it.

    A plain dataclass, not a model: items are built by the thousand, and pydantic still reads
    and writes it as ``{rank, chunk_id, text}`` inside the report folder's records.
    """

    rank: int
    chunk_id: str
    text: str


# --- verdicts --------------------------------------------------------------------------------

MatchKind = Literal["exact", "normalised", "partial", "absent", "too_short", "empty", "cited"]
"""``cited``: not a quote but a context sentence the judge pointed at by its number (the
``cited`` and ``sentences`` prompt modes): real by construction, so never "found"."""


class EvidenceMatch(BaseModel):
    """Where the quote was found, if anywhere."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: MatchKind
    chunk_id: str | None = None
    start: int | None = None
    end: int | None = None
    coverage: float = 0.0
    """Share of the normalised quote found as one span (1.0 for exact and normalised)."""
    sentence: int | None = None
    """For a cited context sentence: the number the prompt showed it under, kept when the
    verdict is made so that no view has to number the chunks again."""

    @property
    def found(self) -> bool:
        """True when the quote is verifiably in the context (exact or normalised)."""
        return self.kind in ("exact", "normalised")

    @property
    def cited(self) -> bool:
        """True for a context sentence cited by number rather than quoted."""
        return self.kind == "cited"


Status = Literal["ok", "parse_error", "backend_error", "truncated"]
STATUSES: tuple[Status, ...] = ("ok", "parse_error", "backend_error", "truncated")

#: How a prompt asks for evidence: ``quote`` (copy a sentence; the harness verifies it),
#: ``cited`` (the number of a numbered context sentence), ``sentences`` (a verdict and a cited
#: context sentence for every answer sentence). Chosen by the prompt file's placeholders.
Mode = Literal["quote", "cited", "sentences"]
MODES: tuple[Mode, ...] = ("quote", "cited", "sentences")


class SentenceCheck(BaseModel):
    """The judge's verdict on one answer sentence (``sentences`` mode)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    """1-based, as the prompt numbered it."""
    text: str
    start: int
    """The sentence's span ``[start, end)`` in the answer text."""
    end: int
    verdict: Literal["supported", "unsupported", "no_claim"]
    evidence: EvidenceMatch | None = None
    """The context sentence it cites (kind ``cited``), None when it cites none."""
    evidence_text: str = ""


class Verdict(BaseModel):
    """The judgement of one answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    item_key: str
    status: Status
    faithfulness: int | None = None
    relevance: int | None = None
    evidence: str = ""
    note: str = ""
    match: EvidenceMatch | None = None
    review: tuple[str, ...] = ()
    """Reasons a person should look at this verdict (empty when nothing is suspicious)."""
    error: str | None = None
    raw_reply: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False
    score_probabilities: dict[str, tuple[float, float, float]] | None = None
    """The reply's score distributions (ok verdicts only), see ``judge.judging.verdict.Reply``."""
    mode: Mode = "quote"
    sentences: tuple[SentenceCheck, ...] | None = None
    """Per answer sentence, in ``sentences`` mode only."""

    @property
    def expected_scores(self) -> dict[str, float]:
        """Per axis with probabilities, the expected score 0·P(0) + 1·P(1) + 2·P(2) (empty
        without them; the integer score stays the most probable one)."""
        return {
            axis: probabilities[1] + 2 * probabilities[2]
            for axis, probabilities in (self.score_probabilities or {}).items()
        }

    @property
    def confidence(self) -> float | None:
        """The judge's probability of the scores it gave: the lower of the two axes' (None
        without probabilities, or for a verdict that is not ok)."""
        probabilities = self.score_probabilities
        if probabilities is None or self.faithfulness is None or self.relevance is None:
            return None
        chosen = {"faithfulness": self.faithfulness, "relevance": self.relevance}
        shares = [
            probabilities[axis][score] for axis, score in chosen.items() if axis in probabilities
        ]
        return min(shares) if shares else None


# --- the further judgements' results (chunk grades, correctness) ------------------------------


class Judgement(BaseModel):
    """What every judgement but the answer's keeps of its reply: the status it was read with,
    the reason, and the reply's text and cost (as a ``Verdict`` keeps them). Each task's result
    (``judge.judging.tasks``) adds its own score; like a ``Verdict``, it is derived anew from
    the cached ``Reply`` every time it is used."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    item_key: str
    """The cache key: a hash of everything the judge was shown."""
    status: Status
    reason: str = ""
    error: str | None = None
    raw_reply: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False


class TaskJudgement(Judgement):
    """The result of a judgement without a field of its own in the record (a task whose
    ``row_field`` is ``judgements``, ``judge.judging.tasks.base``): a score on the task's own
    scale. Typed and of fixed depth like every row field, so the record reads back exactly
    what it wrote."""

    score: int | None = None
    """The score on the task's scale for an ok result, None otherwise (never a silent 0)."""


class ChunkGrade(Judgement):
    """The judge's grade of one retrieved chunk for one question (``item_key``: a hash of the
    question's text and the chunk's id and text; ``judge.judging.tasks.chunk``)."""

    chunk_id: str
    rank: int
    """1-based rank of the chunk in the run's retrieved list."""
    grade: int | None = None
    """0-3 for an ok grade, None otherwise (never a silent 0)."""


class CorrectnessVerdict(Judgement):
    """The judge's verdict on one answer against the question's reference answer
    (``item_key``: a hash of the question, the reference and the answer;
    ``judge.judging.tasks.correctness``)."""

    correctness: int | None = None
    """0-2 for an ok verdict, None otherwise (never a silent 0)."""


# --- the stability check's report ------------------------------------------------------------

Variant = Literal["reversed", "shuffled", "injection_en", "injection_ja"]
VARIANTS: tuple[Variant, ...] = ("reversed", "shuffled", "injection_en", "injection_ja")


@dataclass(frozen=True, slots=True)
class Count:
    """``k`` of ``n`` (``judge.report.stability`` shows it as "k/n (p %)")."""

    k: int
    n: int

    @property
    def share(self) -> float | None:
        return self.k / self.n if self.n else None


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
    changed: dict[Axis, Count]
    """Per axis: pairs whose score differs."""
    moved_up: dict[Axis, Count]
    """Per axis: pairs whose score is higher in the variant."""
    became_full: Count
    """Pairs whose original was below 2/2 (the n) and whose variant is 2/2 (the k)."""


@dataclass(frozen=True, slots=True)
class VariantFlip:
    """A verdict that a variant changed: one pair whose scores differ (the variant's
    counterpart of ``judge.results.flips.Flip``, a verdict that changed between two runs)."""

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
class FlaggedVerdict:
    """A verdict of the check with review flags (its own, or the instruction detector's)."""

    question_id: str
    status: str
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class VariantFlags:
    """The flagged verdicts of the originals (``variant`` None) or of one variant."""

    variant: Variant | None
    judged: int
    """Verdicts of this variant, whatever their status (the n of the flagged share)."""
    flagged: tuple[FlaggedVerdict, ...]

    @property
    def count(self) -> Count:
        return Count(len(self.flagged), self.judged)


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
    """The question types of the sample, in the configured order (then golden order)."""
    rows: tuple[VariantRow, ...]
    """Per variant: each question type (in ``types`` order), then ``all``."""
    flips: tuple[VariantFlip, ...]
    """Every pair whose scores differ, variant by variant, in sample order."""
    failures: tuple[Failure, ...]
    verdicts: int
    """Verdicts the check used (originals and variants)."""
    from_cache: int
    elapsed_s: float
    flags: tuple[VariantFlags, ...] = ()
    """The flagged verdicts: the originals', then each variant's (``VARIANTS`` order)."""

    def row(self, variant: Variant, question_type: str = ALL) -> VariantRow:
        return next(
            r for r in self.rows if r.variant == variant and r.question_type == question_type
        )
