"""The JSON state files the harness writes and reads back, and its pointer files.

A report folder's manifest.json and report.json, the pinned baseline, a batch manifest,
review.html's marks file, each ``history.jsonl`` line: one reader (``read_json_document``), with
the JSONL loader's limits and words (the one parse path, ``judge.io.json``), the format version
checked on every read (``check_version``); and one writer (``json_document_text``,
``write_json_document``), which refuses what that reader would refuse, so that the harness never
saves a file that every later command would trip on. Each kind of file is one ``StateFile``
constant beside its model. A pointer file (``reports/latest``) holds one name
(``read_pointer``, ``write_pointer``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TypeVar, overload

from pydantic import BaseModel, ValidationError

from judge.errors import HarnessError, InputError
from judge.io.json import (
    JsonProblem,
    decode_utf8,
    encoding_problem,
    over_limit,
    parse_json,
    show_value,
)
from judge.io.limits import DEFAULT_MAX_FILE_MB
from judge.io.limits import POINTER_MAX_BYTES as POINTER_MAX_BYTES
from judge.io.text import describe_char, split_lines
from judge.io.validation import M, describe_validation_error, type_error
from judge.io.write import write_atomic

Text = TypeVar("Text", str, bytes)


Upgrade = Callable[[int, dict[str, Any]], dict[str, Any]]
"""Reads a document of an older format version (given with its version) as the current one."""


class StateFile(NamedTuple):
    """One kind of JSON state file: its name in messages, its format version, its size limit
    and the wording of its refusals. Each kind is one constant beside its model."""

    what: str
    """What the file is, in messages ("baseline", "batch manifest")."""
    remedy: str
    """What to do when the file cannot be used ("re-pin it with ...")."""
    current: int | None = None
    """The format version this judge writes and reads; None: the file has no version."""
    version_field: str = "format_version"
    upgrade: Upgrade | None = None
    """Reads a document of an older version as one of ``current`` (raising ``ValueError`` when
    it cannot); None: an older version is refused with ``remedy``."""
    version_refusal: Callable[[Path, dict[str, Any]], str | None] | None = None
    """The whole refusal for a version of this file's own wording (an old format that needs
    its own explanation), or None to let the general rules decide."""
    damaged: str = "{where}: {problem}; {remedy}"
    """A file that cannot be read as JSON. ``{where}`` is ``path:line`` when the line is known,
    ``{located}`` the problem with its line ("line 3: ..."), beside ``{path}``, ``{problem}``
    and ``{remedy}``."""
    invalid: str = "{path}: {problem}; {remedy}"
    """JSON that the model refuses (``{problem}``: every field's problem, joined)."""
    not_json: str = "not valid JSON"
    max_mb: float = DEFAULT_MAX_FILE_MB
    error: type[HarnessError] = InputError
    """Raised with the one line (an ``InputError`` holds it as its one problem)."""

    @property
    def version_noun(self) -> str:
        return "format" if self.version_field == "format_version" else self.version_field

    def fail(self, message: str) -> HarnessError:
        if issubclass(self.error, InputError):
            return self.error([message])
        return self.error(message)

    def damaged_error(self, path: Path, problem: JsonProblem) -> HarnessError:
        line = problem.line
        return self.fail(
            self.damaged.format(
                path=path,
                where=f"{path}:{line}" if line else str(path),
                located=f"line {line}: {problem.text}" if line else problem.text,
                problem=problem.text,
                remedy=self.remedy,
            )
        )


def version_problem(value: dict[str, Any], kind: StateFile) -> tuple[dict[str, Any], str | None]:
    """``value`` as a document of ``kind.current`` (upgraded from an older version when
    ``kind.upgrade`` can), or why it cannot be read: no version, one that is not an integer,
    a newer one (upgrade judge), an older one nothing upgrades. The reason has no location:
    the caller puts the file (or the file and line) before it."""
    if kind.current is None:
        return value, None
    field, noun, current = kind.version_field, kind.version_noun, kind.current
    if field not in value:
        return value, (
            f"{kind.what} without a {field} (this judge reads {noun} {current}); {kind.remedy}"
        )
    version = value[field]
    if type(version) is not int:
        return value, f"{field}: {type_error(['an integer'], version)}"
    if version == current:
        return value, None
    if version > current:
        return value, (
            f"{kind.what} {noun} {version} is newer than this judge reads (up to {current}); "
            f"upgrade judge, or {kind.remedy}"
        )
    if kind.upgrade is None:
        return value, (
            f"{kind.what} {noun} {version} is older than this judge reads ({current}); "
            f"{kind.remedy}"
        )
    try:
        upgraded = kind.upgrade(version, value)
    except ValueError as exc:
        return value, f"{kind.what} {noun} {version} cannot be read as {noun} {current} ({exc})"
    return {**upgraded, field: current}, None


def check_version(path: Path, value: dict[str, Any], kind: StateFile) -> dict[str, Any]:
    """``version_problem`` for a whole file: its refusal is one line naming the file."""
    if kind.version_refusal is not None:
        refusal = kind.version_refusal(path, value)
        if refusal is not None:
            raise kind.fail(refusal)
    upgraded, problem = version_problem(value, kind)
    if problem is not None:
        raise kind.fail(f"{path}: {problem}")
    return upgraded


def _decode(path: Path, raw: bytes, kind: StateFile, encoding: str) -> str:
    """Strict UTF-8 (``utf-8-sig``: a leading BOM dropped); the first bad byte, located."""
    text, problem = decode_utf8(raw, encoding)
    if problem is not None:
        raise kind.damaged_error(path, problem)
    return text


def load_json_document(path: Path, kind: StateFile) -> Any:
    """The JSON value of a whole file, decoded and parsed as a JSONL line is (``decode_utf8``
    and ``parse_json``: the same refusals in the same words): the size (``kind.max_mb``),
    strict UTF-8 (a leading BOM is dropped), integer digits, nesting depth, lone surrogates.
    Anything else is one located line (``kind.damaged``), never a traceback.
    """
    if not path.exists():
        raise kind.damaged_error(path, JsonProblem("file not found"))
    if not path.is_file():
        raise kind.damaged_error(path, JsonProblem("not a regular file"))
    size = path.stat().st_size
    if size > kind.max_mb * 1024 * 1024:
        too_large = over_limit("the file", size, kind.max_mb, f"a {kind.what}")
        raise kind.damaged_error(path, JsonProblem(too_large))
    text = _decode(path, path.read_bytes(), kind, "utf-8-sig")
    value, problem = parse_json(text, kind.not_json)
    if problem is not None:
        raise kind.damaged_error(path, problem)
    return value


def _state_file(
    kind: StateFile | None,
    what: str | None,
    current: int | None,
    version_field: str,
    upgrade: Upgrade | None,
) -> StateFile:
    """``kind``, or a plain one built from the keywords (a file without wording of its own)."""
    if kind is not None:
        return kind
    if what is None:
        raise TypeError("give a StateFile or what= (what the file is, for its messages)")
    return StateFile(
        what=what,
        remedy="delete the file, or write it again with the command that made it",
        current=current,
        version_field=version_field,
        upgrade=upgrade,
    )


@overload
def read_json_document(
    path: Path,
    model: None = None,
    kind: StateFile | None = None,
    *,
    what: str | None = None,
    current: int | None = None,
    version_field: str = "format_version",
    upgrade: Upgrade | None = None,
) -> dict[str, Any]: ...
@overload
def read_json_document(
    path: Path,
    model: type[M],
    kind: StateFile | None = None,
    *,
    what: str | None = None,
    current: int | None = None,
    version_field: str = "format_version",
    upgrade: Upgrade | None = None,
) -> M: ...
def read_json_document(
    path: Path,
    model: type[M] | None = None,
    kind: StateFile | None = None,
    *,
    what: str | None = None,
    current: int | None = None,
    version_field: str = "format_version",
    upgrade: Upgrade | None = None,
) -> M | dict[str, Any]:
    """A JSON state file: read (``load_json_document``), an object, its format version
    checked (``check_version``), then validated into ``model`` (None: the object itself).
    Every refusal is one line that names the file and says what to do.

    ``kind`` describes the file; without it, ``what``, ``current``, ``version_field`` and
    ``upgrade`` make a plain one (``current`` None: no version is checked)."""
    kind = _state_file(kind, what, current, version_field, upgrade)
    value = load_json_document(path, kind)
    if not isinstance(value, dict):
        raise kind.damaged_error(
            path, JsonProblem(f"expected a JSON object, got {type(value).__name__}")
        )
    value = check_version(path, value, kind)
    if model is None:
        return value
    return validate_document(path, value, model, kind)


def validate_document(path: Path, value: dict[str, Any], model: type[M], kind: StateFile) -> M:
    """``value`` (a state file's object, its version checked) validated into ``model``;
    refused in ``read_json_document``'s one line. For a reader that completes the object from
    further files first (a report folder's ``report.json``, ``judge.record.store``)."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(describe_validation_error(exc))
        raise kind.fail(
            kind.invalid.format(path=path, problem=problems, remedy=kind.remedy)
        ) from None
    except (KeyError, TypeError, IndexError, AttributeError, ArithmeticError) as exc:
        # A model's own conversion (an older format read as the current one) met a value of
        # another shape than it expects: the file is invalid, said as one line, never a
        # traceback (found by tests/hostile/test_converters.py's mutated state files).
        problem = (
            "a value is not of the shape this judge reads "
            f"({type(exc).__name__} {show_value(str(exc), 80)})"
        )
        raise kind.fail(
            kind.invalid.format(path=path, problem=problem, remedy=kind.remedy)
        ) from None


def json_document_text(
    value: BaseModel | dict[str, Any],
    kind: StateFile | None = None,
    name: object = None,
    indent: int = 2,
    *,
    what: str | None = None,
    by_alias: bool = False,
    extra: dict[str, Any] | None = None,
) -> str:
    """The text of a state file (``json.dumps``, UTF-8, indented, a final newline), refused
    with an ``InputError`` when ``load_json_document`` would refuse it: the harness never
    writes a file that every later command would trip on. ``name``: the file, in the message
    (default: ``kind.what``); ``extra``: keys written after the value's own."""
    kind = _state_file(kind, what, None, "format_version", None)
    try:
        data = (
            value.model_dump(mode="json", by_alias=by_alias)
            if isinstance(value, BaseModel)
            else value
        )
        text = json.dumps(data | (extra or {}), ensure_ascii=False, indent=indent) + "\n"
    except (ValueError, RecursionError) as exc:  # half a character, too deep, too long an int
        _refuse(kind, name, encoding_problem(exc))
    return checked_document_text(text, kind, name)


def checked_document_text(text: str, kind: StateFile, name: object = None) -> str:
    """``text`` (a state file's JSON, encoded by the caller: a model's own fast encoder for a
    large file) if ``load_json_document`` would read it back, else the same ``InputError`` as
    ``json_document_text``: one writer's rules, whoever encoded the text."""
    parsed = parse_json(checked_size(text, kind, name))[1]
    if parsed is not None:
        _refuse(kind, name, parsed.text)
    return text


def checked_size(text: Text, kind: StateFile, name: object = None) -> Text:
    """``text`` if it is UTF-8 and within ``kind``'s size limit, else ``checked_document_text``'s
    ``InputError``: the part of the writer's rules that needs no reading back (for a text whose
    parts were each checked, ``judge.record.store.record_json``, which hands over the UTF-8 bytes
    pydantic's serializer made: they are measured as they are)."""
    if isinstance(text, bytes):
        size = len(text)
    else:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            _refuse(kind, name, encoding_problem(exc))
    if size > kind.max_mb * 1024 * 1024:
        _refuse(kind, name, over_limit("it", size, kind.max_mb, f"a {kind.what}"))
    return text


def _refuse(kind: StateFile, name: object, problem: str) -> NoReturn:
    raise InputError(
        [
            f"{name or kind.what}: the {kind.what} is not written: {problem}, and it could "
            "not be read back"
        ]
    )


def write_json_document(
    path: Path,
    value: BaseModel | dict[str, Any],
    kind: StateFile | None = None,
    indent: int = 2,
    *,
    what: str | None = None,
) -> None:
    """Write a state file atomically, after ``json_document_text`` checked it can be read."""
    write_atomic(path, json_document_text(value, kind, path, indent, what=what))


def _pointer_problem(text: str) -> JsonProblem | None:
    lines = split_lines(text.removesuffix("\n"))
    if len(lines) > 1:
        return JsonProblem("holds more than one line", line=2)
    name = lines[0].strip()
    if not name:
        return JsonProblem("is empty")
    if not name.isprintable():
        bad = next(char for char in name if not char.isprintable())
        return JsonProblem(f"holds {describe_char(bad)}", line=1)
    return None


def read_pointer(path: Path, kind: StateFile) -> str:
    """The name a pointer file holds (one line, strict UTF-8, at most ``POINTER_MAX_BYTES``; a
    leading BOM, from an editor, dropped); anything else is one located line
    (``kind.damaged``)."""
    with path.open("rb") as handle:
        raw = handle.read(POINTER_MAX_BYTES + 1)
    if len(raw) > POINTER_MAX_BYTES:
        too_long = JsonProblem(f"is longer than a pointer file ({POINTER_MAX_BYTES} bytes)")
        raise kind.damaged_error(path, too_long)
    text = _decode(path, raw, kind, "utf-8-sig")
    problem = _pointer_problem(text)
    if problem is not None:
        raise kind.damaged_error(path, problem)
    return text.strip()


def write_pointer(path: Path, name: str, kind: StateFile) -> None:
    """Write a pointer file atomically; a name ``read_pointer`` would refuse is refused."""
    text = name + "\n"
    problem = _pointer_problem(text)
    if problem is None and len(text.encode("utf-8", errors="replace")) > POINTER_MAX_BYTES:
        problem = JsonProblem(f"is longer than a pointer file ({POINTER_MAX_BYTES} bytes)")
    if problem is not None:
        raise InputError([f"{path}: the {kind.what} is not written: the name {problem.text}"])
    write_atomic(path, text)
