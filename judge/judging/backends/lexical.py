"""A deterministic, model-free baseline: token overlap between answer, question and context.

It is the yardstick that tells whether an LLM judge adds anything, and it runs anywhere with no
model. Tokens are Latin words and, inside Japanese (CJK) runs, character bigrams
(``textnorm.lexical_tokens``), since Japanese has no spaces between words.

- faithfulness: each answer sentence's *support* is the share of its tokens found in the
  context; 2 if the mean support is at least 0.85 and no sentence is below 0.6, 1 if the mean is
  at least 0.6, else 0;
- relevance: the share of the question's content tokens (all-hiragana tokens, mostly particles,
  are left out) that the answer repeats; 2 from 0.3, 1 from 0.12;
- a refusal (a phrase of ``judge.lexical.refusal_phrases``, by default such as 「記載がありません」 or
  "I don't know": ``judge.textnorm.REFUSAL_MARKERS``, recognised by ``judge.textnorm.is_refusal``,
  the one rule the run's diagnosis uses too) scores 2/2 when no chunk of the context shares
  much with the question (under 0.4 of its content tokens in any one chunk: an answer stands
  in one chunk, and the five chunks of an out-of-scope question together share the product's
  words), else faithfulness 2 and relevance 0 (it refused although a chunk looks like it has
  the answer);
- evidence: the context sentence sharing most tokens with the answer, quoted verbatim (cut
  to the schema's 200 characters; the cut quote is still an exact match).

It answers in the mode the prompt asks (``JudgeRequest.mode``, ``judge.judging.prompts``):

- ``quote``: as above;
- ``cited``: the same scores, and instead of the quote the number of that same sentence among
  the numbered context sentences (``judge.judging.evidence.context_sentences``; 0 where the
  quote would be empty);
- ``sentences``: per answer sentence, ``no_claim`` if it holds a refusal phrase or has no
  token, else ``supported`` when at least ``SENTENCE_SUPPORT`` (0.6) of its tokens are in the
  context, citing the context sentence that holds the largest share of its tokens, else
  ``unsupported`` (citing none); relevance as above (faithfulness follows from the sentences,
  in ``judge.judging.verdict``).

The backend ignores the prompt file: it reads the same inputs the prompt carries.

It answers the other judgements too, each by the rule its task module attaches to the request
(``JudgeRequest.baseline``, ``judge.judging.tasks``), each rule with its own version in that
judgement's fingerprint (``CHUNK_VERSION``, ``CORRECTNESS_VERSION``; the answer's ``VERSION``
does not move for them). The two rules kept here:

- a chunk's grade (``task = "chunk"``): the share of the question's content tokens (as for
  relevance: all-hiragana tokens left out), each weighed by how rare it is in the corpus
  (``corpus_weights``, IDF: a token in every chunk, such as the product's name, weighs
  nothing), that the chunk holds; 3 from 0.3, 2 from 0.15, 1 from 0.05, else 0
  (``CHUNK_GRADES``). Chosen on the two shipped samples (the top 5 chunks of every labelled
  question against the golden labels, docs/judge.md): 2 or more for 15 of the 23 labelled
  chunks of the Japanese sample and 12 of 17 of the English one, under 2 for 94 of the 127
  others and 65 of 83. A rough yardstick and nothing more: a chunk that answers in other words
  than the question's gets a low grade, a chunk that repeats the question's rare words
  without answering it a high one;
- an answer's correctness (``task = "correctness"``): for an answerable question, the share of
  the reference answer's content tokens that the answer repeats; 2 from 0.5, 1 from 0.2, else
  0, and a refusal (``is_refusal``, the configured phrases) is 0: the reference answers it.
  For an out-of-scope question (``answerable`` false) a refusal is 2 and any other answer 0,
  whatever its overlap.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from judge.judging.backends.base import BackendIdentity, JudgeRequest, PlainBackend
from judge.judging.evidence import MIN_QUOTE_CHARS, answer_sentences, context_sentences
from judge.judging.types import ContextChunk
from judge.judging.verdict import EVIDENCE_MAX_CHARS, Reply

# Re-exported: the built-in list's old home, named in the configuration's docs.
from judge.textnorm import REFUSAL_MARKERS as REFUSAL_MARKERS
from judge.textnorm import (
    RefusalMatch,
    is_refusal,
    lexical_tokens,
    normalise,
    refusal_match,
    split_sentences,
)

VERSION = "lexical-v6"  # bump whenever the scoring changes: it is the cache key
#: The rule of a chunk's grade and of an answer's correctness: each in its own judgement's
#: fingerprint (bump when the rule changes; the answer's VERSION stays).
CHUNK_VERSION = "lexical-chunk-v2"
CORRECTNESS_VERSION = "lexical-correctness-v2"
#: The question-token shares from which a chunk gets 3, 2 and 1 (module docstring).
CHUNK_GRADES = (0.3, 0.15, 0.05)
#: The reference-token shares from which an answer gets correctness 2 and 1.
CORRECTNESS_SCORES = (0.5, 0.2)
#: An answer sentence is supported (``sentences`` mode) when this share of its tokens is in the
#: context: the per-sentence floor of the holistic rule's faithfulness 2.
SENTENCE_SUPPORT = 0.6
#: A refusal is right when no context chunk shares this much with the question.
REFUSAL_OVERLAP = 0.4


def _content(tokens: list[str]) -> list[str]:
    """Drop tokens made only of hiragana: in Japanese those are mostly particles and endings
    (の, は, ます), which every sentence shares and which say nothing about the topic."""
    return [t for t in tokens if not all("\u3040" <= c <= "\u309f" for c in t)]


def _share(part: list[str], whole: set[str]) -> float:
    return sum(1 for token in part if token in whole) / len(part) if part else 0.0


def _refused(match: RefusalMatch) -> str:
    """The refusal's phrase and sentence, short enough for a note (80 characters in all)."""
    phrase = match.phrase if len(match.phrase) <= 18 else match.phrase[:17] + "…"
    return f'refusal "{phrase}" (sentence {match.sentence})'


