"""What a verdict's evidence is, and an answer cut at its judged sentences: said in the same
words by report.md, ``judge show`` and ``review.html``.

A quote is text the judge wrote, searched for in the chunks afterwards; a cited sentence is one
the judge picked by number, real by construction (``evidence_origin`` says what each proves).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from judge.judging.types import ContextChunk, EvidenceMatch, SentenceCheck, Verdict

#: Said wherever a cited sentence is shown: the judge picked it by number from the context the
#: prompt numbered, so its text is real; nothing checks that it backs the score.
CITED_CAVEAT = "real by construction; whether it supports the verdict is the reviewer's call"
SENTENCES_CAVEAT = (
    "real by construction; whether each supports its answer sentence is the reviewer's call"
)

#: An answer sentence's verdict in words, with the sign the terminal and the page use.
SENTENCE_WORDS = {
    "supported": "✓ supported",
    "unsupported": "✗ unsupported",
    "no_claim": "· no claim",
}

Tag = TypeVar("Tag")


def evidence_origin(verdict: Verdict) -> str:
    """Which mode produced the verdict's evidence and what that proves ("" when not ok).

    A quote is text the judge wrote, searched for in the chunks afterwards: "verified" means it
    was found (exact or normalised), and only that. A cited sentence is one the judge picked by
    number, so its text is real whatever the judge meant, and finding it proves nothing about
    support: the words say so instead of calling it verified; it is named by the number the
    prompt showed it under. A lexical-baseline quote says what it is in the judge line.
    """
    if verdict.status != "ok":
        return ""
    if verdict.mode == "sentences":
        checks = verdict.sentences or ()
        if not checks:
            return "sentence by sentence: no answer sentence with a claim to check"
        cited = sum(1 for s in checks if s.evidence is not None and s.evidence.cited)
        return (
            f"sentence by sentence: {cited} of {len(checks)} answer sentences cite a context "
            f"sentence ({SENTENCES_CAVEAT})"
        )
    match = verdict.match
    if match is not None and match.cited:
        return f"{cited_name(match)} ({CITED_CAVEAT})"
    if verdict.mode == "cited":
        kind = match.kind.replace("_", " ") if match else "none"
        return "no sentence cited" if kind in ("empty", "none") else f"no sentence cited ({kind})"
    if match is None:
        return "quote (not checked)"
    if match.kind == "empty":
        return "no quote"
    if match.found:
        return f"quote (verified: {match.kind})"
    if match.kind == "partial":
        return f"quote (not verified: partly found, {match.coverage:.0%})"
    return f"quote (not verified: {match.kind.replace('_', ' ')})"


def cited_name(match: EvidenceMatch) -> str:
    """A cited context sentence by its number and chunk ("cited sentence 7 in backup/restore"),
    or by chunk and character span when the match has no number."""
    number = match.sentence
    where = f" in {match.chunk_id}" if match.chunk_id else ""
    if number is not None:
        return f"cited sentence {number}{where}"
    span = (
        f", characters {match.start}–{match.end}"
        if match.start is not None and match.end is not None
        else ""
    )
    return f"cited sentence{where}{span}"


def evidence_summary(verdicts: Sequence[Verdict]) -> str | None:
    """One line on how the run's evidence was produced, per mode (None without ok verdicts)."""
    ok = [v for v in verdicts if v.status == "ok"]
    parts = []
    quotes = [v for v in ok if v.mode == "quote"]
    if quotes:
        found = sum(1 for v in quotes if v.match is not None and v.match.found)
        parts.append(
            f"quotes written by the judge and searched for in the chunks: {found} of "
            f"{len(quotes)} verified (found exact or normalised)"
        )
    cited = [v for v in ok if v.mode == "cited"]
    if cited:
        pointing = sum(1 for v in cited if v.match is not None and v.match.cited)
        parts.append(
            f"sentences cited by number: {pointing} of {len(cited)} verdicts cite a context "
            f"sentence ({CITED_CAVEAT})"
        )
    by_sentence = [v for v in ok if v.mode == "sentences"]
    if by_sentence:
        checks = [s for v in by_sentence for s in v.sentences or ()]
        bad = sum(1 for s in checks if s.verdict == "unsupported")
        verdicts_word = "verdict" if len(by_sentence) == 1 else "verdicts"
        parts.append(
            f"sentence by sentence: {bad} of {len(checks)} answer sentences unsupported in "
            f"{len(by_sentence)} {verdicts_word}; supported ones cite a context sentence "
            f"({SENTENCES_CAVEAT})"
        )
    return "; ".join(parts) if parts else None


def unsupported_marker(check: SentenceCheck) -> str:
    """The textual mark of an unsupported sentence, readable without colour: ``[✗2 unsupported]``."""
    return f"[✗{check.n} unsupported]"


def cut_at_spans(text: str, spans: Sequence[tuple[int, int, Tag]]) -> list[tuple[str, Tag | None]]:
    """``text`` in pieces: each span's text with its tag, the text between spans untagged.

    Spans come from the judge's reply, so they are not trusted to fit: taken in order of their
    start, one that overlaps an earlier one, is empty or lies outside the text is left out (its
    text stays plain). The pieces always join back to exactly ``text``: a bad span can lose a
    marking, never a character.
    """
    pieces: list[tuple[str, Tag | None]] = []
    at = 0
    for start, end, tag in sorted(spans, key=lambda span: (span[0], span[1])):
        if start < at or end <= start or end > len(text):
            continue
        if start > at:
            pieces.append((text[at:start], None))
        pieces.append((text[start:end], tag))
        at = end
    if at < len(text):
        pieces.append((text[at:], None))
    return pieces


def answer_pieces(
    answer: str, sentences: Sequence[SentenceCheck]
) -> list[tuple[str, SentenceCheck | None]]:
    """The answer cut at its judged sentences' spans, the text between them kept."""
    return cut_at_spans(answer, [(s.start, s.end, s) for s in sentences])


def cited_pieces(
    chunk: ContextChunk, sentences: Sequence[SentenceCheck]
) -> list[tuple[str, tuple[int, ...] | None]]:
    """A chunk's text cut at the context sentences that supported answer sentences cite, each
    with the numbers of the answer sentences citing it (two may cite the same one)."""
    citing: dict[tuple[int, int], list[int]] = {}
    for check in sentences:
        match = check.evidence
        if (
            check.verdict == "supported"
            and match is not None
            and match.cited
            and match.chunk_id == chunk.chunk_id
            and match.start is not None
            and match.end is not None
        ):
            citing.setdefault((match.start, match.end), []).append(check.n)
    return cut_at_spans(chunk.text, [(a, b, tuple(ns)) for (a, b), ns in citing.items()])
