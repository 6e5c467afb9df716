"""Judge prompt files: versioned Markdown in ``prompts/`` with ``$placeholders``.

A prompt names the placeholders ``$question``, ``$context`` and ``$answer``, and may name
``$reference`` (the golden question's ``reference_answer``; ``""`` when it has none, so a prompt
can say that an empty reference means there is none). ``$$`` is a literal dollar sign. Each is
replaced by the JSON encoding of its value, so the inputs reach the model as data: an answer that
says "ignore the instructions above" is a JSON string inside the input, not a line of the
instructions. A missing or unknown placeholder is an error naming it, raised when the prompt
loads, before any judging.

The reference is part of the item key (``judge.judging.items.item_key``), not only of the
rendered text: two items that differ only in their reference answer never share a cached
verdict, whatever the prompt.

The placeholders also choose how the judge gives its evidence (``Prompt.mode``; the reply
shapes are ``judge.judging.verdict``'s):

- ``quote``: ``$context`` (the chunks as JSON); the judge copies a sentence, the harness
  verifies it;
- ``cited``: ``$context_sentences`` instead: the chunks as numbered sentences, one a line,
  under a line naming their chunk once (``(chunk "pricing/yearly")`` then ``[3]
  "年額プランは3,800円です。"``, ``[4] ...``; numbered across all chunks in rank order; ids and
  sentences JSON-encoded like every input); the judge answers with a number. The id is written
  once per chunk, not on every sentence: on every sentence it cost about as many tokens as
  cited mode's whole extra over quote mode;
- ``sentences``: ``$answer_sentences`` as well (the answer as numbered sentences, ``[1]
  "..."``), with ``$context_sentences``: the judge gives a verdict and a cited context
  sentence for every answer sentence.

``$context`` and ``$context_sentences`` together, or ``$answer_sentences`` without
``$context_sentences``, is refused when the prompt loads.

The other judgements (``judge.judging.tasks``) have prompts of their own, loaded with their
task's ``TaskPrompt`` (``load_prompt(path, task, others)``: the task module declares its
placeholders, all required, JSON-encoded the same way; e.g. the chunk grade's ``$question`` and
``$chunk``).

A prompt file written for another task (the answer prompt given as ``judge.chunks.prompt``) is
refused by name: its placeholders say which task it is for.
"""

from __future__ import annotations

import functools
import logging
import string
from collections.abc import Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, NamedTuple

from judge.errors import PromptError
from judge.hashing import text_sha256
from judge.judging.evidence import Sentence, answer_sentences, context_sentences
from judge.judging.items import JudgeItem
from judge.judging.types import ContextChunk, Mode
from judge.judging.verdict import request_schema

REQUIRED_PLACEHOLDERS = ("question", "context", "answer")
OPTIONAL_PLACEHOLDERS = ("reference",)
#: The sentence forms, each standing in for a required placeholder (``context_sentences`` for
#: ``context``; ``answer_sentences`` beside or instead of ``answer``).
SENTENCE_PLACEHOLDERS = {"context_sentences": "context", "answer_sentences": "answer"}
PLACEHOLDERS = frozenset(REQUIRED_PLACEHOLDERS + OPTIONAL_PLACEHOLDERS) | set(SENTENCE_PLACEHOLDERS)
logger = logging.getLogger(__name__)

ALLOWED = (
    "$question, $context or $context_sentences, $answer and/or $answer_sentences, and "
    "optionally $reference"
)


class TaskPrompt(NamedTuple):
    """What a judgement other than the answer's asks of its prompt file, declared by its task
    module (``judge.judging.tasks``): every placeholder required, none other allowed."""

    task: str
    setting: str
    """The setting that names the prompt file (what an error tells the user to fix)."""
    shipped: str
    """The prompt shipped for the task, named when a file of another task is given."""
    placeholders: tuple[str, ...]
    words: str
    """The task in words: "chunk grade"."""


#: The answer's own prompt (its placeholders are checked by their own rules, and choose the
#: mode: module docstring).
ANSWER_PROMPT = TaskPrompt(
    "answer", "judge.prompt", "prompts/judge.v1.md", REQUIRED_PLACEHOLDERS, "answer's verdict"
)


# Chat-format control markers (Gemma's, and ChatML's for other models). Inside the inputs they
# would become real control tokens (end the user turn, start a model turn); written with a JSON
# escape for "<" they stay text, and the JSON still decodes to the original.
CONTROL_MARKERS = (
    "<start_of_turn>",
    "<end_of_turn>",
    "<|im_start|>",
    "<|im_end|>",
    "<bos>",
    "<eos>",
)


