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

The further judgements (``judge.judging.graded``) have prompts of their own, loaded with their
task (``load_prompt(path, task)``), each with its own placeholders, JSON-encoded the same way:

- ``chunk`` (``judge.chunks.prompt``): ``$question`` and ``$chunk`` (one retrieved chunk's
  text), both required;
- ``correctness`` (``judge.correctness.prompt``): ``$question``, ``$reference`` (``""`` when
  the question has none: an out-of-scope question) and ``$answer``, all required.

A prompt file written for another task (the answer prompt given as ``judge.chunks.prompt``) is
refused by name: its placeholders say which task it is for.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, NamedTuple

from judge.errors import PromptError
from judge.hashing import text_sha256
from judge.judging.evidence import Sentence, answer_sentences, context_sentences
from judge.judging.graded import TASKS, Task
from judge.judging.items import JudgeItem
from judge.judging.types import ContextChunk, Mode
from judge.judging.verdict import request_schema

REQUIRED_PLACEHOLDERS = ("question", "context", "answer")
OPTIONAL_PLACEHOLDERS = ("reference",)
#: The sentence forms, each standing in for a required placeholder (``context_sentences`` for
#: ``context``; ``answer_sentences`` beside or instead of ``answer``).
SENTENCE_PLACEHOLDERS = {"context_sentences": "context", "answer_sentences": "answer"}
PLACEHOLDERS = frozenset(REQUIRED_PLACEHOLDERS + OPTIONAL_PLACEHOLDERS) | set(SENTENCE_PLACEHOLDERS)
ALLOWED = (
    "$question, $context or $context_sentences, $answer and/or $answer_sentences, and "
    "optionally $reference"
)
#: The placeholders of the further judgements' prompts: all required, none optional.
TASK_PLACEHOLDERS: dict[Task, tuple[str, ...]] = {
    "chunk": ("question", "chunk"),
    "correctness": ("question", "reference", "answer"),
}
#: The setting that names each task's prompt file (what an error tells the user to fix).
PROMPT_SETTINGS: dict[Task, str] = {
    "answer": "judge.prompt",
    "chunk": "judge.chunks.prompt",
    "correctness": "judge.correctness.prompt",
}
#: The prompt shipped for each task, named when a file of another task is given.
SHIPPED: dict[Task, str] = {
    "answer": "prompts/judge.v1.md",
    "chunk": "prompts/chunk.v1.md",
    "correctness": "prompts/correctness.v1.md",
}
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
    which was a quarter of exporting 100,000 items (docs/benchmarks.md)."""
    if not context:
        return "[]"
    entries = ",\n".join(
        f' {{\n  "chunk_id": {encode_basestring(c.chunk_id)},\n  "text": {encode_basestring(c.text)}\n }}'
        for c in context
    )
    return _safe(f"[\n{entries}\n]")


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


class Prompt(NamedTuple):
    """A loaded, checked prompt file."""

    path: Path
    text: str
    sha256: str
    """Hash of the exact text: part of the judge fingerprint (the name is not)."""
    task: Task = "answer"
    """What the prompt asks (``judge.judging.graded.Task``): it was checked for that task's
    placeholders. Only an ``answer`` prompt has a mode and renders items."""

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

    def render_item(self, item: JudgeItem) -> str:
        """The prompt for one item: every caller renders the same fields, the reference too."""
        return self.render(
            item.question.question,
            item.context,
            item.record.answer,
            item.question.reference_answer,
        )

    def fill(self, **texts: str) -> str:
        """The prompt of a further judgement (``chunk``, ``correctness``) with each text
        JSON-encoded into its placeholder, marker-safe, as ``render`` encodes the answer's.
        Every placeholder of the text must be given (``load_prompt`` checked which it has)."""
        return "".join(
            part if isinstance(part, str) else _string(texts[part[0]])
            for part in _template_parts(self.text)
        )


def load_prompt(path: Path, task: Task = "answer") -> Prompt:
    """Read and check a prompt file for ``task`` (its placeholders: module docstring)."""
    setting = PROMPT_SETTINGS[task]
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
    other = _task_of(found)
    if other is not None and other != task:
        raise PromptError(
            f"{path}: a prompt for the {_TASK_NAMES[other]} (its placeholders are "
            f"{_listed(found)}), given as {setting}, which needs a prompt for the "
            f"{_TASK_NAMES[task]} with {_listed(_needed(task))} (as {SHIPPED[task]} has)"
        )
    problems = _answer_problems(found) if task == "answer" else _task_problems(task, found)
    if problems:
        raise PromptError(f"{path}: " + "; ".join(problems))
    return Prompt(path, text, text_sha256(text), task)


_TASK_NAMES: dict[Task, str] = {
    "answer": "answer's verdict",
    "chunk": "chunk grade",
    "correctness": "correctness verdict",
}


def _listed(names: set[str] | tuple[str, ...]) -> str:
    return ", ".join(f"${name}" for name in (sorted(names) if isinstance(names, set) else names))


def _needed(task: Task) -> tuple[str, ...]:
    return REQUIRED_PLACEHOLDERS if task == "answer" else TASK_PLACEHOLDERS[task]


def _task_of(found: set[str]) -> Task | None:
    """The one task whose placeholders ``found`` are exactly (all required ones, nothing
    else), or None: a prompt that fits no task is reported by what it lacks or has too many
    of, as a prompt of the task it was given for."""
    fits = [
        task
        for task in TASKS
        if (
            not _answer_problems(found)
            if task == "answer"
            else set(TASK_PLACEHOLDERS[task]) == found
        )
    ]
    if len(fits) == 1:
        return fits[0]
    # The answer prompt's own marks ($context, $context_sentences) say what it is for even
    # when something else is wrong with it; $chunk says a chunk prompt.
    if found & {"context", "context_sentences", "answer_sentences"}:
        return "answer"
    if "chunk" in found:
        return "chunk"
    return None


def _task_problems(task: Task, found: set[str]) -> list[str]:
    problems = []
    required = TASK_PLACEHOLDERS[task]
    if missing := [name for name in required if name not in found]:
        problems.append("missing placeholder " + _listed(tuple(missing)))
    if unknown := sorted(found - set(required)):
        problems.append(
            f"unknown placeholder {_listed(set(unknown))} (allowed in the "
            f"{_TASK_NAMES[task]}'s prompt: {_listed(required)})"
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
