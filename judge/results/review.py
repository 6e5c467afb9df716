"""Why a judged answer needs a person's look: the one definition every view counts.

The verdict's own flags (``judge.judging.verdict``: status not ok, quote checks, injection)
plus what needs the human labels or the golden chunks: a disagreement with a label, a
faithful verdict whose evidence comes from a chunk the golden set does not list, a quote
not verified, unsupported sentences, low confidence. The run record keeps the result per
question (``judge.record.model.QuestionRow.triage``); the console, report.md, report.json and
review.html show those same questions and count them the same way.

It also catches what a weak judge does rather than what one verdict says (issue 21: a small
judge in cited mode cited "sentence 1" in 57 of 59 verdicts and the queue stayed empty):

- ``cited_unrelated``: in cited mode, the cited context sentence shares no content token
  with the answer (``content_tokens``: Latin words but a few function words, CJK bigrams but
  the all-hiragana ones): a sentence that says nothing the answer says cannot be what backs it;
- ``same_position``: the judge cites the same sentence number in most of the run's cited
  verdicts (``position_bias``: at least ``SAME_POSITION_SHARE``, three quarters, of at least
  ``SAME_POSITION_MIN`` verdicts that cite a sentence). "Most" is three quarters, not half: with
  short chunks and a good first rank, sentence 1 is legitimately the evidence for many items,
  and a warning that fires on a sound judge would be ignored. It is a run-level warning
  (report.md, the console) and a reason on each verdict citing that position;
- ``injection``: a judge-directed instruction in the answer or a chunk
  (``judge.judging.injection``), on every verdict whatever its status: a verdict that failed
  on an item that tells the judge what to do is as suspect as one that did not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from judge.inputs.labels import LabelScores
from judge.judging.confidence import LOW_CONFIDENCE
from judge.judging.injection import instruction_flags
from judge.judging.types import SentenceCheck, Verdict
from judge.judging.verdict import review_reasons
from judge.results.item_record import ItemRecord
from judge.textnorm import lexical_tokens, name_key, shown_name


def unsupported(verdict: Verdict) -> list[SentenceCheck]:
    """The answer sentences the judge found unsupported (none outside sentence mode)."""
    return [s for s in verdict.sentences or () if s.verdict == "unsupported"]


#: The triage filters: flag key → what the filter shows (in the page's filter list).
TRIAGE_FLAGS: dict[str, str] = {
    "disagrees": "disagrees with a human label",
    "foreign_quote": "faithfulness 2, quote from a non-golden chunk",
    "unverified_quote": "quote not verified",
    "not_ok": "verdict status not ok",
    "adapter_failed": "adapter failed (no answer)",
    "verdict_flags": "flagged by the verdict's checks",
    "low_confidence": "low judge confidence",
    "unsupported_sentences": "unsupported sentence(s)",
    "injection": "an instruction to the judge in the answer or a chunk",
    "cited_unrelated": "cited sentence shares no content with the answer",
    "same_position": "the judge cites the same sentence number for most items",
    "weak_judge": "the judge repeats one reply or the prompt's format example",
    "panel_disputed": "a panel of judges disputes it (2 points apart or split)",
}

#: ``same_position``: the share of the cited verdicts that cite one sentence number ...
SAME_POSITION_SHARE = 0.75
#: ... among at least this many verdicts that cite a sentence (fewer say nothing).
SAME_POSITION_MIN = 10

#: English function words: every English sentence has some, so sharing them is no content.
_FUNCTION_WORDS_TEXT = (
    "a an the and or but of to in on at by for with from as is are was were be been being it "
    "its this that these those there here you your we our they their he she his her i me my "
    "do does did not no can could will would should may might must shall have has had if then "
    "so than too very also just only any some all each every which what who whom whose when "
    "where why how about into onto over under up down out off again more most such own same "
    "yes"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())


def content_tokens(text: str) -> set[str]:
    """The tokens that carry content (``judge.textnorm.lexical_tokens`` without the English
    function words and the all-hiragana CJK tokens, mostly particles and endings: の, は, ます)."""
    return {
        token
        for token in lexical_tokens(text)
        if token not in _FUNCTION_WORDS and not all("\u3040" <= c <= "\u309f" for c in token)
    }


class PositionBias(NamedTuple):
    """A judge citing one sentence number for most of the run's cited verdicts."""

    sentence: int
    k: int
    """Verdicts citing it."""
    n: int
    """Cited-mode ok verdicts citing any sentence."""

    @property
    def warning(self) -> str:
        return (
            f"the judge cited sentence {self.sentence} in {self.k} of {self.n} verdicts that "
            "cite a sentence: a judge that cites one position for most items is likely not "
            "reading the chunks; check those verdicts by hand"
        )