def judge_lexically(
    question: str,
    context: list[str],
    answer: str,
    refusal_phrases: Sequence[str] = REFUSAL_MARKERS,
) -> dict[str, Any]:
    """The verdict payload for one item (see module docstring for the rules)."""
    context_tokens = {t for text in context for t in lexical_tokens(text)}
    question_tokens = _content(lexical_tokens(question))
    answer_tokens = set(lexical_tokens(answer))
    # Only sentences long enough to count as evidence (a bare "1." identifies nothing).
    sentences = [
        s for text in context for s in split_sentences(text) if len(normalise(s)) >= MIN_QUOTE_CHARS
    ]
    evidence = max(
        sentences,
        key=lambda s: _share(lexical_tokens(s), answer_tokens),
        default="",
    )[:EVIDENCE_MAX_CHARS]
    if (refusal := refusal_match(answer, refusal_phrases)) is not None:
        overlap = max((_share(question_tokens, set(lexical_tokens(t))) for t in context), default=0)
        if overlap < REFUSAL_OVERLAP:
            return {
                "evidence": "",
                "faithfulness": 2,
                "relevance": 2,
                "note": f"{_refused(refusal)}; closest chunk holds {overlap:.2f} of question",
            }
        return {
            "evidence": evidence,
            "faithfulness": 2,
            "relevance": 0,
            "note": f"{_refused(refusal)}, but a chunk holds {overlap:.2f} of question",
        }
    supports = [
        _share(tokens, context_tokens)
        for tokens in (lexical_tokens(s) for s in split_sentences(answer))
        if tokens
    ] or [0.0]
    mean, weakest = sum(supports) / len(supports), min(supports)
    faithfulness = 2 if mean >= 0.85 and weakest >= 0.6 else 1 if mean >= 0.6 else 0
    on_topic = _share(question_tokens, answer_tokens)
    relevance = 2 if on_topic >= 0.3 else 1 if on_topic >= 0.12 else 0
    note = (
        f"support mean {mean:.2f}, weakest sentence {weakest:.2f}; question overlap {on_topic:.2f}"
    )
    return {
        "evidence": evidence,
        "faithfulness": faithfulness,
        "relevance": relevance,
        "note": note,
    }


