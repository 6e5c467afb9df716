"""Verify the judge's evidence quote against the chunks it was shown.

The quote is searched chunk by chunk, in rank order, and the first rule that matches wins:

- ``exact``: the quote (ends stripped) occurs verbatim in a chunk;
- ``normalised``: it occurs after normalising both sides (``textnorm``: NFKC, case folding,
  quote and bracket marks and all whitespace removed), which needs no word boundaries, so
  Japanese works;
- ``partial``: the longest run of the normalised quote found in one chunk covers at least
  ``PARTIAL_MIN_COVERAGE`` (90 %) of the normalised quote: a quote with a changed particle or a
  dropped word at one end still points at its sentence;
- ``absent``: none of the above (``coverage`` keeps the best share found);
- ``too_short``: under ``MIN_QUOTE_CHARS`` normalised characters: "1" or "はい" occurs in
  almost any chunk, so finding it proves nothing (small judges do quote like that);
- ``empty``: the judge quoted nothing (fine for a correct refusal).

For every match the chunk id and the character span ``[start, end)`` in the *original* chunk
text are recorded, so a reviewer's page can highlight exactly what was matched.

Evidence by number (the ``cited`` and ``sentences`` prompt modes) needs no search: the prompt
shows the chunks as numbered sentences (``context_sentences``: ``textnorm.split_sentences`` per
chunk, numbered 1, 2, ... across all chunks in rank order, each with its span in its chunk), the
judge answers with a number, and ``cite`` turns the number back into that sentence's chunk id
and span (kind ``cited``). A cited sentence is in the context by construction, so it is never
"found" (``EvidenceMatch.found``): whether it supports the verdict is still the reviewer's call.
Answers are numbered the same way (``answer_sentences``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import NamedTuple

from judge.judging.types import ContextChunk, EvidenceMatch
from judge.textnorm import (
    is_mark,
    normalise,
    normalise_with_offsets,
    original_span,
    split_sentences,
)

#: Bump when the rules change; recorded in every report.
VERIFIER_VERSION = 1
PARTIAL_MIN_COVERAGE = 0.9
MIN_QUOTE_CHARS = 8


@functools.lru_cache(maxsize=4096)
def _normalised_chunk(text: str) -> tuple[str, tuple[int, ...]]:
    """A chunk's normalised text and offsets, once per chunk rather than once per quote: the
    same chunks are shown with many items (an immutable tuple, as it is shared)."""
    normalised, offsets = normalise_with_offsets(text)
    return normalised, tuple(offsets)


def verify_quote(quote: str, context: Sequence[ContextChunk]) -> EvidenceMatch:
    """Find ``quote`` in ``context`` (see module docstring for the rules)."""
    stripped = quote.strip()
    if not stripped:
        return EvidenceMatch(kind="empty")
    target = normalise(stripped)
    if len(target) < MIN_QUOTE_CHARS:
        return EvidenceMatch(kind="too_short")
    for chunk in context:
        start = chunk.text.find(stripped)
        while start >= 0:
            end = start + len(stripped)
            # Not a match if it ends inside a character: "ﾊﾞｯｸｱｯﾌ" is not in "ﾊﾞｯｸｱｯﾌﾟ".
            if end == len(chunk.text) or not is_mark(chunk.text[end]):
                return EvidenceMatch(
                    kind="exact", chunk_id=chunk.chunk_id, start=start, end=end, coverage=1.0
                )
            start = chunk.text.find(stripped, start + 1)
    normalised = [(chunk, *_normalised_chunk(chunk.text)) for chunk in context]
    for chunk, text, offsets in normalised:
        index = text.find(target)
        if index >= 0:
            start, end = original_span(chunk.text, offsets, index, index + len(target))
            return EvidenceMatch(
                kind="normalised", chunk_id=chunk.chunk_id, start=start, end=end, coverage=1.0
            )
    best: tuple[float, ContextChunk | None, int, int, tuple[int, ...]] = (0.0, None, 0, 0, ())
    for chunk, text, offsets in normalised:
        if not text:
            continue
        match = SequenceMatcher(None, text, target, autojunk=False).find_longest_match(
            0, len(text), 0, len(target)
        )
        coverage = match.size / len(target)
        if coverage > best[0]:
            best = (coverage, chunk, match.a, match.a + match.size, offsets)
    coverage, best_chunk, begin, stop, offsets = best
    if best_chunk is not None and coverage >= PARTIAL_MIN_COVERAGE:
        start, end = original_span(best_chunk.text, offsets, begin, stop)
        return EvidenceMatch(
            kind="partial",
            chunk_id=best_chunk.chunk_id,
            start=start,
            end=end,
            coverage=round(coverage, 4),
        )
    return EvidenceMatch(kind="absent", coverage=round(coverage, 4))


# --- evidence by sentence number -------------------------------------------------------------


class Sentence(NamedTuple):
    """One sentence of a text, numbered, with its span ``[start, end)`` in that text.

    ``text`` is ``split_sentences``' text: the span's text except that a step number joined to
    its sentence ("1." and "設定を開きます" on two lines) is joined by one space.
    """

    n: int
    """1-based, as the prompt shows it."""
    text: str
    start: int
    end: int
    chunk_id: str | None = None
    """The chunk it comes from (context sentences); None for an answer's sentences."""


@functools.lru_cache(maxsize=4096)
def sentence_spans(text: str) -> tuple[tuple[str, int, int], ...]:
    """``split_sentences(text)``, each with its span in ``text``.

    Each sentence is looked for from the end of the previous one, its words in order with any
    whitespace between them (``split_sentences`` strips each sentence and joins a bare step
    number to the next line with one space). Cached: the same chunk is numbered for every
    prompt and every verdict that shows it.
    """
    spans: list[tuple[str, int, int]] = []
    position = 0
    for sentence in split_sentences(text):
        pattern = r"\s*".join(re.escape(word) for word in sentence.split())
        found = re.compile(pattern).search(text, position)
        if found is None:  # cannot happen for split_sentences' own output; never a wrong span
            raise ValueError(f"sentence {sentence!r} not found in its text after {position}")
        spans.append((sentence, found.start(), found.end()))
        position = found.end()
    return tuple(spans)


def answer_sentences(answer: str) -> list[Sentence]:
    """The answer's sentences, numbered from 1 (what ``$answer_sentences`` shows)."""
    return [
        Sentence(n, text, start, end)
        for n, (text, start, end) in enumerate(sentence_spans(answer), start=1)
    ]


def context_sentences(context: Sequence[ContextChunk]) -> list[Sentence]:
    """The chunks' sentences, numbered from 1 across all chunks in rank (list) order (what
    ``$context_sentences`` shows, and what a cited number refers to)."""
    numbered: list[Sentence] = []
    for chunk in context:
        for text, start, end in sentence_spans(chunk.text):
            numbered.append(Sentence(len(numbered) + 1, text, start, end, chunk.chunk_id))
    return numbered


def cite(sentence: Sentence) -> EvidenceMatch:
    """The evidence of a cited context sentence: its chunk and span, kind ``cited``."""
    return EvidenceMatch(
        kind="cited",
        chunk_id=sentence.chunk_id,
        start=sentence.start,
        end=sentence.end,
        coverage=1.0,
        sentence=sentence.n,
    )