def position_bias(verdicts: Iterable[Verdict]) -> PositionBias | None:
    """The run-level ``same_position`` warning, or None (the rule: the module docstring)."""
    numbers = [
        v.match.sentence
        for v in verdicts
        if v.status == "ok"
        and v.mode == "cited"
        and v.match is not None
        and v.match.cited
        and v.match.sentence is not None
    ]
    if len(numbers) < SAME_POSITION_MIN:
        return None
    # The most common number; a tie goes to the lower one (the first sentence, usually).
    counts = Counter(numbers)
    sentence, k = min(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    if k < SAME_POSITION_SHARE * len(numbers):
        return None
    return PositionBias(sentence, k, len(numbers))


#: What a found quote is; anything else with a quote is not verified.
_VERIFIED = ("exact", "normalised")


#: Flags that are the judge's findings, not doubts about its verdict: an unsupported answer
#: sentence lowers faithfulness and is listed on its own (report.md's "Unsupported answer
#: sentences", a filter of the review page), but does not by itself make a question one to look at.
FINDINGS = frozenset({"unsupported_sentences"})


class Triage(NamedTuple):
    """Why an item deserves a look: flag keys (for filters) and the sentences shown."""

    flags: list[str]
    reasons: list[str]
    gap: int
    """The largest score difference between the judge and one human label (F and R summed)."""

    @property
    def needs_review(self) -> bool:
        """A doubt about the verdict (any flag but a finding): what every view counts."""
        return any(flag not in FINDINGS for flag in self.flags)


_Finding = tuple[str, str | None]
"""A triage flag and the sentence that says why (None: the verdict's own reasons say it)."""


def _unsupported_sentences(verdict: Verdict) -> list[_Finding]:
    """``unsupported_sentences``: the answer sentences the judge found unsupported, by number."""
    bad = unsupported(verdict)
    if not bad:
        return []
    numbers = ", ".join(str(check.n) for check in bad)
    reason = (
        f"unsupported sentence{'s' if len(bad) > 1 else ''} {numbers} "
        f"(of {len(verdict.sentences or ())})"
    )
    return [("unsupported_sentences", reason)]


def _disagrees(differing: list[LabelScores], judge_f: int, judge_r: int) -> list[_Finding]:
    """``disagrees``: the human labels whose scores differ from the judge's."""
    if not differing:
        return []
    humans = ", ".join(f"{lab.labeller} F{lab.faithfulness} R{lab.relevance}" for lab in differing)
    return [("disagrees", f"disagrees with a human label: {humans} (judge F{judge_f} R{judge_r})")]


def _foreign_quote(item: ItemRecord, verdict: Verdict) -> list[_Finding]:
    """``foreign_quote``: a faithful verdict whose evidence comes from a chunk the golden set
    does not list."""
    match = verdict.match
    golden = item.relevant_chunks
    # Only where the golden chunks are known and there are some: an unlabelled question or an
    # out-of-scope one says nothing about where the evidence should come from.
    if not (
        verdict.faithfulness == 2
        and match
        and match.chunk_id
        and golden
        and match.chunk_id not in golden
    ):
        return []
    what = "cited sentence" if match.cited else "quote"
    reason = (
        f"faithful, but the {what} comes from {match.chunk_id}, not a golden chunk "
        f"({first_ids(golden)})"
    )
    return [("foreign_quote", reason)]


#: How many ids a reason names before it counts the rest: a question with dozens of golden
#: chunks made a line of 1,898 characters.
GOLDEN_IDS_SHOWN = 5


def first_ids(ids: Sequence[str], first: int = GOLDEN_IDS_SHOWN) -> str:
    """``a, b, c, d, e, … (12 more)``: the first ``first`` ids, then a count of the rest."""
    shown = ", ".join(ids[:first])
    rest = len(ids) - first
    return f"{shown}, … ({rest} more)" if rest > 0 else shown


def _unverified_quote(verdict: Verdict) -> list[_Finding]:
    """``unverified_quote``: in quote mode, a quote not found in the chunks.

    An empty quote is legitimate (a refusal, or nothing to quote for a 0) unless the verdict's
    own checks flagged it. Only quotes are verified: a sentence cited by number is context text
    by construction (whether it supports the verdict is what the reviewer reads; a missing
    citation is among the verdict's own flags).
    """
    match = verdict.match
    if not (
        verdict.mode == "quote"
        and match
        and match.kind not in _VERIFIED
        and (match.kind != "empty" or verdict.review)
    ):
        return []
    # The verdict's flags are all about the quote: say it once.
    if verdict.review:
        return [("unverified_quote", None)]
    return [("unverified_quote", f"quote not verified ({match.kind.replace('_', ' ')})")]


def _cited(item: ItemRecord, verdict: Verdict, bias: PositionBias | None) -> list[_Finding]:
    """``cited_unrelated`` and ``same_position``: in cited mode, a cited sentence that shares no
    content with the answer, or that sits at the position the run's judge cites for most."""
    match = verdict.match
    if verdict.mode != "cited" or match is None or not match.cited:
        return []
    found: list[_Finding] = []
    where = f" in {match.chunk_id}" if match.chunk_id else ""
    # The verdict's evidence is the cited sentence's text (``make_verdict``).
    cited_text = verdict.evidence
    if cited_text and not content_tokens(cited_text) & content_tokens(item.answer):
        reason = f"cited sentence {match.sentence}{where} shares no content with the answer"
        found.append(("cited_unrelated", reason))
    if bias is not None and match.sentence == bias.sentence:
        reason = (
            f"cites sentence {bias.sentence}, as {bias.k} of {bias.n} cited verdicts do "
            "(a position bias?)"
        )
        found.append(("same_position", reason))
    return found


def _low_confidence(verdict: Verdict) -> list[_Finding]:
    """``low_confidence``: the judge's own probability of the scores it gave is low."""
    confidence = verdict.confidence
    if confidence is None or confidence >= LOW_CONFIDENCE:
        return []
    return [("low_confidence", f"low judge confidence: {confidence:.0%} on the scores it gave")]


def _panel_disputed(disputed: Sequence[str]) -> list[_Finding]:
    """``panel_disputed``: the members of a ``judge panel`` disagree on this answer."""
    if not disputed:
        return []
    return [("panel_disputed", f"the panel of judges disputes it: {'; '.join(disputed)}")]


def triage(
    item: ItemRecord,
    verdict: Verdict,
    bias: PositionBias | None = None,
    weak: Sequence[str] = (),
    disputed: Sequence[str] = (),
) -> Triage:
    """The triage flags of one judged item (``TRIAGE_FLAGS``); ``bias``: the run's
    ``position_bias``, when it has one; ``weak``: why this item's replies are among those that
    make the judge weak (``judge.results.weak_judge.weak_reasons``), each a ``weak_judge``;
    ``disputed``: why the newest ``judge panel`` of this exact answer disputed it (its flags:
    "faithfulness 2 points apart"), one ``panel_disputed``."""
    reasons = list(review_reasons(verdict))
    injected = instruction_flags(item.answer, item.context)
    if verdict.status != "ok" or verdict.faithfulness is None or verdict.relevance is None:
        # An ok verdict has these among its own flags (``make_verdict``); one that is not ok
        # has only its error, so they are said here.
        return Triage(["not_ok", *(["injection"] if injected else [])], reasons + list(injected), 0)
    judge_f, judge_r = verdict.faithfulness, verdict.relevance
    differing = [
        label
        for label in item.labels
        if (label.faithfulness, label.relevance) != (judge_f, judge_r)
    ]
    gap = max(
        (abs(lab.faithfulness - judge_f) + abs(lab.relevance - judge_r) for lab in differing),
        default=0,
    )
    found: list[_Finding] = [
        *([("verdict_flags", None)] if verdict.review else []),
        *([("injection", None)] if injected else []),
        *_unsupported_sentences(verdict),
        *_disagrees(differing, judge_f, judge_r),
        *_foreign_quote(item, verdict),
        *_unverified_quote(verdict),
        *_cited(item, verdict, bias),
        *_low_confidence(verdict),
        *[("weak_judge", reason) for reason in weak],
        *_panel_disputed(disputed),
    ]
    reasons += [reason for _, reason in found if reason is not None]
    return Triage([flag for flag, _ in found], reasons, gap)


#: The triage of a question with nothing to look at (or no verdict to look at).
NO_TRIAGE = Triage([], [], 0)


# --- the judge is the generator ---------------------------------------------------------------

#: Why self-judging is warned about, in the article's words.
SELF_JUDGING_REASON = (
    "a model tends to rate its own style as correct, which is why the article judges with a "
    "larger model than the generator"
)


def _family_size(name: str) -> tuple[str, str] | None:
    """A model name's family and size ("gemma3:12b", "google/gemma-3-12b-it" and
    "Gemma 3 12B" are all ("gemma3", "12b")), or None when it names no size."""
    tokens = re.sub(r"[^a-z0-9.]+", " ", name_key(name).removesuffix(".gguf")).split()
    at = next((i for i, t in enumerate(tokens) if _SIZE.fullmatch(t)), None)
    if at is None:
        return None
    before = tokens[:at]
    named = [i for i, t in enumerate(before) if any(c.isalpha() for c in t)]
    if not named:
        return None
    first = named[-1]
    family = before[first] + "".join(before[first + 1 :])
    return family, tokens[at]


#: A parameter count as model names write it: 12b, 270m, 1.5b, e4b (Gemma 3n).
_SIZE = re.compile(r"e?\d+(?:\.\d+)?[bm]")


def _tag(name: str) -> str:
    """An Ollama tag as written in either place: as users mean the name (``name_key``: case
    and full-width letters folded, surrounding spaces stripped), ":latest" implied."""
    tag = name_key(name)
    return tag if ":" in tag else f"{tag}:latest"


def self_judging(judge_model: str, generator_model: str | None) -> str | None:
    """The warning when the RAG system's generator (``run_meta.generator_model``) is the judge's
    model: the same Ollama tag, or the same family and size; None otherwise."""
    if not generator_model or not judge_model:
        return None
    same = _tag(judge_model) == _tag(generator_model)
    if not same:
        judge_kind, generator_kind = _family_size(judge_model), _family_size(generator_model)
        same = judge_kind is not None and judge_kind == generator_kind
    if not same:
        return None
    return (
        f"self-judging: the judge's model ({shown_name(judge_model)}) is the generator's "
        f"(run_meta.generator_model {shown_name(generator_model)}): {SELF_JUDGING_REASON}"
    )
