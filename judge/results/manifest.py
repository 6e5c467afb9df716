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
from judge.io.state import StateFile, json_document_text
from judge.io.validation import describe_validation_error
from judge.results.tokens import TokenTotals

#: 4: each text once: ``items.jsonl`` holds each question's item with its context chunks by
#: id, their texts once in ``chunks.jsonl``, and ``report.json``'s rows reference their item
#: and verdict (the lines of ``items.jsonl`` and ``verdicts.jsonl``) instead of holding copies
#: (``judge.record.lines``).
#: 3: the record holds the whole run, typed: the configuration (``Manifest.config``), the
#: audit's figures (``judge.record.model.Record.audit``) and the bar checks in the gate; still
#: read (``upgrade_older_format``: its rows hold their items and verdicts, texts included).
#: 2: ``report.json`` is the run record (``judge.record``), one row per question; still read
#: (``upgrade_older_format``). Folders of format 1 are refused with what to do (run again).
FORMAT_VERSION = 4
#: The oldest format this judge reads.
OLDEST_FORMAT = 2
#: The older formats this judge reads, as messages say them ("2 and 3").
_OLDER = " and ".join(str(v) for v in range(OLDEST_FORMAT, FORMAT_VERSION))


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
    config: Config
    """The configuration the run ran with, typed (its file, ``Config.source``, is not part of
    it). A recorded configuration that no longer validates is refused when the folder is
    opened (``_refusal``)."""
    git: GitInfo
    versions: dict[str, str | None]
    status_counts: dict[str, int]
    judge_seconds: float
    tokens: TokenTotals | None = None
    """Prompt and completion tokens and judge seconds per type and in all
    (``judge.results.tokens``); None in a folder written before they were recorded."""

    def retrieval_settings(self) -> RetrievalConfig:
        """The retrieval settings the run measured with."""
        return self.config.retrieval

    def configuration(self, source: Path | None = None) -> Config:
        """The configuration the run ran with, read from ``source`` (re-rendering measures and
        reports the same way)."""
        return self.config.model_copy(update={"source": source})

    def to_json(self) -> str:
        """The text of ``manifest.json``; refused (``InputError``) when it could not be read
        back (``judge.io.state.json_document_text``)."""
        return json_document_text(self, MANIFEST_FILE, "manifest.json")


def _refusal(path: Path, raw: dict[str, Any]) -> str | None:
    """A folder of a format this judge does not read, or whose recorded configuration no
    longer validates, is refused in its own words: it names the folder."""
    version = raw.get("format_version")
    if type(version) is not int or not OLDEST_FORMAT <= version <= FORMAT_VERSION:
        written = "no format version" if version is None else f"format {version!r}"
        return (
            f"{path.parent.name}: a report folder of {written}, and this judge reads format "
            f"{FORMAT_VERSION} (and {_OLDER}); run 'judge run' to make a new one (or open "
            "it with the judge version that wrote it)"
        )
    return configuration_refusal(path.parent.name, raw.get("config"))


def configuration_refusal(folder: str, config: object) -> str | None:
    """Why a folder's recorded configuration cannot be read, in one line naming the folder
    (None: it validates, or it is not there and the model says so)."""
    if not isinstance(config, dict):
        return None
    try:
        Config.model_validate(config)
    except ValidationError as exc:
        problem = describe_validation_error(exc)[0]
        return f"{folder}: its recorded configuration is no longer valid ({problem})"
    return None


def upgrade_older_format(version: int, value: dict[str, Any]) -> dict[str, Any]:
    """A document of format 2 or 3 read as format 4.

    Format 3 has the same fields; its ``report.json`` rows hold their item and verdict
    themselves (texts included), which format 4 reads as well (``judge.record.lines``).
    Format 2 has the same fields too, the configuration (a dict then) validated into the typed
    model by the reader; its ``report.json``'s untyped agreement (``agreement``) is not read:
    the record of format 2 has no audit figures, and ``judge report`` rebuilds it from the run
    and the cache (``judge.pipeline.report``)."""
    if not OLDEST_FORMAT <= version < FORMAT_VERSION:
        raise ValueError(
            f"of the formats before it, this judge reads {OLDEST_FORMAT} to {FORMAT_VERSION - 1}"
        )
    if version == OLDEST_FORMAT:
        return {k: v for k, v in value.items() if k != "agreement"}
    return value


MANIFEST_FILE = StateFile(
    what="report folder manifest",
    remedy="run 'judge run' to make a new folder",
    current=FORMAT_VERSION,
    upgrade=upgrade_older_format,
    version_refusal=_refusal,
    damaged="{path}: cannot be read ({located}); the folder is damaged",
    invalid="{path}: not a valid manifest ({problem}); the folder is damaged",
    error=ConfigError,
)
