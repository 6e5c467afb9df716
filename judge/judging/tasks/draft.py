"""Drafting golden questions from corpus chunks (``judge golden propose --from-corpus``,
issue 38): one chunk and the type wanted → a question and the span of the chunk that answers it.

A judgement like the others (items → request → cached reply → parsed result, under a
fingerprint of its own), but not one a run asks: its items are built by ``build_draft_items``
from the corpus alone, so in a run it has none. ``[judge.tasks.draft]`` names its prompt
(``prompt``; ``prompts/draft.v1.md`` shipped); ``enabled`` changes nothing in a run.

The types come in the article's proportions (``ARTICLE_MIX``: 12 factual, 8 procedural, 5
negative, 5 out of scope per 30; ``plan_kinds``). Chunks are taken round-robin over the
documents so every topic gets drafts, a procedural draft from a chunk with numbered steps and a
negative one from a chunk stating a limit when there are such chunks. The reply is
``{"question": "...", "answer_span": "..."}`` (``DraftPayload``): the span copied from the chunk
(factual, procedural), the sentence stating the limit (negative), ``""`` (out of scope: a
question about the product the chunk, and the corpus, does not answer). Nothing here trusts the
reply: ``judge.results.candidates.verify`` checks every draft.

The model-free baseline (the lexical backend) drafts from the chunk's heading and first
sentence (``draft_lexically``): a mechanical stand-in that proves the path runs, not a drafter.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from judge.inputs.golden import Chunk
from judge.judging.backends.base import JudgeRequest
from judge.judging.grading import read_payload
from judge.judging.prompts import Prompt, TaskPrompt
from judge.judging.tasks.base import (
    TaskDef,
    each_as_then,
    in_item_order,
    payload_fingerprint,
    reply_fields,
    table_settings,
    task_key,
)
from judge.judging.types import Judgement
from judge.judging.verdict import Reply
from judge.textnorm import normalise, split_sentences

#: Bump when ``DraftPayload`` changes (it is in the fingerprint, with the schema).
DRAFT_SCHEMA_VERSION = 1
#: The baseline's rule version (in the fingerprint of the lexical backend's drafts).
DRAFT_RULES = "lexical-draft-v1"
#: The article's golden set: how many questions of each type per 30.
ARTICLE_MIX: Final = {"factual": 12, "procedural": 8, "negative": 5, "out_of_scope": 5}

DRAFT_PROMPT = TaskPrompt(
    "draft",
    "judge.tasks.draft.prompt",
    "prompts/draft.v1.md",
    ("kind", "heading", "chunk"),
    "drafted question",
)

_STEPS = re.compile(r"(^|\n|\s)(1[.．)）]|①|手順)")
_LIMITS = (
    "できません", "対応していません", "ありません", "されません", "不可",
    "not ", "cannot", "can't", "no longer", "only ",
)  # fmt: skip


class DraftPayload(BaseModel):
    """What the model must return for one draft."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(max_length=300)
    answer_span: str = Field(max_length=600)


@functools.cache
def draft_schema() -> dict[str, Any]:
    """The JSON schema of a draft's reply (sent with every request, fingerprinted)."""
    return DraftPayload.model_json_schema()


class DraftItem(NamedTuple):
    """One chunk to draft one question of one type from."""

    question_id: str
    """The item's id (``d01`` ...): a draft has no question yet."""
    kind: str
    chunk_id: str
    heading: str
    text: str
    key: str


class DraftResult(Judgement):
    """One drafted question, as the reply gave it (empty when the reply was not read)."""

    kind: str
    chunk_id: str
    question: str = ""
    answer_span: str = ""


def plan_kinds(count: int, mix: Mapping[str, int] = ARTICLE_MIX) -> list[str]:
    """``count`` types in ``mix``'s proportions (largest remainder), grouped by type."""
    total = sum(mix.values())
    exact = {kind: count * n / total for kind, n in mix.items()}
    whole = {kind: int(share) for kind, share in exact.items()}
    left = count - sum(whole.values())
    for kind in sorted(exact, key=lambda k: whole[k] - exact[k])[:left]:
        whole[kind] += 1
    return [kind for kind in mix for _ in range(whole[kind])]


def _fits(kind: str, text: str) -> bool:
    if kind == "procedural":
        return bool(_STEPS.search(text))
    if kind == "negative":
        folded = normalise(text)
        return any(normalise(marker) in folded for marker in _LIMITS)
    return True


