"""The judge learning from its reviewers: labelled examples, cross-fitted folds, the choice of
worked exemplars, and the prompt variant that shows them (``judge align``).

An example is a run item with a human label given for its exact answer (``answer_sha256``):
the question, the chunks the judge saw, the answer, the person's scores and, when the label
has one, the person's reason (its ``note``). A label given for another answer of the question
says nothing about this one, so it is never an example.

Folds are dealt per question, so that a label is never both an exemplar and a test item: the
exemplars of fold ``f`` are chosen only from the other folds, and the variant is measured on
fold ``f`` alone (cross-fitting). Questions are dealt type by type in a seeded order, so each
fold holds every type as far as the counts allow.

Exemplars are chosen greedily to cover, in as few as possible, every score (0, 1, 2) of every
axis the examples have, every question type and every language (Japanese and English), then
round after round again, until ``k`` are chosen or the token budget is spent; among equal
coverage the shorter example goes first (then the question id, so the choice is
deterministic). They go into the fixed text of the prompt, before its first placeholder, so
every item's prompt starts with the same instructions and exemplars: llama.cpp's and Ollama's
prompt-prefix caches then process them once and reuse them for every later item.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from judge.audit.types import Interval
from judge.axes import AXES
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.items import JudgeItem
from judge.judging.prompts import CONTROL_MARKERS, Prompt

#: Where the exemplars go when the prompt has it (the shipped prompts do): before the line
#: that introduces the material to grade. Elsewhere: before the paragraph of the first
#: placeholder.
_MATERIAL_LINE = re.compile(r"^Below is the quoted material", re.MULTILINE)
_PLACEHOLDER = re.compile(r"(?<!\$)\$(?:\{?[A-Za-z_])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")

EXEMPLARS_HEADING = "Worked examples graded by a person"


def language_of(text: str) -> str:
    """``ja`` when the text has any kana or kanji, else ``en``."""
    return "ja" if _CJK.search(text) else "en"


def estimated_tokens(text: str) -> int:
    """A model-free estimate of a text's tokens: a third of its UTF-8 bytes (about one token
    per Japanese character and per four English letters). The budget is an estimate; the
    backend reports the real counts (``Verdict.prompt_tokens``)."""
    return (len(text.encode("utf-8")) + 2) // 3


class Example(NamedTuple):
    """A labelled item: what the judge saw and what the person said of it."""

    item: JudgeItem
    labels: tuple[HumanLabel, ...]
    """Every label of the item's exact answer (several labellers: one each), by labeller."""

    @property
    def question_id(self) -> str:
        return self.item.question_id

    @property
    def type(self) -> str:
        return self.item.question.type

    @property
    def language(self) -> str:
        return language_of(self.item.question.question)

    @property
    def label(self) -> HumanLabel:
        """The label an exemplar shows: the first labeller's (by name)."""
        return self.labels[0]


def examples_of(items: Sequence[JudgeItem], labels: Sequence[HumanLabel]) -> list[Example]:
    """The items that have labels for their exact answer, in item order."""
    hashes = {item.question_id: text_sha256(item.record.answer) for item in items}
    found: dict[str, list[HumanLabel]] = {}
    for label in labels:
        if hashes.get(label.question_id) == label.answer_sha256:
            found.setdefault(label.question_id, []).append(label)
    return [
        Example(item, tuple(sorted(found[item.question_id], key=lambda lab: lab.labeller)))
        for item in items
        if item.question_id in found
    ]


def deal_folds(examples: Sequence[Example], folds: int, seed: int = 0) -> list[list[Example]]:
    """The examples dealt into ``folds`` groups (fewer when there are fewer examples), type by
    type in a seeded order, so each fold holds each type as evenly as the counts allow."""
    count = max(1, min(folds, len(examples)))
    rng = random.Random(seed)
    by_type: dict[str, list[Example]] = {}
    for example in sorted(examples, key=lambda e: (e.type, e.question_id)):
        by_type.setdefault(example.type, []).append(example)
    dealt: list[list[Example]] = [[] for _ in range(count)]
    position = 0
    for name in sorted(by_type):
        group = by_type[name]
        rng.shuffle(group)
        for example in group:
            dealt[position % count].append(example)
            position += 1
    return dealt


def _targets(example: Example) -> set[tuple[str, str]]:
    """What an exemplar covers: its score on each axis, its type, its language."""
    label = example.label
    covered = {(axis, str(getattr(label, axis))) for axis in AXES}
    return covered | {("type", example.type), ("language", example.language)}


def choose_exemplars(
    pool: Sequence[Example], k: int, budget_tokens: int, uses_reference: bool = True
) -> list[Example]:
    """Up to ``k`` exemplars from ``pool`` whose block fits ``budget_tokens`` (module
    docstring: coverage first, shorter first, round after round)."""
    cost = {e.question_id: estimated_tokens(exemplar_text(e, 0, uses_reference)) for e in pool}
    left = sorted(pool, key=lambda e: (cost[e.question_id], e.question_id))
    chosen: list[Example] = []
    spent = estimated_tokens(_block_head())
    covered: set[tuple[str, str]] = set()
    while len(chosen) < k:
        fitting = [e for e in left if spent + cost[e.question_id] <= budget_tokens]
        if not fitting:
            break
        gains = [len(_targets(e) - covered) for e in fitting]
        if max(gains) == 0 and covered:
            covered = set()  # every target covered: the next round starts
            continue
        best = fitting[gains.index(max(gains))]  # first of the largest: the shortest
        chosen.append(best)
        left.remove(best)
        covered |= _targets(best)
        spent += cost[best.question_id]
    return chosen