def _best_sentence(overlap: Callable[[list[str]], float], context: Sequence[ContextChunk]) -> int:
    """The number of the context sentence with the highest ``overlap`` (of its tokens; the
    first of equals; only sentences long enough to be evidence), 0 when there is none."""
    best, number = 0.0, 0
    for sentence in context_sentences(context):
        if len(normalise(sentence.text)) < MIN_QUOTE_CHARS:
            continue
        share = overlap(lexical_tokens(sentence.text))
        if number == 0 or share > best:
            best, number = share, sentence.n
    return number


def _holding(tokens: list[str]) -> Callable[[list[str]], float]:
    """The share of ``tokens`` that a context sentence's tokens hold."""
    return lambda found: _share(tokens, set(found))


def judge_cited(
    question: str,
    context: Sequence[ContextChunk],
    answer: str,
    refusal_phrases: Sequence[str] = REFUSAL_MARKERS,
) -> dict[str, Any]:
    """The ``cited`` payload: ``judge_lexically``'s scores and note, and the number of the
    sentence it would quote (0 where it quotes nothing)."""
    payload = judge_lexically(question, [c.text for c in context], answer, refusal_phrases)
    answer_tokens = set(lexical_tokens(answer))
    # The quote's own choice: the share of the context sentence's tokens that the answer has.
    cited = (
        _best_sentence(lambda tokens: _share(tokens, answer_tokens), context)
        if payload["evidence"]
        else 0
    )
    return {
        "evidence_sentence": cited,
        "faithfulness": payload["faithfulness"],
        "relevance": payload["relevance"],
        "note": payload["note"],
    }


def judge_sentences(
    question: str,
    context: Sequence[ContextChunk],
    answer: str,
    refusal_phrases: Sequence[str] = REFUSAL_MARKERS,
) -> dict[str, Any]:
    """The ``sentences`` payload (see module docstring for the rules)."""
    context_tokens = {t for chunk in context for t in lexical_tokens(chunk.text)}
    entries: list[dict[str, Any]] = []
    for sentence in answer_sentences(answer):
        tokens = lexical_tokens(sentence.text)
        if not tokens or is_refusal(sentence.text, refusal_phrases):
            verdict, cited = "no_claim", 0
        elif _share(tokens, context_tokens) >= SENTENCE_SUPPORT:
            # The context sentence that holds most of this sentence's tokens.
            verdict = "supported"
            cited = _best_sentence(_holding(tokens), context)
        else:
            verdict, cited = "unsupported", 0
        entries.append({"n": sentence.n, "verdict": verdict, "evidence_sentence": cited})
    holistic = judge_lexically(question, [c.text for c in context], answer, refusal_phrases)
    supported = sum(entry["verdict"] == "supported" for entry in entries)
    checkable = sum(entry["verdict"] != "no_claim" for entry in entries)
    return {
        "sentences": entries,
        "relevance": holistic["relevance"],
        "note": f"{supported} of {checkable} checkable sentences share "
        f">= {SENTENCE_SUPPORT:g} of their tokens with the context",
    }


def corpus_weights(texts: Iterable[str]) -> dict[str, float]:
    """Token → its weight in a chunk grade: how rare it is among ``texts`` (the corpus's
    chunks), ``log((N + 1) / (df + 1))`` for a token in ``df`` of ``N`` chunks: 0 for a token
    in every chunk (the product's name says nothing about which chunk answers), the most for a
    token in none."""
    texts = list(texts)
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(lexical_tokens(text)))
    total = len(texts)
    return {token: math.log((total + 1) / (df + 1)) for token, df in counts.items()} | {
        "": math.log(total + 1)
    }