def choose_chunks(corpus: Mapping[str, Chunk], kinds: Sequence[str]) -> list[tuple[str, Chunk]]:
    """A chunk for each kind: round-robin over the documents, a chunk that fits the kind first
    (numbered steps, a stated limit), each chunk once while there are unused ones."""
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in corpus.values():
        by_doc.setdefault(chunk.doc, []).append(chunk)
    order = [c for row in _round_robin(list(by_doc.values())) for c in row]
    used: set[str] = set()
    chosen = []
    for kind in kinds:
        fresh = [c for c in order if c.chunk_id not in used] or order
        pick = next((c for c in fresh if _fits(kind, c.text)), fresh[0])
        used.add(pick.chunk_id)
        chosen.append((kind, pick))
    return chosen


def _round_robin(groups: list[list[Chunk]]) -> list[list[Chunk]]:
    depth = max((len(g) for g in groups), default=0)
    return [[g[i] for g in groups if i < len(g)] for i in range(depth)]


def draft_key(kind: str, chunk_id: str, text: str) -> str:
    """The cache key of one draft: the type asked and the chunk shown."""
    return task_key("draft", kind=kind, chunk=[chunk_id, text])


def build_draft_items(corpus: Mapping[str, Chunk], count: int) -> list[DraftItem]:
    """``count`` drafts to ask for, in ``ARTICLE_MIX``'s proportions (``choose_chunks``)."""
    chosen = choose_chunks(corpus, plan_kinds(count))
    return [
        DraftItem(
            f"d{n:0{len(str(count))}d}",
            kind,
            chunk.chunk_id,
            chunk.heading or chunk.doc,
            chunk.text,
            draft_key(kind, chunk.chunk_id, chunk.text),
        )
        for n, (kind, chunk) in enumerate(chosen, start=1)
    ]


def draft_lexically(kind: str, heading: str, text: str) -> dict[str, Any]:
    """The baseline's draft: a question from the heading, the first (fitting) sentence as span."""
    sentences = split_sentences(text) or [text]
    japanese = any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in text)
    span = next((s for s in sentences if _fits(kind, s)), sentences[0])
    templates = {
        "factual": ("{h}について教えてください", "What does the help say about {h}?"),
        "procedural": ("{h}の手順を教えてください", "How do I do this: {h}?"),
        "negative": ("{h}でできないことはありますか？", "What can't I do with {h}?"),
        "out_of_scope": (
            "{h}を電話で代わりに設定してもらえますか？",
            "Can someone come to my home and set up {h} for me?",
        ),
    }
    ja, en = templates.get(kind, templates["factual"])
    question = (ja if japanese else en).format(h=heading)
    return {"question": question, "answer_span": "" if kind == "out_of_scope" else span}


#: The fingerprint drafts are cached under (``grading.task_fingerprint``).
draft_fingerprint = payload_fingerprint(draft_schema, DRAFT_SCHEMA_VERSION, DRAFT_RULES)


def draft_request(prompt: Prompt, item: DraftItem) -> JudgeRequest:
    """The request asking for one draft, with the baseline's rule for it."""
    return JudgeRequest(
        prompt=prompt.fill(kind=item.kind, heading=item.heading, chunk=item.text),
        schema=draft_schema(),
        question="",
        context=[],
        answer="",
        task="draft",
        baseline=lambda _refusals: draft_lexically(item.kind, item.heading, item.text),
    )


def draft_for(item: DraftItem, reply: Reply, cached: bool) -> DraftResult:
    """The draft of one reply, derived anew; a reply that does not read is a non-ok status."""
    read = read_payload(reply, DraftPayload)
    payload = read.payload
    assert payload is None or isinstance(payload, DraftPayload)
    return DraftResult(
        question_id=item.question_id,
        item_key=item.key,
        kind=item.kind,
        chunk_id=item.chunk_id,
        question=payload.question if payload else "",
        answer_span=payload.answer_span if payload else "",
        **reply_fields(read, reply, cached, ""),
    )


DRAFT: TaskDef[DraftItem, DraftResult, tuple[DraftResult, ...]] = TaskDef(
    name="draft",
    table="judge.tasks.draft",
    prompt=DRAFT_PROMPT,
    settings=table_settings("draft", Path(DRAFT_PROMPT.shipped)),
    items=lambda _golden, _run, _config: [],  # drafts are asked by golden propose, not a run
    request=draft_request,
    parse=lambda item, reply, cached, _parts: draft_for(item, reply, cached),
    fingerprint=draft_fingerprint,
    per_question=in_item_order,
    as_then=each_as_then,
    describe=lambda items, _config: f"{len(items)} drafted golden questions",
    progress=lambda items, done: f"{len(done)} of {len(items)} questions drafted",
    all_done="every question drafted",
)
