"""``manifest.json``: what a report folder measured, with what, on what. Format version first.

The one typed contract of a report folder: written by the pipeline, read (and its version
checked) by every command that opens a folder. Do not change the fields or their meaning
without raising ``FORMAT_VERSION``: older folders are then refused with a message that says
what to do, instead of being misread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from judge.config import Config, RetrievalConfig
from judge.errors import ConfigError
from judge.inputs.runs import RunMeta
from judge.io.state import StateFile, json_document_text
from judge.io.validation import describe_validation_error
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


class Fingerprints(_Part):
    """Hashes that decide which runs can be compared (see ``judge.results.history``)."""

    judge: str
    judge_parts: dict[str, Any]
    retrieval: str
    golden: str
    corpus: str
    run: str
    chunks: str | None = None
    """The fingerprint the run's chunk grades are cached under (None: chunk grading off, or a
    folder written before there were chunk grades)."""
    chunks_parts: dict[str, Any] | None = None
    correctness: str | None = None
    """The fingerprint of the run's correctness verdicts (None: correctness off)."""
    correctness_parts: dict[str, Any] | None = None


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
        back (``judge.io.state.json_document_text``)."""
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
