"""Mechanical checks of proposed golden questions, before a person reads one (issue 38).

Every candidate (``judge.inputs.candidates.Candidate``) goes through every check; each failed
check adds a reason ``check: detail`` to ``rejected`` (a rejected candidate is kept in the file
with its reasons, never silently dropped or retyped):

- ``no_question``: the question has fewer than ``MIN_QUESTION_CHARS`` letters or digits (a
  small model's ``"..."``);
- ``type``: its type is not a configured question type, or its fields contradict it (an
  out-of-scope candidate with chunks, an answerable one citing none);
- ``chunk_missing``: a cited chunk is not in the corpus;
- ``span_absent``: a drafted factual, procedural or negative candidate whose answer span is not
  in its cited chunk (``judge.judging.evidence.verify_quote``: exact or normalised, JA and EN;
  a partial match or a span under ``MIN_QUOTE_CHARS`` is absent). A factual draft whose span is
  absent is rejected, not retyped;
- ``limit_not_relevant``: a negative candidate's limiting chunk is not graded relevant
  (grade ≥ ``RELEVANT_GRADE``) for the question;
- ``answered_by_corpus``: an out-of-scope candidate for which one of the whole corpus's top
  ``OUT_OF_SCOPE_DEPTH`` chunks (``LexicalIndex``: BM25 over the lexical judge's tokens) is
  graded relevant (by the lexical rule: graded ``LEXICAL_ANSWERS``): the corpus answers it;
- ``leak``: its text (letters and digits, normalised, at least ``LEAK_MIN_CHARS``) appears in a
  chunk: a question copied from the corpus makes retrieval look better than it is;
- ``covered``: a golden question is as similar as ``NEAR_DUPLICATE`` or more;
- ``duplicate``: an earlier candidate that passed is as similar as that (the first, in rank
  order, is kept).

Similarity is the Dice coefficient of character trigrams of the normalised text, letters and
digits only (``similarity``): no word boundaries needed, so Japanese and English alike. On the
shipped samples two different golden questions score at most 0.35 (JA) and 0.25 (EN); a copy
with its punctuation changed or one character edited scores 0.9 or more; ``NEAR_DUPLICATE`` is
0.7, between the two (two short questions sharing a long template, "…について教えてください",
can reach 0.6).

The grades come from the caller (``judge.pipeline.propose``: the judge's chunk task when chunk
grades are on, else the lexical judge's rule), keyed by (question text, chunk id).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from judge.inputs.candidates import Candidate
from judge.inputs.golden import LEAK_MIN_CHARS, Chunk, GoldenQuestion
from judge.judging.evidence import verify_quote
from judge.judging.types import ContextChunk
from judge.results.chunk_grades import RELEVANT_GRADE
from judge.textnorm import lexical_tokens, normalise

#: Similarity from which two questions are the same question (module docstring).
NEAR_DUPLICATE: Final = 0.7
#: How many of the corpus's top chunks an out-of-scope candidate is checked against.
OUT_OF_SCOPE_DEPTH: Final = 5
#: The grade from which the lexical rule's grade says a chunk answers an out-of-scope
#: candidate: its 2 is a quarter of the question's tokens, which a chunk about the same
#: product reaches without answering (the judge's grades use ``RELEVANT_GRADE``).
LEXICAL_ANSWERS: Final = 3
#: Fewer letters and digits than this is no question ("...", "?").
MIN_QUESTION_CHARS: Final = 3
#: The character n-gram of ``similarity``.
NGRAM: Final = 3

#: (question text, chunk id) → grade 0-3.
Grades = Mapping[tuple[str, str], int]


def letters(text: str) -> str:
    """``text`` normalised (``textnorm.normalise``), letters and digits only."""
    return "".join(c for c in normalise(text) if unicodedata.category(c)[0] in "LN")


def grams(text: str) -> frozenset[str]:
    """The character trigrams of ``letters(text)`` (the text itself when shorter)."""
    core = letters(text)
    return frozenset(core[i : i + NGRAM] for i in range(max(1, len(core) - NGRAM + 1)))


def similarity(a: str | frozenset[str], b: str | frozenset[str]) -> float:
    """Dice coefficient of the two texts' trigrams: 1.0 the same letters, 0.0 none shared."""
    first = grams(a) if isinstance(a, str) else a
    second = grams(b) if isinstance(b, str) else b
    if not first or not second:
        return 0.0
    return 2 * len(first & second) / (len(first) + len(second))


def most_similar(text: str, others: Iterable[tuple[str, str]]) -> tuple[str, float]:
    """The id and similarity of the most similar of ``others`` (id, text); ``("", 0.0)``."""
    mine = grams(text)
    best = ("", 0.0)
    for other_id, other in others:
        score = similarity(mine, other)
        if score > best[1]:
            best = (other_id, score)
    return best


def counted_tokens(text: str) -> list[str]:
    """The lexical judge's tokens without the all-hiragana ones (particles and endings)."""
    return [t for t in lexical_tokens(text) if not all("\u3040" <= c <= "\u309f" for c in t)]


class LexicalIndex:
    """BM25 (k1 1.2, b 0.75) over the corpus's ``counted_tokens``: the model-free retriever
    that the out-of-scope check searches the whole corpus with."""

    def __init__(self, corpus: Mapping[str, Chunk]) -> None:
        self.docs = {cid: Counter(counted_tokens(c.text)) for cid, c in corpus.items()}
        self.lengths = {cid: sum(tf.values()) for cid, tf in self.docs.items()}
        count = len(self.docs) or 1
        self.average = sum(self.lengths.values()) / count or 1.0
        seen = Counter(token for tf in self.docs.values() for token in tf)
        self.idf = {t: math.log(1 + (count - n + 0.5) / (n + 0.5)) for t, n in seen.items()}

    def top(self, text: str, k: int) -> list[str]:
        """The ``k`` chunk ids scoring highest for ``text`` (any score above 0), best first."""
        query = set(counted_tokens(text))
        scored = []
        for cid, tf in self.docs.items():
            score = 0.0
            norm = 1.2 * (0.25 + 0.75 * self.lengths[cid] / self.average)
            for token in query & tf.keys():
                score += self.idf[token] * tf[token] * 2.2 / (tf[token] + norm)
            if score > 0:
                scored.append((-score, cid))
        return [cid for _, cid in sorted(scored)[:k]]