def _safe(text: str) -> str:
    """JSON text with every control marker's "<" escaped (the JSON decodes the same)."""
    if "<" in text:
        for marker in CONTROL_MARKERS:
            text = text.replace(marker, "\\u003c" + marker[1:])
    return text


def _string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, marker-safe (the C encoder, directly)."""
    return _safe(encode_basestring(text))


def _chunks(context: Sequence[ContextChunk]) -> str:
    """``json.dumps([{"chunk_id", "text"}, ...], ensure_ascii=False, indent=1)``, byte for byte,
    but built from the C string encoder: with ``indent`` json.dumps runs its pure-Python encoder,
    which was a quarter of exporting 100,000 items (docs/benchmarks.md). Each chunk's entry is
    built once (``_chunk_entry``): items share their chunks."""
    if not context:
        return "[]"
    return "[\n" + ",\n".join([_chunk_entry(c.chunk_id, c.text) for c in context]) + "\n]"


@functools.lru_cache(maxsize=1 << 14)
def _chunk_entry(chunk_id: str, text: str) -> str:
    """One chunk of ``_chunks``, marker-safe on its own: no control marker can span two entries
    (a marker holds no quote, space or line break), so the list is as safe as its entries."""
    encoded_id, encoded_text = encode_basestring(chunk_id), encode_basestring(text)
    return _safe(f' {{\n  "chunk_id": {encoded_id},\n  "text": {encoded_text}\n }}')


def _inner(text: str) -> str:
    """``text`` as it stands inside a JSON string: ``json.dumps(text, ensure_ascii=False)``
    without its quotes. JSON escapes each character on its own, so the encoding of a text is
    the encodings of its parts, joined."""
    return encode_basestring(text)[1:-1]


@functools.lru_cache(maxsize=1 << 14)
def _chunk_entry_inner(chunk_id: str, text: str) -> str:
    """``_inner`` of one chunk's entry, built once per chunk."""
    return _inner(_chunk_entry(chunk_id, text))


def _chunks_inner(context: Sequence[ContextChunk]) -> str:
    """``_inner(_chunks(context))`` from each chunk's encoded entry."""
    if not context:
        return "[]"
    entries = [_chunk_entry_inner(c.chunk_id, c.text) for c in context]
    return "[\\n" + ",\\n".join(entries) + "\\n]"


def _sentence_lines(sentences: Sequence[Sentence], empty: str) -> str:
    """One numbered sentence a line, ``[n] "text"``; a context sentence's chunk is named on a
    line of its own, ``(chunk "id")``, before the first sentence of each run of sentences
    from it. Every id and text JSON-encoded, marker-safe: a sentence cannot start a line of
    its own (JSON escapes line breaks), forge a number or name a chunk outside its string."""
    if not sentences:
        return empty
    lines: list[str] = []
    chunk: str | None = None
    for s in sentences:
        if s.chunk_id is not None and (s.chunk_id != chunk or not lines):
            lines.append(f"(chunk {_string(s.chunk_id)})")
        chunk = s.chunk_id
        lines.append(f"[{s.n}] {_string(s.text)}")
    return "\n".join(lines)


def render_context_sentences(context: Sequence[ContextChunk]) -> str:
    """What ``$context_sentences`` shows: the chunks' sentences, numbered across all chunks,
    each chunk's id once above its sentences."""
    return _sentence_lines(context_sentences(context), "(no passages)")


def render_answer_sentences(answer: str) -> str:
    """What ``$answer_sentences`` shows: the answer's sentences, numbered from 1."""
    return _sentence_lines(answer_sentences(answer), "(empty answer)")


@functools.lru_cache(maxsize=16)
def _template_parts(text: str) -> tuple[str | tuple[str], ...]:
    """The template split once: literal text, and ``(name,)`` where a placeholder goes."""
    parts: list[str | tuple[str]] = []
    position = 0
    for match in string.Template.pattern.finditer(text):
        escaped = match.group("escaped") is not None
        parts.append(text[position : match.start()] + ("$" if escaped else ""))
        if not escaped:
            parts.append((match.group("named") or match.group("braced"),))
        position = match.end()
    parts.append(text[position:])
    return tuple(parts)


@functools.lru_cache(maxsize=16)
def _template_parts_inner(text: str) -> tuple[str | tuple[str], ...]:
    """``_template_parts`` with the literal text JSON-encoded (``_inner``)."""
    return tuple(_inner(part) if isinstance(part, str) else part for part in _template_parts(text))


