"""Finding earlier run folders: by path, by name under ``reports/``, or ``latest``."""

from __future__ import annotations

from pathlib import Path

from judge.errors import ConfigError
from judge.history import HistoryEntry, read_history


def resolve_folder(reports_dir: Path, name: str | None) -> Path:
    """A run folder from a path, a folder name, or None for the latest run."""
    if name is None:
        latest = reports_dir / "latest"
        if not latest.exists():
            raise ConfigError(f"no runs in {reports_dir} yet; run 'judge run' first")
        name = latest.read_text(encoding="utf-8").strip()
    for candidate in (Path(name), reports_dir / name):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise ConfigError(f"{name}: not a run folder (no manifest.json); see 'ls {reports_dir}'")


def history_entry(reports_dir: Path, folder: Path) -> HistoryEntry:
    """The history line of a run folder."""
    for entry in read_history(reports_dir / "history.jsonl"):
        if entry.folder == folder.name:
            return entry
    raise ConfigError(f"{folder.name} is not in {reports_dir / 'history.jsonl'}")