def grade_pairs(
    candidates: Sequence[Candidate], index: LexicalIndex, out_of_scope: Sequence[str]
) -> list[tuple[str, str]]:
    """The (question, chunk id) pairs verification needs graded: each out-of-scope candidate's
    top chunks in the whole corpus, each negative candidate's limiting chunk."""
    pairs: dict[tuple[str, str], None] = {}
    for c in candidates:
        if c.type in out_of_scope:
            for cid in index.top(c.question, OUT_OF_SCOPE_DEPTH):
                pairs[(c.question, cid)] = None
        elif c.type == "negative":
            for cid in c.relevant_chunks or ():
                pairs[(c.question, cid)] = None
    return list(pairs)


def _chunk_checks(
    c: Candidate,
    corpus: Mapping[str, Chunk],
    grades: Grades,
    index: LexicalIndex,
    out_of_scope: Sequence[str],
    answers_from: int,
) -> list[str]:
    """The reasons of the checks on a candidate's chunks: the span, the limit, the corpus."""
    reasons = []
    chunks = c.relevant_chunks or ()
    for cid in chunks:
        if cid not in corpus:
            reasons.append(f"chunk_missing: '{cid}' is not in the corpus")
    if c.source == "corpus" and c.answerable and chunks and not reasons:
        context = [ContextChunk(1, cid, corpus[cid].text) for cid in chunks]
        match = verify_quote(c.answer_span, context)
        if match.kind not in ("exact", "normalised"):
            reasons.append(
                f"span_absent: the {c.type} answer span is not in {', '.join(chunks)} "
                f"({match.kind}, {match.coverage:.0%} found)"
            )
    if c.type == "negative" and chunks and not reasons:
        graded = [grades.get((c.question, cid)) for cid in chunks]
        if not any(g is not None and g >= RELEVANT_GRADE for g in graded):
            reasons.append(
                f"limit_not_relevant: the limiting chunk {chunks[0]} is graded {graded[0]} "
                f"for the question (relevant is {RELEVANT_GRADE}+)"
            )
    if c.type in out_of_scope:
        for cid in index.top(c.question, OUT_OF_SCOPE_DEPTH):
            grade = grades.get((c.question, cid))
            if grade is not None and grade >= answers_from:
                reasons.append(f"answered_by_corpus: {cid} is graded {grade} for the question")
                break
    return reasons


def _type_checks(c: Candidate, types: Sequence[str], out_of_scope: Sequence[str]) -> list[str]:
    if len(letters(c.question)) < MIN_QUESTION_CHARS:
        return [f"no_question: {c.question!r} has fewer than {MIN_QUESTION_CHARS} letters"]
    if c.type not in types:
        return [f"type: '{c.type}' is not one of {', '.join(types)}"]
    if c.type in out_of_scope and (c.answerable or c.relevant_chunks):
        return [f"type: an {c.type} question cites no chunk and is not answerable"]
    if c.type not in out_of_scope and not c.answerable:
        return [f"type: a {c.type} question is answerable"]
    if c.source == "corpus" and c.answerable and not c.relevant_chunks:
        return [f"type: a drafted {c.type} question cites its chunk"]
    return []


def leaked_in(question: str, corpus_letters: Mapping[str, str]) -> str | None:
    """The first chunk whose text holds ``question`` (``letters``), or None (too short)."""
    text = letters(question)
    if len(text) < LEAK_MIN_CHARS:
        return None
    return next((cid for cid, chunk in corpus_letters.items() if text in chunk), None)


def verify(
    candidates: Sequence[Candidate],
    corpus: Mapping[str, Chunk],
    golden: Sequence[GoldenQuestion],
    grades: Grades,
    types: Sequence[str],
    out_of_scope: Sequence[str],
    answers_from: int = RELEVANT_GRADE,
) -> list[Candidate]:
    """Each candidate with the reasons of every check it failed (module docstring), in order;
    a candidate is compared for duplicates with the earlier ones that passed. ``answers_from``:
    the grade from which a chunk answers an out-of-scope candidate (``LEXICAL_ANSWERS`` for
    the lexical rule's grades)."""
    index = LexicalIndex(corpus)
    corpus_letters = {cid: letters(chunk.text) for cid, chunk in corpus.items()}
    golden_texts = [(q.id, q.question) for q in golden]
    kept: list[tuple[str, str]] = []
    out = []
    for c in candidates:
        reasons = _type_checks(c, types, out_of_scope)
        reasons += _chunk_checks(c, corpus, grades, index, out_of_scope, answers_from)
        leak = leaked_in(c.question, corpus_letters)
        if leak is not None:
            reasons.append(f"leak: the question's text appears in {leak}")
        qid, score = most_similar(c.question, golden_texts)
        if score >= NEAR_DUPLICATE:
            reasons.append(f"covered: golden {qid} is {score:.2f} similar")
        other, score = most_similar(c.question, kept)
        if score >= NEAR_DUPLICATE:
            reasons.append(f"duplicate: candidate {other} is {score:.2f} similar")
        if not reasons:
            kept.append((c.candidate_id, c.question))
        out.append(c.model_copy(update={"rejected": (*c.rejected, *reasons)}))
    return out