def _fields(item: JudgeItem) -> tuple[str, Sequence[ContextChunk], str, str | None]:
    """What a prompt is rendered from, for one item: question, context, answer, reference."""
    q = item.question
    return q.question, item.context, item.record.answer, q.reference_answer


class Prompt(NamedTuple):
    """A loaded, checked prompt file."""

    path: Path
    text: str
    sha256: str
    """Hash of the exact text: part of the judge fingerprint (the name is not)."""
    task: str = "answer"
    """What the prompt asks (a task's name, ``judge.judging.tasks``): it was checked for that
    task's placeholders. Only an ``answer`` prompt has a mode and renders items."""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def uses_reference(self) -> bool:
        """Whether the reference answer reaches the judge (``$reference`` is in the text)."""
        return any(part == ("reference",) for part in _template_parts(self.text))

    @property
    def mode(self) -> Mode:
        """How the judge gives its evidence, from the placeholders (module docstring)."""
        return _mode(frozenset(p[0] for p in _template_parts(self.text) if isinstance(p, tuple)))

    def request_schema(self, item: JudgeItem) -> dict[str, Any]:
        """The reply schema sent with this item's request (``verdict.request_schema``)."""
        return request_schema(self.mode, item.record.answer)

    def render(
        self,
        question: str,
        context: Sequence[ContextChunk],
        answer: str,
        reference: str | None = None,
    ) -> str:
        """The prompt with the inputs JSON-encoded into it (no reference renders as ``""``)."""
        # Rank is the list order; a bare number field only gives a small model something to
        # copy into its evidence.
        # The same text as string.Template(...).substitute with each value json.dumps'd
        # (tests/judging/test_prompts.py checks), built faster: it runs for every item.
        values = {
            "question": lambda: _string(question),
            "context": lambda: _chunks(context),
            "answer": lambda: _string(answer),
            "reference": lambda: _string(reference or ""),
            "context_sentences": lambda: render_context_sentences(context),
            "answer_sentences": lambda: render_answer_sentences(answer),
        }
        return "".join(
            part if isinstance(part, str) else values[part[0]]()
            for part in _template_parts(self.text)
        )

    def render_json(
        self,
        question: str,
        context: Sequence[ContextChunk],
        answer: str,
        reference: str | None = None,
    ) -> str:
        """``json.dumps(self.render(...), ensure_ascii=False)``, byte for byte, built from the
        parts' encodings: the template's text and each chunk are encoded once, not once per
        item (a batch export writes every prompt as a JSON string; tests/judging/test_prompts.py
        checks)."""
        values = {
            "question": lambda: _inner(_string(question)),
            "context": lambda: _chunks_inner(context),
            "answer": lambda: _inner(_string(answer)),
            "reference": lambda: _inner(_string(reference or "")),
            "context_sentences": lambda: _inner(render_context_sentences(context)),
            "answer_sentences": lambda: _inner(render_answer_sentences(answer)),
        }
        inner = "".join(
            [
                part if isinstance(part, str) else values[part[0]]()
                for part in _template_parts_inner(self.text)
            ]
        )
        return f'"{inner}"'

    def render_item(self, item: JudgeItem) -> str:
        """The prompt for one item: every caller renders the same fields, the reference too."""
        return self.render(*_fields(item))

    def render_item_json(self, item: JudgeItem) -> str:
        """``render_item``'s prompt as a JSON string (``render_json``), the same fields."""
        return self.render_json(*_fields(item))

    def fill(self, **texts: str) -> str:
        """The prompt of a further judgement (``chunk``, ...) with each text
        JSON-encoded into its placeholder, marker-safe, as ``render`` encodes the answer's.
        Every placeholder of the text must be given (``load_prompt`` checked which it has)."""
        return "".join(
            part if isinstance(part, str) else _string(texts[part[0]])
            for part in _template_parts(self.text)
        )


def unread_prompt(path: Path, shipped: Path) -> Path:
    """The prompt file a judge that reads no prompt is run with (the lexical judge, or none at
    all: ``check --no-judge``): ``path``, or the shipped ``shipped`` when ``path`` does not
    exist, with a warning, so that a judge.toml naming a prompt it does not carry still runs
    without a model. Every judge that reads its prompt keeps the error naming the file."""
    if path.is_file() or not shipped.is_file():
        return path
    logger.warning(
        "%s: prompt file not found; the judge reads no prompt, so the shipped %s stands in "
        "(a judge that reads prompts would stop here: fix judge.prompt)",
        path,
        shipped.name,
    )
    return shipped


