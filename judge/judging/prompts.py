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
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import NamedTuple

from judge.errors import PromptError
from judge.hashing import text_sha256
from judge.judging.items import ContextChunk, JudgeItem

REQUIRED_PLACEHOLDERS = ("question", "context", "answer")
OPTIONAL_PLACEHOLDERS = ("reference",)
PLACEHOLDERS = frozenset(REQUIRED_PLACEHOLDERS + OPTIONAL_PLACEHOLDERS)
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

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def uses_reference(self) -> bool:
        """Whether the reference answer reaches the judge (``$reference`` is in the text)."""
        return any(part == ("reference",) for part in _template_parts(self.text))

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
            "question": _string(question),
            "context": _chunks(context),
            "answer": _string(answer),
            "reference": _string(reference or ""),
        }
        return "".join(
            part if isinstance(part, str) else values[part[0]]
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


def load_prompt(path: Path) -> Prompt:
    """Read and check a prompt file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptError(f"{path}: prompt file not found (judge.prompt in judge.toml)") from None
    except UnicodeDecodeError:
        raise PromptError(f"{path}: not UTF-8; save the prompt as UTF-8") from None
    except IsADirectoryError:
        raise PromptError(
            f"{path}: a folder, not a prompt file (judge.prompt in judge.toml)"
        ) from None
    template = string.Template(text)
    if not template.is_valid():
        raise PromptError(
            f"{path}: a '$' that is not a placeholder; write '$$' for a literal dollar sign"
        )
    found = set(template.get_identifiers())
    problems = []
    if missing := sorted(set(REQUIRED_PLACEHOLDERS) - found):
        problems.append("missing placeholder " + ", ".join(f"${name}" for name in missing))
    if unknown := sorted(found - PLACEHOLDERS):
        problems.append(
            "unknown placeholder "
            + ", ".join(f"${name}" for name in unknown)
            + " (allowed: $question, $context, $answer, and optionally $reference)"
        )
    if problems:
        raise PromptError(f"{path}: " + "; ".join(problems))
    return Prompt(path, text, text_sha256(text))
