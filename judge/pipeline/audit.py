"""``judge audit`` and its steps (``sample``, ``import``, ``label``): the judge's verdicts of a
report folder against the human labels, and the labels' round trip through a sheet, a marks
file or the terminal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from judge.audit.agreement import audit_items
from judge.audit.agreement import gate as audit_gate
from judge.audit.disagreements import write_disagreements
from judge.audit.marks import import_labels_file
from judge.audit.sampling import sample_items
from judge.audit.sheet import ImportResult, write_sheet
from judge.audit.terminal import label_in_terminal
from judge.audit.types import AuditResult
from judge.config import Config
from judge.errors import ConfigError
from judge.inputs.golden import load_golden
from judge.inputs.labels import HumanLabel, given_text_problems, load_labels_if_any
from judge.io.lock import locked
from judge.io.write import end_with_newline
from judge.judging.types import CorrectnessVerdict
from judge.record.store import ReportFolder, ReportsDir


def judged_correctness(folder: ReportFolder) -> dict[str, CorrectnessVerdict]:
    """The folder's correctness verdicts by question id (empty: the run did not judge it)."""
    return {
        row.question_id: row.correctness
        for row in folder.record().questions
        if row.correctness is not None
    }


def run_audit(folder: ReportFolder, labels: list[HumanLabel]) -> AuditResult:
    """The audit of a saved report folder, from its record (its correctness verdicts too, when
    the run judged correctness: the audit then scores that axis against the labels that
    carry it)."""
    types = folder.manifest.config.data.question_types
    correctness = judged_correctness(folder)
    return audit_items(folder.name, folder.items(), folder.verdicts(), labels, types, correctness)


def _ignore(_: str) -> None:
    pass


def labels_path(config: Config) -> Path:
    """``data.labels``, which every audit step but ``sample`` needs."""
    if config.data.labels is None:
        raise ConfigError("set data.labels in judge.toml (where human labels are kept)")
    return config.data.labels


class Audited(NamedTuple):
    """An audit, the judge it audits, where every disagreement went, and its gate."""

    result: AuditResult
    judge: str
    """The judge of the audited folder, described."""
    disagreements: Path | None
    """``disagreements.csv`` in the report folder (None: the judge and the humans agree)."""
    failures: list[str]
    """Why the audit fails its bar (``min_kappa``, ``min_agreement``); empty: it passes."""


def audit(
    config: Config,
    folder_name: str | None,
    *,
    min_kappa: float | None = None,
    min_agreement: float | None = None,
    warn: Callable[[str], None] = _ignore,
) -> Audited:
    """Audit a report folder against the labels, write its disagreements beside it, and
    apply the audit gate. ``warn`` gets the labels' warning (stale labels), first."""
    golden = load_golden(config.data)
    labels = load_labels_if_any(labels_path(config), golden.by_id())
    warning = labels.warning()
    if warning:
        warn(warning)
    if not labels.current:
        raise ConfigError(
            f"no human labels in {config.data.labels} yet; start with 'judge audit sample --n 30'"
        )
    folder = ReportsDir(config.reports.dir).folder(folder_name)
    result = run_audit(folder, labels.current)
    full_list = (
        write_disagreements(result.judge.disagreements, folder.path)
        if result.judge.disagreements
        else None
    )
    return Audited(
        result,
        folder.manifest.judge.describe(),
        full_list,
        audit_gate(result, min_kappa, min_agreement),
    )


class Sampled(NamedTuple):
    """A blind labelling sheet written."""

    sheet: Path
    folder: str
    per_type: dict[str, int]
    """Items in the sheet per type, types sorted by name."""
    items: int


def sample(
    config: Config,
    folder_name: str | None,
    n: int,
    out: Path,
    *,
    oversample_uncertain: float = 0.0,
    seed: int = 0,
    warn: Callable[[str], None] = _ignore,
) -> Sampled:
    """Write a blind sheet (no judge scores) of ``n`` items of a report folder, stratified by
    type, none already labelled for the same answer; the answers the newest ``judge panel``
    disputed are taken first (``judge.audit.sampling.DISPUTED_SHARE``)."""
    golden = load_golden(config.data)
    labels = load_labels_if_any(config.data.labels, golden.by_id())
    warning = labels.warning()
    if warning:
        warn(warning)
    folder = ReportsDir(config.reports.dir).folder(folder_name)
    from judge.pipeline.panel import disputed_answers

    chosen = sample_items(
        folder.items(),
        folder.verdicts(),
        labels.current,
        n,
        oversample_uncertain,
        seed,
        disputed_answers(Path(config.reports.dir)),
    )
    write_sheet(out, chosen, judged_correctness(folder))
    per_type = Counter(item.type for item in chosen)
    return Sampled(out, folder.name, dict(sorted(per_type.items())), len(chosen))


class Imported(NamedTuple):
    labels: Path
    """The labels file (``data.labels``) the labels went into."""
    result: ImportResult


def import_labels(
    config: Config, file: Path, *, labeller: str | None = None, replace: bool = False
) -> Imported:
    """Import a filled CSV sheet or review.html's marks file (told apart by content) into the
    labels file."""
    golden = load_golden(config.data)
    path = labels_path(config)
    return Imported(path, import_labels_file(file, path, golden.by_id(), labeller, replace))


def label(config: Config, folder_name: str | None, labeller: str) -> int:
    """Label a report folder's items in the terminal (blind, saved after each item); return
    the labels saved. The terminal dialogue is ``judge.audit.terminal``'s.

    Each label is appended under the labels file's lock (``judge.io.lock.locked``), held for
    that append only, never for the session: an import meanwhile (a reviewer's sheet) goes
    through at once and merges into what the session wrote, and the session's next labels are
    appended to what the import wrote. A last line without its newline (a file edited by
    hand) gets one first, under the lock, so the first label is a line of its own."""
    problems = given_text_problems(labeller)
    if problems:
        raise ConfigError(f"--labeller: {problems[0].removeprefix('labeller ')}")
    golden = load_golden(config.data)
    folder = ReportsDir(config.reports.dir).folder(folder_name)
    items = list(folder.items().values())
    path = labels_path(config)
    with locked(path):
        end_with_newline(path)
    return label_in_terminal(
        items, path, golden.by_id(), labeller, correctness=judged_correctness(folder)
    )
