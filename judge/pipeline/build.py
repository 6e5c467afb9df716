"""The record's build, wired: what the pure build (``judge.record.build.build_record``) must
not read itself, read here: the clock (when the run finished), the git commit where the
configuration is, and the installed packages' versions.
"""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from judge.config import Config
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.pipeline.align import adopted_prompt
from judge.pipeline.panel import panel_summary
from judge.record.build import JudgeViews, build_record
from judge.record.manifest_build import Provenance
from judge.record.model import Record
from judge.record.stages import Earlier, Judged, Measured
from judge.results.manifest import GitInfo

PACKAGES = ("judge", "httpx", "ollama", "pydantic", "tenacity", "pandas", "llama_cpp_python")


def build_report(
    config: Config,
    measured: Measured,
    judged: Judged,
    labels: list[HumanLabel],
    started_at: datetime,
    folder_name: str,
    earlier: Earlier,
    finished_at: datetime | None = None,
    *,
    bars: bool = False,
) -> Record:
    """The record of one judged run (``build_record``), with its provenance read now:
    ``finished_at`` (None: now), the git commit and the package versions."""
    provenance = Provenance(
        finished_at=finished_at or datetime.now(UTC),
        git=git_info(config.source.parent if config.source else Path.cwd()),
        versions=versions(),
    )
    return build_record(
        config,
        measured,
        judged,
        labels,
        started_at,
        folder_name,
        earlier,
        provenance,
        bars=bars,
        views=judge_views(config, measured),
    )


def judge_views(config: Config, measured: Measured) -> JudgeViews:
    """The prompt ``judge align`` adopted, when it wrote the run's prompt, and the newest
    ``judge panel`` of the run's exact answers, read from ``reports/``."""
    reports = Path(config.reports.dir)
    answers = {qid: text_sha256(r.answer) for qid, r in measured.run.records.items()}
    return JudgeViews(
        adopted_prompt(reports, config.judge.prompt.name), panel_summary(reports, answers)
    )


def git_info(cwd: Path) -> GitInfo:
    """The commit checked out where the configuration is, and whether the tree has changes
    (untracked files count): one ``git status`` (its ``branch.oid`` header is the commit)."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return GitInfo(commit=None, dirty=None)
    lines = status.stdout.splitlines()
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if status.returncode != 0 or commit is None or commit == "(initial)":
        return GitInfo(commit=None, dirty=None)  # not a repository, or no commit yet
    return GitInfo(commit=commit, dirty=any(not line.startswith("#") for line in lines))


def package_version(name: str) -> str | None:
    """The installed version of a distribution (None: not installed)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    """Python's version and each of ``PACKAGES``' (None: not installed)."""
    return {"python": platform.python_version()} | {
        name: package_version(name) for name in PACKAGES
    }
