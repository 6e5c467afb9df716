"""``manifest.json``: what a report folder measured, with what, on what. Format version first.

The one typed contract of a report folder: written by the pipeline, read (and its version
checked) by every command that opens a folder. Do not change the fields or their meaning
without raising ``FORMAT_VERSION``: older folders are then refused with a message that says
what to do, instead of being misread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judge.config import Config, RetrievalConfig
from judge.errors import ConfigError
from judge.inputs.runs import RunMeta
from judge.jsonl import (
    StateFile,
    describe_validation_error,
    json_document_text,
)
from judge.results.tokens import TokenTotals

#: 2: ``report.json`` is the run record (``judge.record``), one row per question; folders of
#: format 1 are refused with what to do (run again).
FORMAT_VERSION = 2


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class JudgeInfo(_Part):
    """Which judge gave the verdicts, and why it was the one chosen."""

    backend: str
    model: str
    digest: str | None
    server_version: str | None
    endpoint: str | None
    chosen_because: str
    prompt: str
    prompt_sha256: str
    evidence_verifier_version: int
    model_about: str | None = None
    """What the model is, where the backend can tell (the embedded GGUF's metadata, and how
    the prompt was given to it)."""

    def describe(self) -> str:
        return f"{self.backend} · {self.model}"


class TaskFingerprint(_Part):
    """What one further judgement's replies are cached under: the hash and what it hashes."""

    value: str
    parts: dict[str, Any]


#: The per-task fields of folders written before ``Fingerprints.tasks``: task → (value field,
#: parts field).
_OLD_TASK_FIELDS = {
    "chunk": ("chunks", "chunks_parts"),
    "correctness": ("correctness", "correctness_parts"),
}


class Fingerprints(_Part):
    """Hashes that decide which runs can be compared (see ``judge.results.history``)."""

    judge: str
    judge_parts: dict[str, Any]
    retrieval: str
    golden: str
    corpus: str
    run: str
    tasks: dict[str, TaskFingerprint] = Field(default_factory=dict)
    """Per further judgement the run made (``judge.judging.tasks``: ``chunk``,
    ``correctness``, ...), the fingerprint its replies are cached under; a judgement that was
    off is not in it."""

    @model_validator(mode="before")
    @classmethod
    def _tasks_of_older_folders(cls, data: Any) -> Any:
        """Folders written before ``tasks`` kept one pair of fields per judgement
        (``chunks``/``chunks_parts``, ``correctness``/``correctness_parts``): read as
        ``tasks``."""
        if not isinstance(data, dict) or not any(
            field in data for fields in _OLD_TASK_FIELDS.values() for field in fields
        ):
            return data
        data = dict(data)
        tasks = dict(data.get("tasks") or {})
        for task, (value_field, parts_field) in _OLD_TASK_FIELDS.items():
            value, parts = data.pop(value_field, None), data.pop(parts_field, None)
            if value is not None:
                tasks[task] = {"value": value, "parts": parts or {}}
        data["tasks"] = tasks
        return data


class RunInfo(_Part):
    """The RAG system's run that was judged (a copy is the folder's ``run.jsonl``)."""

    source: str
    meta: RunMeta


class GitInfo(_Part):
    commit: str | None
    dirty: bool | None


class Manifest(_Part):
    format_version: int = FORMAT_VERSION
    folder: str
    started_at: str
    finished_at: str
    judge: JudgeInfo
    fingerprints: Fingerprints
    run: RunInfo
    config: dict[str, Any]
    """The configuration as it was (``Config.model_dump(mode="json")``)."""
    git: GitInfo
    versions: dict[str, str | None]
    status_counts: dict[str, int]
    judge_seconds: float
    tokens: TokenTotals | None = None
    """Prompt and completion tokens and judge seconds per type and in all
    (``judge.results.tokens``); None in a folder written before they were recorded."""

    def retrieval_settings(self) -> RetrievalConfig:
        """The retrieval settings the run measured with."""
        return RetrievalConfig.model_validate(self.config["retrieval"])

    def configuration(self, source: Path | None = None) -> Config:
        """The configuration the run ran with (re-rendering measures and reports the same way)."""
        try:
            return Config.model_validate({**self.config, "source": source})
        except ValidationError as exc:
            problem = describe_validation_error(exc)[0]
            raise ConfigError(
                f"{self.folder}: its recorded configuration is no longer valid ({problem})"
            ) from None

    def to_json(self) -> str:
        """The text of ``manifest.json``; refused (``InputError``) when it could not be read
        back (``judge.jsonl.json_document_text``)."""
        return json_document_text(self, MANIFEST_FILE, "manifest.json")


def _version_refusal(path: Path, raw: dict[str, Any]) -> str | None:
    """A folder of another format is refused in its own words: it names the folder."""
    version = raw.get("format_version")
    if version == FORMAT_VERSION and type(version) is int:
        return None
    written = "no format version" if version is None else f"format {version!r}"
    return (
        f"{path.parent.name}: a report folder of {written}, and this judge reads format "
        f"{FORMAT_VERSION}; run 'judge run' to make a new one (or open it with the judge version "
        "that wrote it)"
    )


MANIFEST_FILE = StateFile(
    what="report folder manifest",
    remedy="run 'judge run' to make a new folder",
    current=FORMAT_VERSION,
    version_refusal=_version_refusal,
    damaged="{path}: cannot be read ({located}); the folder is damaged",
    invalid="{path}: not a valid manifest ({problem}); the folder is damaged",
    error=ConfigError,
)
