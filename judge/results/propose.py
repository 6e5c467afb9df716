"""Candidates from real users' questions (``judge golden propose --from-questions``): their
type, the chunks that answer them, and how much each adds to the golden set.

Given each question, the system's answer and ranking for it (a run, or ``None`` when it has
none) and the grades of its top chunks (the judge's chunk task, or the lexical rule):

- **relevant chunks**: the retrieved chunks among the top ``depth`` graded ≥
  ``RELEVANT_GRADE``, best grade first (rank breaks ties); ``null`` (unlabelled: a person labels
  them) when none is; ``[]`` for an out-of-scope one;
- **type**: the one the file gives, else guessed (``guess_type``) and said in ``adds``;
- **what it adds** (``ADDS``, summed into ``score``, rank order highest first): a type the
  golden set has fewer of than the article's mix (``ARTICLE_MIX``: 12 factual, 8 procedural,
  5 negative, 5 out of scope per 30), a topic (the document of its best chunk) no golden question
  is about, an answer the judge found weak, an answer the system refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from judge.hashing import tagged_hash
from judge.inputs.candidates import Candidate, UserQuestion
from judge.inputs.golden import Chunk, GoldenQuestion
from judge.inputs.runs import RunRecord
from judge.judging.tasks.draft import ARTICLE_MIX
from judge.results.candidates import Grades, counted_tokens, letters
from judge.results.chunk_grades import RELEVANT_GRADE
from judge.textnorm import is_refusal, normalise

#: The share of the system's answer a chunk must hold to be proposed without the judge's grades.
ANSWER_SUPPORT: Final = 0.5
#: What each reason a candidate adds is worth in its ``score``.
ADDS: Final = {"type": 2.0, "topic": 2.0, "weak": 1.5, "refused": 1.0}

_HOW: Final = (
    "どうやって", "どうやる", "どうすれば", "どうしたら", "方法", "手順", "やり方", "どこから",
    "すればいい", "どこを",
    "how do i", "how can i", "how to", "steps", "what do i do",
)  # fmt: skip
_YES_NO: Final = (
    "できますか", "できる?", "できる？", "ますか", "ありますか", "使えますか", "対応",
    "can i", "is it possible", "does it", "does the", "will it", "will the", "is there",
    "can the", "can my", "do you",
)  # fmt: skip
#: A numbered step at the start of a line of the answer ("1. ", "2）"): the answer is a procedure.
_STEP: Final = re.compile(r"(?m)^\s*[0-9０-９]+[.．)）]")
_NO: Final = (
    "できません", "できない", "対応していません", "非対応", "不可", "ございません",
    "not supported", "cannot", "can't", "isn't", "doesn't", "is not", "does not", "no,", "no.",
    "not possible", "won't",
)  # fmt: skip


def guess_type(question: str, answer: str | None, answered: bool, refusals: Sequence[str]) -> str:
    """A question's type from its text and the system's answer: out of scope when the system
    answered (refused, or invented an answer) and no retrieved chunk is proposed for it
    (``answered`` false), procedural for a "how do I" or an answer in numbered steps, negative
    for a yes/no question answered with a no, else factual."""
    text = normalise(question)
    if answer is not None and not answered:
        return "out_of_scope"
    if any(normalise(marker) in text for marker in _HOW) or len(_STEP.findall(answer or "")) >= 2:
        return "procedural"
    said = normalise(answer or "")
    if any(normalise(m) in text for m in _YES_NO) and any(normalise(m) in said for m in _NO):
        return "negative"
    return "factual"


def answer_support(answer: str, chunk: str) -> float:
    """The share of the answer's content tokens (``counted_tokens``) the chunk holds."""
    tokens = counted_tokens(answer)
    held = set(counted_tokens(chunk))
    return sum(token in held for token in tokens) / len(tokens) if tokens else 0.0