def _json(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)`` with chat control markers escaped, as the
    prompt renders its inputs (``judge.judging.prompts``)."""
    encoded = json.dumps(text, ensure_ascii=False)
    for marker in CONTROL_MARKERS:
        encoded = encoded.replace(marker, "\\u003c" + marker[1:])
    return encoded


_EXEMPLAR = Prompt(
    Path("<exemplar>"),
    "QUESTION (JSON string):\n$question\n\n"
    "CONTEXT (JSON list of passages, best-ranked first):\n$context\n\n"
    "ANSWER (JSON string):\n$answer\n",
    "",
)
_REFERENCE = Prompt(Path("<reference>"), "REFERENCE (JSON string):\n$reference\n\n", "")


def exemplar_text(example: Example, number: int, uses_reference: bool = True) -> str:
    """One worked exemplar: the material as the prompt shows it, then the person's grade and
    reason."""
    item = example.item
    label = example.label
    material = _EXEMPLAR.render(item.question.question, item.context, item.record.answer)
    reference = item.question.reference_answer
    if uses_reference and reference:
        question_end = material.index("\n\nCONTEXT")
        material = (
            material[: question_end + 2]
            + _REFERENCE.render("", [], "", reference)
            + material[question_end + 2 :]
        )
    grade = ", ".join(f"{axis} {getattr(label, axis)}" for axis in AXES)
    lines = [f"EXAMPLE {number}", material.rstrip("\n"), f"PERSON'S GRADE: {grade}"]
    if label.note.strip():
        lines.append(f"PERSON'S REASON (JSON string): {_json(label.note.strip())}")
    return "\n".join(lines) + "\n"


def _block_head() -> str:
    return (
        f"{EXEMPLARS_HEADING} (the material of each and the grade the person gave it; they "
        "are examples only, not the material to grade):\n\n"
    )


def exemplar_block(exemplars: Sequence[Example], uses_reference: bool = True) -> str:
    """The exemplars as the text the variant adds (empty for none)."""
    if not exemplars:
        return ""
    bodies = [exemplar_text(e, n, uses_reference) for n, e in enumerate(exemplars, start=1)]
    return _block_head() + "\n".join(bodies) + "\nEnd of the examples.\n\n"


def variant_text(base: str, block: str) -> str:
    """``base`` with ``block`` inserted in its fixed prefix (module docstring), every ``$`` of
    the block doubled so that the template reads it as text."""
    if not block:
        return base
    escaped = block.replace("$", "$$")
    material = _MATERIAL_LINE.search(base)
    if material is not None:
        at = material.start()
    else:
        first = _PLACEHOLDER.search(base)
        end = first.start() if first else len(base)
        paragraph = base.rfind("\n\n", 0, end)
        at = 0 if paragraph < 0 else paragraph + 2
    return base[:at] + escaped + base[at:]


def variant_prompt(base: Prompt, exemplars: Sequence[Example], name: str) -> Prompt:
    """The prompt ``base`` with ``exemplars`` in its prefix, named ``name`` (a name is no part
    of the fingerprint: the text's hash is)."""
    text = variant_text(base.text, exemplar_block(exemplars, base.uses_reference))
    return Prompt(base.path.with_name(name), text, text_sha256(text), base.task)


_VERSION = re.compile(r"^(?P<stem>.*)\.v(?P<n>\d+)$")


def next_version_name(path: Path, existing: Sequence[str]) -> str:
    """The name of the next version of a prompt file: ``judge.v1.md`` → ``judge.v2.md`` (one
    past the highest ``judge.vN.md`` in ``existing``); a name without a version gets ``.v2``."""
    stem = path.name.removesuffix(path.suffix)
    match = _VERSION.match(stem)
    base = match.group("stem") if match else stem
    versions = [int(match.group("n")) if match else 1]
    for name in existing:
        found = _VERSION.match(name.removesuffix(path.suffix))
        if found and found.group("stem") == base and name.endswith(path.suffix):
            versions.append(int(found.group("n")))
    return f"{base}.v{max(versions) + 1}{path.suffix}"


class AdoptedPrompt(NamedTuple):
    """A prompt ``judge align`` adopted, as the views of a run judged with it show it: its
    held-out agreement beside the prompt it was built from (exact agreement, both axes
    together, over the same labels, with 95 % intervals), read from the JSON that
    ``judge align`` writes beside its account."""

    prompt: str
    """The adopted prompt's file name (``judge.v2.md``)."""
    previous: str
    """The file name of the prompt it was built from."""
    variant: str
    """``k=2``: how many exemplars."""
    labels: int
    answers: int
    value: float | None
    value_ci: Interval | None
    previous_value: float | None
    previous_ci: Interval | None
    p_value: float
    """The guard's one-sided sign test."""
    report: str
    """The account's file name under ``reports/align/``."""
