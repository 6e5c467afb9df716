"""Where an answer went wrong: one diagnosis per golden question, by one rule, in one place.

The article this project learns from found that most wrong answers were retrieval misses, not
generation failures, and that prompt tweaks were wasted until the two layers were told apart.
The per-type tables measure both layers side by side; the diagnosis says, answer by answer,
which one failed. It is computed once per question (``judge.record.rows``, into
``judge.record.model.QuestionRow.diagnosis``); every view (report.md, the console, report.json,
review.html) reads that field and none derives it again.

The rule, first match wins:

===========================  ================================================================
diagnosis                    when
===========================  ================================================================
``not judged``               no answer (the adapter failed) or no ok verdict (``parse_error``,
                             ``backend_error``, ``truncated``, not judged at all)
*out-of-scope types* (``data.out_of_scope_types``): the answer should refuse
``ok``                       the answer refuses
``answered out of scope``    it does not
*answerable types*
``over-refusal``             the answer refuses although a relevant chunk was among the
                             ``context_k`` chunks the generator saw (whatever the scores)
*what the harness knows* (``known_failure``: an answer, not a refusal, to a labelled question),
whatever the scores
``retrieval miss``           no relevant chunk among the ``context_k`` chunks: the answer cannot
                             rest on one
``generation``               a relevant chunk in context, but the judge's evidence comes from
                             another chunk: the generator answered from the wrong chunk
``ok``                       full marks (faithfulness 2, relevance 2)
``unknown retrieval``        the golden set lists no relevant chunks for it (``null`` or empty):
                             which layer failed cannot be told
``retrieval miss``           no relevant chunk among the ``context_k`` chunks, below full marks;
                             also an answer that came with no chunk at all (closed-book: labels
                             or not, nothing was retrieved for it, and its faithfulness was
                             judged against nothing; the run warns, ``closed_book``)
``generation``               a relevant chunk was in context, and the answer is below full
                             marks: not faithful or not relevant to what it was given
*with a correctness verdict* (``judge.correctness.enabled``; an ok verdict on 0-2): an answer
at full marks that is wrong against the reference answer (correctness 0, or 1)
``wrong per reference``      a relevant chunk was in context: the generator had the facts and
                             still said something else than the reference (generation layer)
``retrieval miss``           no relevant chunk in context: the answer is faithful to chunks
                             that did not hold the reference's facts
``unknown retrieval``        no chunk labels: which layer failed cannot be told
``ok``                       correctness 2 (or no ok correctness verdict: nothing changes)
===========================  ================================================================

Correctness only ever turns an ``ok`` into a failure: an answer below full marks already has
its diagnosis (the judge's faithfulness and relevance say what went wrong first), and an
out-of-scope type keeps its rule (a refusal is the correct answer, whatever the reference
says). The layer follows the module's one test of retrieval (``relevant_in_context``), as for
an answer below full marks: a hit means the retrieved chunks held what the reference says, so
the generator is to fix; a miss is retrieval's. Without a correctness verdict (off, not asked
because the question has no reference answer, or not ok) nothing changes.

"The chunks the generator saw" are the item's context: the run's top ``context_k`` chunks in
rank order, exactly what the judge was shown (``judge.judging.items.context_for``).

A refusal is recognised by ``judge.textnorm.is_refusal`` with the phrases the lexical judge
uses (``judge.lexical.refusal_phrases``, default ``judge.textnorm.REFUSAL_MARKERS``: 「記載が
ありません」, 「お答えできません」, "does not cover", "I don't know", ...), matched after
normalising both (NFKC, case folding, quote marks and whitespace dropped) and only where a
refusal stands (``judge.textnorm.refusal_match``: "The Day Pass does not cover the e-bike
surcharge" is an answer). A phrase list is a tripwire, not an understanding: a refusal in words
the list lacks counts as an answer (add the phrase to ``judge.lexical.refusal_phrases``).

Per type (``summarise``): the counts and shares of each diagnosis and one sentence that says
which layer to fix first. The layers are retrieval (``retrieval miss``) and generation
(``generation``, ``wrong per reference``, ``over-refusal``, ``answered out of scope``: the
generator had what it needed,
or should have refused); ``unknown retrieval`` asks for chunk labels first, ``not judged`` for
the judge or the adapter. The layer with more answers that went wrong is to be fixed first; a
tie goes to retrieval, because the generator cannot use a chunk it never saw.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple, get_args

from judge.judging.types import CorrectnessVerdict, Verdict
from judge.results.item_record import ItemRecord
from judge.textnorm import REFUSAL_MARKERS, is_refusal

Diagnosis = Literal[
    "ok",
    "retrieval miss",
    "generation",
    "wrong per reference",
    "answered out of scope",
    "over-refusal",
    "not judged",
    "unknown retrieval",
]
#: Every diagnosis, in the order of every count and filter (the literal's own order: one list).
DIAGNOSES: tuple[Diagnosis, ...] = get_args(Diagnosis)
#: The diagnoses only a correctness verdict can give (a view leaves their column out of a run
#: without correctness).
CORRECTNESS_DIAGNOSES: tuple[Diagnosis, ...] = ("wrong per reference",)

#: The diagnoses that are the generator's to fix: it had what it needed, or should have refused.
GENERATION_LAYER: tuple[Diagnosis, ...] = (
    "generation",
    "wrong per reference",
    "over-refusal",
    "answered out of scope",
)
#: The diagnoses of an answer that went wrong (neither ok nor unjudged).
WENT_WRONG: tuple[Diagnosis, ...] = (
    "retrieval miss",
    *GENERATION_LAYER,
    "unknown retrieval",
)


def relevant_in_context(item: ItemRecord) -> bool | None:
    """Whether a relevant chunk was among the chunks the generator saw (None: no chunk labels).
    No chunk at all is a miss whatever the labels: nothing relevant can be in an empty context,
    and "label the chunks first" would be the wrong advice for a closed-book answer."""
    if not item.context:
        return False
    if not item.relevant_chunks:
        return None
    relevant = set(item.relevant_chunks)
    return any(chunk.chunk_id in relevant for chunk in item.context)


def diagnose(
    item: ItemRecord | None,
    verdict: Verdict | None,
    *,
    out_of_scope: bool,
    refusal_phrases: Sequence[str] = REFUSAL_MARKERS,
    correctness: CorrectnessVerdict | None = None,
) -> Diagnosis:
    """The diagnosis of one golden question (the rule: the module docstring).

    ``out_of_scope``: the question's type is one of ``data.out_of_scope_types``.
    ``correctness``: its correctness verdict, if the run judged one (only an ok one counts).
    """
    if item is None or verdict is None or verdict.status != "ok":
        return "not judged"
    if verdict.faithfulness is None or verdict.relevance is None:
        return "not judged"
    refuses = is_refusal(item.answer, refusal_phrases)
    if out_of_scope:
        return "ok" if refuses else "answered out of scope"
    in_context = relevant_in_context(item)
    if refuses and in_context:
        return "over-refusal"
    if not refuses and (known := known_failure(item, verdict, in_context)) is not None:
        return known
    if verdict.faithfulness == 2 and verdict.relevance == 2:
        if not wrong_per_reference(correctness):
            return "ok"
        if in_context:
            return "wrong per reference"
    if in_context is None:
        return "unknown retrieval"
    return "generation" if in_context else "retrieval miss"


def known_failure(item: ItemRecord, verdict: Verdict, in_context: bool | None) -> Diagnosis | None:
    """What the harness knows of an answer (not a refusal) to an answerable, labelled question,
    whatever the judge's scores: with no relevant chunk among the chunks the generator saw, its
    answer cannot rest on one (``retrieval miss``: the chunk it rests on is at best a missing
    label); with one there, evidence the judge took from another chunk of the context (the
    review queue's ``foreign_quote``) means the generator answered from the wrong chunk
    (``generation``). None: the judge's scores decide."""
    if in_context is None:
        return None
    if not in_context:
        return "retrieval miss"
    match = verdict.match
    golden = set(item.relevant_chunks or ())
    if match is not None and match.chunk_id is not None and match.chunk_id not in golden:
        return "generation"
    return None


def wrong_per_reference(correctness: CorrectnessVerdict | None) -> bool:
    """An ok correctness verdict below 2: the answer is wrong (0) or partly wrong (1) against
    the reference answer."""
    return (
        correctness is not None
        and correctness.status == "ok"
        and correctness.correctness is not None
        and correctness.correctness < 2
    )


class TypeDiagnosis(NamedTuple):
    """One question type's diagnoses: counts in ``DIAGNOSES`` order and what to fix first."""

    type: str
    counts: dict[Diagnosis, int]
    """Every diagnosis (0 included), in ``DIAGNOSES`` order."""
    total: int
    """Golden questions of the type (every diagnosis counted)."""
    fix_first: Literal["retrieval", "generation", "labels", "nothing"]
    sentence: str
    """Which layer to fix first, in one sentence with its numbers."""

    def share(self, diagnosis: Diagnosis) -> float | None:
        """The share of the type's questions with ``diagnosis`` (None for an empty type)."""
        return self.counts[diagnosis] / self.total if self.total else None

    @property
    def went_wrong(self) -> int:
        return sum(self.counts[d] for d in WENT_WRONG)


def _sentence(
    name: str, counts: dict[Diagnosis, int], context_k: int, out_of_scope: bool
) -> tuple[Literal["retrieval", "generation", "labels", "nothing"], str]:
    wrong = sum(counts[d] for d in WENT_WRONG)
    retrieval = counts["retrieval miss"]
    generation = sum(counts[d] for d in GENERATION_LAYER)
    unknown = counts["unknown retrieval"]
    unjudged = counts["not judged"]
    tail = f"; {unjudged} not judged (see the judge and the adapter)" if unjudged else ""
    if wrong == 0:
        judged = sum(counts.values()) - unjudged
        return "nothing", f"{name}: all {judged} judged answers ok: nothing to fix{tail}"
    if out_of_scope:
        return "generation", (
            f"{name}: {counts['answered out of scope']} of {sum(counts.values()) - unjudged} "
            f"questions were answered instead of refused: fix generation first (it should say "
            f"the documents do not cover them){tail}"
        )
    of = f"{name}: of {wrong} answers that went wrong"
    if unknown > retrieval and unknown > generation:
        return "labels", (
            f"{of}, {unknown} have no chunk labels, so the failing layer cannot be told: label "
            f"their relevant_chunks first{tail}"
        )
    kinds = [d for d in GENERATION_LAYER if counts[d]]
    detail = (
        ""
        if kinds in ([], ["generation"])
        else f" ({', '.join(f'{counts[d]} {d}' for d in kinds)})"
    )
    parts = [
        f"{retrieval} had no relevant chunk among the {context_k} the generator saw",
        f"{generation} had one and the answer fell short{detail}",
    ]
    if unknown:
        parts.append(f"{unknown} have no chunk labels")
    layer: Literal["retrieval", "generation"] = (
        "retrieval" if retrieval >= generation else "generation"
    )
    return layer, f"{of}, {', '.join(parts)}: fix {layer} first{tail}"


def summarise(
    rows: Iterable[tuple[str, Diagnosis]],
    types: Sequence[str],
    out_of_scope_types: Sequence[str],
    context_k: int,
) -> list[TypeDiagnosis]:
    """Per question type (in ``types`` order, then any other type in the order met; types with
    no question left out): the counts of each diagnosis and the sentence on what to fix first.

    ``rows``: (question type, diagnosis), one per golden question.
    """
    by_type: dict[str, dict[Diagnosis, int]] = {t: dict.fromkeys(DIAGNOSES, 0) for t in types}
    for question_type, diagnosis in rows:
        by_type.setdefault(question_type, dict.fromkeys(DIAGNOSES, 0))[diagnosis] += 1
    out = []
    for name, counts in by_type.items():
        total = sum(counts.values())
        if not total:
            continue
        layer, sentence = _sentence(name, counts, context_k, name in out_of_scope_types)
        out.append(TypeDiagnosis(name, counts, total, layer, sentence))
    return out


def closed_book(items: Iterable[ItemRecord]) -> str | None:
    """The run-level warning when answers came with no context chunk at all (a closed-book
    set, or a retriever that returned nothing), or None when every answer had some: their
    faithfulness was judged against nothing, and their diagnosis is a retrieval miss."""
    found = list(items)
    empty = [item.question_id for item in found if not item.context]
    if not empty:
        return None
    every = len(empty) == len(found)
    head = f"all {len(found)} answers" if every else f"{len(empty)} of {len(found)} answers"
    shown = ", ".join(empty[:5]) + (f", … ({len(empty) - 5} more)" if len(empty) > 5 else "")
    return (
        f"closed-book: {head} came with no context chunk ({shown}): their faithfulness was "
        "judged against nothing and they are diagnosed as retrieval misses; give the run's "
        "retrieved chunks with each answer, or judge them against the reference answers "
        "([judge.correctness])"
    )