def _weighted_share(part: list[str], whole: set[str], weights: Mapping[str, float]) -> float:
    """The share of ``part``'s weight (``corpus_weights``; a token the corpus lacks weighs as
    the rarest) that ``whole`` holds."""
    rarest = weights.get("", 1.0)
    weight = [weights.get(token, rarest) for token in part]
    total = sum(weight)
    held = sum(w for token, w in zip(part, weight, strict=True) if token in whole)
    return held / total if total > 0 else 0.0


def grade_chunk_lexically(
    question: str, chunk: str, weights: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The chunk payload ``{grade, reason}`` for one chunk (module docstring: the rule);
    ``weights``: each token's weight by its rarity in the corpus (``corpus_weights``; None:
    every token weighs the same)."""
    question_tokens = _content(lexical_tokens(question))
    held = set(lexical_tokens(chunk))
    if weights is None:
        share = _share(question_tokens, held)
    else:
        share = _weighted_share(list(dict.fromkeys(question_tokens)), held, weights)
    grade = next((3 - i for i, floor in enumerate(CHUNK_GRADES) if share >= floor), 0)
    what = "of the question's tokens" if weights is None else "of the question's weight (IDF)"
    return {"grade": grade, "reason": f"the chunk holds {share:.2f} {what}"}


def correctness_lexically(
    answer: str,
    reference: str | None,
    answerable: bool,
    refusal_phrases: Sequence[str] = REFUSAL_MARKERS,
) -> dict[str, Any]:
    """The correctness payload ``{correctness, reason}`` (module docstring: the rule)."""
    refused = is_refusal(answer, refusal_phrases)
    if not answerable:
        if refused:
            return {"correctness": 2, "reason": "a refusal, and the question is out of scope"}
        return {"correctness": 0, "reason": "an answer, but the question is out of scope"}
    if refused:
        return {"correctness": 0, "reason": "a refusal, but the reference answers the question"}
    reference_tokens = _content(lexical_tokens(reference or ""))
    share = _share(reference_tokens, set(lexical_tokens(answer)))
    score = 2 if share >= CORRECTNESS_SCORES[0] else 1 if share >= CORRECTNESS_SCORES[1] else 0
    return {
        "correctness": score,
        "reason": f"the answer repeats {share:.2f} of the reference's tokens",
    }


#: Shown wherever the judge is named: what this judge is, and what its quotes are.
ABOUT = (
    "a model-free baseline scoring token overlap; its quote is the context sentence that "
    "overlaps most with the answer, copied, so it is always found: a verified quote from it "
    "says nothing about support"
)


class LexicalBackend(PlainBackend):
    """Scores the raw inputs of each request; no model, no network, no prompt."""

    def __init__(self, refusal_phrases: Sequence[str] | None = None) -> None:
        self.refusal_phrases = tuple(refusal_phrases or REFUSAL_MARKERS)
        # The built-in list is part of VERSION; a project's own list changes verdicts, so it
        # is in the fingerprint (and caches made with the built-in list stay valid).
        options = {} if refusal_phrases is None else {"refusal_phrases": list(refusal_phrases)}
        self.identity = BackendIdentity(
            kind="lexical",
            model=VERSION,
            digest=None,
            options=options,
            reads_prompt=False,
            about=ABOUT,
        )

    def close(self) -> None:
        pass  # nothing held

    def complete(self, request: JudgeRequest) -> Reply:
        start = time.perf_counter()
        if request.baseline is not None:  # another task's own rule (judge.judging.tasks)
            payload = request.baseline(self.refusal_phrases)
        elif request.mode == "cited":
            payload = judge_cited(
                request.question, request.context, request.answer, self.refusal_phrases
            )
        elif request.mode == "sentences":
            payload = judge_sentences(
                request.question, request.context, request.answer, self.refusal_phrases
            )
        else:
            context = [chunk.text for chunk in request.context]
            payload = judge_lexically(
                request.question, context, request.answer, self.refusal_phrases
            )
        return Reply(
            text=json.dumps(payload, ensure_ascii=False),
            finish_reason="stop",
            latency_s=time.perf_counter() - start,
        )
