"""Judge prompt files: versioned Markdown in ``prompts/`` with ``$placeholders``.

A prompt names exactly the placeholders ``$question``, ``$context`` and ``$answer`` (``$$`` is a
literal dollar sign). Each is replaced by the JSON encoding of its value, so the inputs reach the
model as data: an answer that says "ignore the instructions above" is a JSON string inside the
input, not a line of the instructions. A missing or unknown placeholder is an error naming it,
raised when the prompt loads, before any judging.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from judge.errors import PromptError
from judge.hashing import text_sha256
from judge.judging.items import ContextChunk

PLACEHOLDERS = frozenset({"question", "context", "answer"})
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


def _as_data(value: object, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    for marker in CONTROL_MARKERS:
        text = text.replace(marker, "\\u003c" + marker[1:])
    return text


class Prompt(NamedTuple):
    """A loaded, checked prompt file."""

    path: Path
    text: str
    sha256: str
    """Hash of the exact text: part of the judge fingerprint (the name is not)."""

    @property
    def name(self) -> str:
        return self.path.name

    def render(self, question: str, context: Sequence[ContextChunk], answer: str) -> str:
        """The prompt with the inputs JSON-encoded into it."""
        # Rank is the list order; a bare number field only gives a small model something to
        # copy into its evidence.
        chunks = [{"chunk_id": c.chunk_id, "text": c.text} for c in context]
        return string.Template(self.text).substitute(
            question=_as_data(question),
            context=_as_data(chunks, indent=1),
            answer=_as_data(answer),
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
    if missing := sorted(PLACEHOLDERS - found):
        problems.append("missing placeholder " + ", ".join(f"${name}" for name in missing))
    if unknown := sorted(found - PLACEHOLDERS):
        problems.append(
            "unknown placeholder "
            + ", ".join(f"${name}" for name in unknown)
            + " (allowed: $question, $context, $answer)"
        )
    if problems:
        raise PromptError(f"{path}: " + "; ".join(problems))
    return Prompt(path, text, text_sha256(text))
