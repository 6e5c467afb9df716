"""Pydantic's validation errors said as what a field takes, and records validated by line.

A value of the wrong type is said as what the field takes and what was given
(``faithfulness: must be an integer such as 2, not "2" (remove the quotes)``), never as
pydantic's own words; ``parse_records`` validates a file's lines (``judge.io.jsonl.Line``) and
says every problem as ``path:line: field: what is wrong``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from judge.errors import InputError
from judge.io.json import show_value
from judge.io.jsonl import Line

M = TypeVar("M", bound=BaseModel)


# Pydantic's type errors, said as what the field takes; the value given is shown after it.
_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "tuple_type": "a list",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}
_EXAMPLE = {"an integer": " such as 2", "a number": " such as 0.5"}


def _quoted_scalar(text: str) -> bool:
    """True when ``text`` is a number or a bool written inside quotes, like ``"2"``."""
    if len(text) > 40:
        return False
    try:
        return type(json.loads(text)) in (int, float, bool)
    except (ValueError, RecursionError):
        return False


def type_error(expected: list[str], value: object) -> str:
    """``must be <what the field takes>, not <value>``: a value of the wrong type, said as what
    to write instead (and ``(remove the quotes)`` for a number or a bool given as a string)."""
    if len(expected) == 1:
        wanted = expected[0] + _EXAMPLE.get(expected[0], "")
    else:
        wanted = ", ".join(expected[:-1]) + " or " + expected[-1]
    hint = " (remove the quotes)" if isinstance(value, str) and _quoted_scalar(value) else ""
    return f"must be {wanted}, not {show_value(value)}{hint}"


def _is_union_tag(part: str) -> bool:
    """Pydantic's name for one alternative of a union (``int``, ``tuple[str, ...]``), which
    it adds to the location of that alternative's error; no field is named like that."""
    return part in ("str", "int", "float", "bool") or "[" in part


#: The most characters of one field name (a key of the input) shown in a message.
_NAME_SHOWN = 60


def _shown_part(part: object) -> str:
    """One part of a field's location as a message shows it: a key holding a line break, an
    escape or another invisible character is shown escaped (as JSON writes it), so that a key
    of the input can never split the message or reach a terminal; a long key is cut."""
    text = str(part)
    if not text.isprintable():
        text = json.dumps(text, ensure_ascii=False)[1:-1]
        text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= _NAME_SHOWN else text[: _NAME_SHOWN - 1] + "…"


def describe_validation_error(error: ValidationError) -> list[str]:
    """Turn a pydantic error into ``field: what is wrong`` phrases, one per problem.

    A value of the wrong type is said as what the field takes and what was given
    (``faithfulness: must be an integer such as 2, not "2" (remove the quotes)``); the errors
    of a union's alternatives (``chunking.x.str``, ``chunking.x.int``, ...) become one line.
    """
    phrases: list[str] = []
    items = error.errors()
    index = 0
    while index < len(items):
        item = items[index]
        loc = [_shown_part(part) for part in item["loc"]]
        location = ".".join(loc)
        kind = item["type"]
        if kind == "missing":
            phrases.append(f"field '{location}' missing")
        elif kind == "extra_forbidden":
            phrases.append(f"unknown field '{location}'")
        elif kind in _EXPECTED:
            # The alternatives of a union: consecutive type errors on one value, each under
            # the union's location plus the alternative's tag.
            expected = [_EXPECTED[kind]]
            group = index + 1
            while (
                _is_union_tag(loc[-1] if loc else "")
                and group < len(items)
                and items[group]["type"] in _EXPECTED
                and [_shown_part(p) for p in items[group]["loc"]][:-1] == loc[:-1]
                and _is_union_tag(str(items[group]["loc"][-1]))
            ):
                expected.append(_EXPECTED[items[group]["type"]])
                group += 1
            if group > index + 1:
                location = ".".join(loc[:-1])
                index = group - 1
            message = type_error(list(dict.fromkeys(expected)), item.get("input"))
            phrases.append(f"{location}: {message}" if location else message)
        else:
            message = item["msg"].removeprefix("Value error, ")
            phrases.append(f"{location}: {message}" if location else message)
        index += 1
    return phrases


@functools.cache
def _many(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    """A validator of a list of ``model`` records (built once per model)."""
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def parse_records(
    path: Path, lines: Iterable[Line], model: type[M], problems: list[str] | None = None
) -> list[tuple[int, M]]:
    """Validate each line against ``model``; collect every problem as ``file:line: ...``.

    With a ``problems`` list, problems are appended to it and the valid records returned, so
    the caller can add its own checks of those records before raising everything together.
    """
    lines = list(lines)
    try:
        # All lines in one call: the same validation, without a call per line. Any problem
        # and they are validated again one by one below, to say which line has which.
        valid = _many(model).validate_python([line.value for line in lines])
    except ValidationError:
        pass
    else:
        return [(line.number, record) for line, record in zip(lines, valid, strict=True)]
    records: list[tuple[int, M]] = []
    collect = problems is not None
    problems = [] if problems is None else problems
    for line in lines:
        try:
            records.append((line.number, model.model_validate(line.value)))
        except ValidationError as exc:
            problems.extend(f"{path}:{line.number}: {p}" for p in describe_validation_error(exc))
    if problems and not collect:
        raise InputError(problems)
    return records


def in_line_order(path: Path, problems: list[str]) -> list[str]:
    """Sort ``path:line: ...`` problems by line, whichever check found them (stable)."""

    def line_of(problem: str) -> int:
        number = problem.removeprefix(f"{path}:").split(":", 1)[0]
        return int(number) if number.isdigit() else 0

    return sorted(problems, key=line_of)