def load_prompt(
    path: Path, task: TaskPrompt = ANSWER_PROMPT, others: Sequence[TaskPrompt] = ()
) -> Prompt:
    """Read and check a prompt file for ``task`` (its placeholders: module docstring).
    ``others``: the other tasks' prompts, so that a file written for one of them is refused by
    name."""
    setting = task.setting
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Notepad's) is no part of it
    except FileNotFoundError:
        raise PromptError(f"{path}: prompt file not found ({setting} in judge.toml)") from None
    except UnicodeDecodeError:
        raise PromptError(f"{path}: not UTF-8; save the prompt as UTF-8") from None
    except IsADirectoryError:
        raise PromptError(
            f"{path}: a folder, not a prompt file ({setting} in judge.toml)"
        ) from None
    template = string.Template(text)
    if not template.is_valid():
        raise PromptError(
            f"{path}: a '$' that is not a placeholder; write '$$' for a literal dollar sign"
        )
    found = set(template.get_identifiers())
    known = {spec.task: spec for spec in (ANSWER_PROMPT, *others, task)}
    other = _task_of(found, list(known.values()))
    problems = _answer_problems(found) if task is ANSWER_PROMPT else _task_problems(task, found)
    if other is not None and other.task != task.task:
        # What it lacks for its own task too: a prompt of the right task with one placeholder
        # missing can have exactly another task's placeholders.
        raise PromptError(
            f"{path}: a prompt for the {other.words} (its placeholders are "
            f"{_listed(found)}), given as {setting}, which needs a prompt for the "
            f"{task.words} with {_listed(task.placeholders)} (as {task.shipped} has): "
            + "; ".join(problems)
        )
    if problems:
        raise PromptError(f"{path}: " + "; ".join(problems))
    return Prompt(path, text, text_sha256(text), task.task)


def _listed(names: set[str] | tuple[str, ...]) -> str:
    return ", ".join(f"${name}" for name in (sorted(names) if isinstance(names, set) else names))


def _task_of(found: set[str], tasks: Sequence[TaskPrompt]) -> TaskPrompt | None:
    """The one task whose placeholders ``found`` are exactly (all required ones, nothing
    else), or None: a prompt that fits no task is reported by what it lacks or has too many
    of, as a prompt of the task it was given for."""
    fits = [
        task
        for task in tasks
        if (
            not _answer_problems(found)
            if task is ANSWER_PROMPT
            else set(task.placeholders) == found
        )
    ]
    if len(fits) == 1:
        return fits[0]
    # The answer prompt's own marks ($context, $context_sentences) say what it is for even
    # when something else is wrong with it; a placeholder no other task has ($chunk) says
    # that task's.
    if found & {"context", "context_sentences", "answer_sentences"}:
        return ANSWER_PROMPT
    for task in tasks:
        own = set(task.placeholders) - PLACEHOLDERS
        for other in tasks:
            if other is not task:
                own -= set(other.placeholders)
        if own & found:
            return task
    return None


def _task_problems(task: TaskPrompt, found: set[str]) -> list[str]:
    problems = []
    required = task.placeholders
    if missing := [name for name in required if name not in found]:
        problems.append("missing placeholder " + _listed(tuple(missing)))
    if unknown := sorted(found - set(required)):
        problems.append(
            f"unknown placeholder {_listed(set(unknown))} (allowed in the "
            f"{task.words}'s prompt: {_listed(required)})"
        )
    return problems


def _answer_problems(found: set[str]) -> list[str]:
    problems = []
    stands_for = {SENTENCE_PLACEHOLDERS.get(name, name) for name in found}
    if missing := sorted(set(REQUIRED_PLACEHOLDERS) - stands_for):
        problems.append("missing placeholder " + ", ".join(f"${name}" for name in missing))
    if unknown := sorted(found - PLACEHOLDERS):
        problems.append(
            "unknown placeholder "
            + ", ".join(f"${name}" for name in unknown)
            + f" (allowed: {ALLOWED})"
        )
    if {"context", "context_sentences"} <= found:
        problems.append(
            "$context and $context_sentences together; use one (the chunks as JSON for quoted "
            "evidence, or as numbered sentences for evidence by number)"
        )
    if "answer_sentences" in found and "context_sentences" not in found:
        problems.append(
            "$answer_sentences needs $context_sentences (each answer sentence cites a numbered "
            "context sentence)"
        )
    return problems


def _mode(placeholders: frozenset[str]) -> Mode:
    if "answer_sentences" in placeholders:
        return "sentences"
    if "context_sentences" in placeholders:
        return "cited"
    return "quote"
