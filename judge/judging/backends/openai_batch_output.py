"""Reading a batch engine's output files (the OpenAI batch format of
``judge.judging.backends.openai_batch``): each line's ``Reply``, read as the ``openai`` backend
reads a server's answer, and every line that cannot be used, located (``file:line:``).

Shapes: OpenAI's Batch output and error files, ``vllm run-batch``'s output and a Ray Data job's
rows: ``{"custom_id", "response": {"status_code", "body"} | null, "error": null | str | {...}}``.
An engine's error line is a non-ok reply (``truncated`` for a prompt over the context, else
``error``): reported, never stored, never a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from judge.errors import BackendError, BackendRequestError, InputError, PromptTooLong
from judge.io.text import check_readable
from judge.judging.backends.openai import completion_reply, error_message, refusal
from judge.judging.backends.openai_batch import BatchManifest
from judge.judging.verdict import Reply


def engine_reply(line: dict[str, Any]) -> Reply:
    """The ``Reply`` of one output line of a batch engine, read as the ``openai`` backend reads
    a server's answer.

    Shapes: OpenAI's Batch output and error files and ``vllm run-batch``'s output:
    ``{"custom_id", "response": {"status_code", "body"} | null, "error": null | str | {...}}``.
    An error entry, an HTTP error status or a body without a completion is a non-ok reply:
    ``truncated`` when the engine says the prompt does not fit, else ``error``. Raises
    ``ValueError`` for a line of another shape.
    """
    response = line.get("response")
    if response is not None and not isinstance(response, dict):
        raise ValueError(f"'response' must be an object or null, not {type(response).__name__}")
    status = response.get("status_code", 200) if response else None
    if status is not None and type(status) is not int:
        raise ValueError(f"'response.status_code' must be an integer, not {status!r}")
    body = response.get("body") if response else None
    error = line.get("error")
    try:
        if error not in (None, "", {}) or response is None or (status or 0) >= 400:
            message = error_message(error if error not in (None, "", {}) else body)
            code = error.get("code") if isinstance(error, dict) else None
            if isinstance(code, str) and code not in message:
                message = f"{code}: {message}"
            if status is not None and status >= 400:
                raise refusal(status, message)
            # No HTTP status (an error file's line, or an error beside a 2xx): the words decide
            # whether the prompt did not fit, as they do for a refused request.
            failure = refusal(400, message)
            if isinstance(failure, PromptTooLong):
                raise failure
            raise BackendRequestError(f"the engine did not run the request: {message}")
        if isinstance(body, dict) and not body.get("choices") and body.get("error"):
            # An error body under a 2xx status: an engine that does not keep the status (Ray
            # Data's HTTP stage), where a table may also give every row both keys.
            raise refusal(400, error_message(body["error"]))
        return completion_reply(body)
    except PromptTooLong as exc:
        return Reply(kind="truncated", detail=str(exc))
    except BackendError as exc:
        return Reply(kind="error", detail=str(exc))


def _why_not_judged(reply: Reply) -> str:
    if reply.kind == "truncated":
        return (
            f"not judged: {reply.detail} (the prompt does not fit the model's context and is "
            "never cut: serve a longer context or shorten the context chunks)"
        )
    return (
        f"not judged: {reply.detail} (it stays pending: the next 'judge batch export' writes "
        "it again)"
    )


class OutputReader:
    """One pass over the output files: the good replies ``chunk_rows`` at a time, every problem
    located, in file order.

    An item may have an error line and, later, a reply (the failed requests run again and
    imported with the first output): the reply is taken, and the error line is no longer a
    problem. A second line for an item that has its reply is one.
    """

    def __init__(self, manifest: BatchManifest, manifest_path: Path, chunk_rows: int) -> None:
        self.manifest = manifest
        self.requests = {(manifest_path.parent / f.name).resolve() for f in manifest.files}
        self.chunk_rows = chunk_rows
        self.lines = 0
        self.not_judged: dict[str, Reply] = {}
        self._problems: list[str | None] = []
        self._error_lines: dict[str, list[int]] = {}  # item key → its error problems' indices
        self._replied: dict[str, str] = {}  # item key → where its reply was

    @property
    def problems(self) -> list[str]:
        return [p for p in self._problems if p is not None]

    def chunks(self, files: Sequence[Path]) -> Iterator[list[tuple[str, str, Reply]]]:
        rows: list[tuple[str, str, Reply]] = []
        for path in files:
            if path.resolve() in self.requests:
                self._problems.append(
                    f"{path}: a request file of this export, not the engine's output; import "
                    "the files the engine wrote"
                )
                continue
            with path.open("rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    row = self._line(f"{path}:{number}", raw, first=number == 1)
                    if row is not None:
                        rows.append(row)
                        if len(rows) >= self.chunk_rows:
                            yield rows
                            rows = []
        yield rows

    def _line(self, where: str, raw: bytes, first: bool) -> tuple[str, str, Reply] | None:
        """The reply row of one line, or None (a blank line, or a problem recorded)."""
        try:
            text = raw.decode("utf-8-sig" if first else "utf-8")
        except UnicodeDecodeError as exc:
            self._problems.append(f"{where}: not UTF-8 (byte 0x{raw[exc.start]:02x})")
            return None
        if not text.strip():
            return None
        self.lines += 1
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            self._problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            return None
        except (RecursionError, ValueError):
            self._problems.append(f"{where}: not a batch output line (JSON too deep or long)")
            return None
        problem = self._check(value, where)
        if problem:
            self._problems.append(problem)
            return None
        key = value["custom_id"]
        qid = self.manifest.items[key]
        try:
            reply = engine_reply(value)
        except ValueError as exc:
            self._problems.append(f"{where}: {exc}")
            return None
        if reply.kind != "reply":
            self.not_judged[key] = reply
            self._error_lines.setdefault(key, []).append(len(self._problems))
            self._problems.append(f"{where}: question '{qid}' ({key}): {_why_not_judged(reply)}")
            return None
        self._replied[key] = where
        self.not_judged.pop(key, None)
        for index in self._error_lines.pop(key, []):
            self._problems[index] = None  # answered after all
        return key, qid, reply

    def _check(self, value: Any, where: str) -> str:
        """What is wrong with a parsed line before its reply is read ("" when nothing)."""
        if not isinstance(value, dict):
            return f"{where}: expected a JSON object, got {type(value).__name__}"
        key = value.get("custom_id")
        if "response" not in value and "error" not in value:
            if "body" in value and "method" in value:
                return f"{where}: a request line (method, url, body), not a result of the engine"
            return f"{where}: not a batch output line (no 'response' and no 'error')"
        if not isinstance(key, str):
            return f"{where}: 'custom_id' must be a string, not {json.dumps(key)[:40]}"
        if key not in self.manifest.items:
            return (
                f"{where}: custom_id '{key[:80]}' is not an item of this export; import each "
                "output with the manifest of the export it came from"
            )
        if key in self._replied:
            return (
                f"{where}: custom_id '{key}' again (first answered at {self._replied[key]}); "
                "the first is kept"
            )
        return ""


def unreadable_outputs(files: Sequence[Path], max_file_mb: float) -> list[str]:
    """Every output file that cannot be read, located (an empty, 0-byte file included)."""
    unreadable = []
    for path in files:
        try:
            check_readable(path, max_file_mb)
        except InputError as exc:
            unreadable += exc.problems
            continue
        if path.stat().st_size == 0:  # never "0 lines": an output that is not there
            unreadable.append(
                f"{path}: the file is empty (0 bytes), not a batch engine's output; import the "
                "files the engine wrote (a download or a copy cut short leaves an empty file)"
            )
    return unreadable