def relevant_of(
    question: str,
    record: RunRecord | None,
    grades: Grades | None,
    depth: int,
    corpus: Mapping[str, Chunk],
    refusals: Sequence[str],
) -> tuple[str, ...]:
    """The chunks proposed for a question: with ``grades`` (the judge's), the top ``depth``
    retrieved chunks graded ≥ ``RELEVANT_GRADE``, best grade first (rank breaks ties); without
    (model-free), the one of them holding the most of the system's answer, when it holds
    ``ANSWER_SUPPORT`` of it or more (the chunk the answer was written from; none for a refusal)."""
    if record is None or is_refusal(record.answer, refusals):
        return ()  # a refusal was written from no chunk
    top = [item.chunk_id for item in record.retrieved[:depth] if item.chunk_id in corpus]
    if grades is None:
        held = [
            (-answer_support(record.answer, corpus[cid].text), rank, cid)
            for rank, cid in enumerate(top)
        ]
        best = min(held, default=None)
        return (best[2],) if best is not None and -best[0] >= ANSWER_SUPPORT else ()
    graded = []
    for rank, cid in enumerate(top):
        grade = grades.get((question, cid))
        if grade is not None and grade >= RELEVANT_GRADE:
            graded.append((-grade, rank, cid))
    return tuple(cid for _, _, cid in sorted(graded))


def candidate_id(source: str, source_id: str, question: str) -> str:
    """A stable id: the source, the id there and the question's letters, hashed (the same
    question from the same place, the same id; two log lines asking the same thing, two)."""
    seen = {"source": source, "id": source_id, "q": letters(question)}
    return "c-" + tagged_hash(seen, 10).split(":")[-1]


def under_mix(golden: Sequence[GoldenQuestion]) -> set[str]:
    """The types of which the golden set has fewer than the article's share."""
    size = max(len(golden), 30)
    counts = {t: sum(q.type == t for q in golden) for t in ARTICLE_MIX}
    return {t for t, n in counts.items() if n < ARTICLE_MIX[t] * size / 30}


def from_questions(
    questions: Sequence[UserQuestion],
    records: Mapping[str, RunRecord],
    weak: set[str],
    grades: Grades | None,
    golden: Sequence[GoldenQuestion],
    corpus: Mapping[str, Chunk],
    depth: int,
    out_of_scope: Sequence[str],
    refusals: Sequence[str],
) -> list[Candidate]:
    """One candidate per question, unverified (``judge.results.candidates.verify`` next),
    sorted by what it adds, highest first (file order breaks ties). ``weak``: the ids whose
    answer the judge found weak; ``grades``: the judge's chunk grades (None: model-free,
    ``relevant_of``)."""
    lacking = under_mix(golden)
    covered_docs = {corpus[c].doc for q in golden for c in q.relevant_chunks or () if c in corpus}
    scored = []
    for order, user in enumerate(questions):
        record = records.get(user.id)
        chunks = relevant_of(user.question, record, grades, depth, corpus, refusals)
        answer = record.answer if record is not None else None
        kind = user.type or guess_type(user.question, answer, bool(chunks), refusals)
        unanswerable = kind in out_of_scope
        adds = [] if user.type else [f"type guessed: {kind}"]
        score = 0.0
        reasons = {
            "type": (kind in lacking, f"type: {kind} below the article's share"),
            "topic": (
                bool(chunks) and corpus[chunks[0]].doc not in covered_docs,
                f"topic: {corpus[chunks[0]].doc if chunks else ''} not yet in the golden set",
            ),
            "weak": (user.id in weak, "weak: the judge found the answer weak"),
            "refused": (
                answer is not None and is_refusal(answer, refusals),
                "refused: the system refused to answer",
            ),
        }
        for name, (holds, said) in reasons.items():
            if holds:
                score += ADDS[name]
                adds.append(said)
        candidate = Candidate(
            candidate_id=candidate_id("questions", user.id, user.question),
            type=kind,
            question=user.question,
            relevant_chunks=() if unanswerable else (chunks or None),
            answerable=not unanswerable,
            source="questions",
            source_id=user.id,
            score=score,
            adds=tuple(adds),
            tags=(corpus[chunks[0]].doc,) if chunks and not unanswerable else (),
        )
        scored.append((-score, order, candidate))
    return [candidate for _, _, candidate in sorted(scored, key=lambda s: (s[0], s[1]))]
