"""``judge report``: a report folder's files rendered again; nothing is judged.

``rerender`` renders the files from the folder's record (``report.json``), or, asked to
re-derive (or when the record cannot be read or no longer holds), rebuilds the record through
the same ``build_report`` as ``judge run`` from the folder's run and the cache: every judgement
re-derived from the cached replies under the fingerprints the run recorded. Then
``reports/history.html`` is rebuilt, with the folder's ``marks.json`` as just written. Nothing
here prints: what the user should know comes back through ``warn``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.hashing import text_sha256
from judge.inputs.labels import labels_by_answer, load_labels_if_any
from judge.pipeline.history import write_history_page
from judge.record.model import Record
from judge.record.store import REPORT_FILE, ReportFolder, ReportsDir
from judge.report.files import folder_files
from judge.results.manifest import FORMAT_VERSION, Manifest


def _ignore(_: Any) -> None:
    pass


def _judge_version() -> str | None:
    """This judge's installed version (``judge.pipeline.build.package_version("judge")``, read
    here without importing the build, which only a rebuild needs)."""
    try:
        return metadata.version("judge")
    except metadata.PackageNotFoundError:
        return None


def rerender(
    config: Config,
    folder_name: str | None,
    warn: Callable[[str], None] = _ignore,
    *,
    rederive: bool = False,
) -> ReportFolder:
    """Render a folder's files again; nothing is judged.

    By default from the folder's record (``report.json``), as it was written: the verdicts,
    comparisons and audit of the run, in the views of this version of the judge. The record
    itself is the source and stays as it is.

    ``rederive`` rebuilds the record from the folder's run and the cache, and so does a record
    that no longer holds (``_why_record_does_not_hold``) or cannot be read, each said in one
    line: each verdict is re-derived from the backend reply stored in the cache (so a newer
    evidence verifier or parser applies); a reply no longer in the cache (pruned) keeps the
    verdict saved in the folder. The golden set and corpus must be the ones the run used.
    """
    reports = ReportsDir(config.reports.dir)
    with reports.lock():
        folder = reports.folder(folder_name)
        manifest = folder.manifest
        if not rederive:
            try:
                record = folder.record()
            except (ConfigError, InputError, OSError) as exc:
                # Its remedy is what happens next: say so instead.
                problem = str(exc).removesuffix(f"; {REPORT_FILE.remedy}")
                warn(f"{problem}; rebuilding it from the folder's run and the cache")
            else:
                why = _why_record_does_not_hold(record, config, warn)
                if why is None:
                    folder.write_files(folder_files(record, with_record=False))
                    write_history_page(config, reports)  # the season, with this folder again
                    return folder
                warn(f"{folder.name}: {why}; rebuilding its record from its run and the cache")
        return _rederive(config, reports, folder, manifest, warn)


def _why_record_does_not_hold(
    record: Record, config: Config, warn: Callable[[str], None]
) -> str | None:
    """Why a rebuild from the run and the cache would not give the record back, or None (then
    the record is rendered as it is): it was written by another version of the judge (which
    may parse and verify cached replies differently), or the labels file holds other labels
    for the run's answers now (a label added, changed or removed since the run changes the
    items, the triage and the agreement). The labels file's own warning (missing, labels of
    retired questions) is said when the record holds; a rebuild reads the file again and says
    it then."""
    written = record.manifest.format_version
    if written < FORMAT_VERSION:
        return f"its report.json is of format {written} (this judge writes {FORMAT_VERSION})"
    written_by, this = record.manifest.versions.get("judge"), _judge_version()
    if written_by != this:
        return f"it was written by judge {written_by}, this is judge {this}"
    # The record's questions are the run's golden set.
    questions = {row.question_id for row in record.questions}
    labels = load_labels_if_any(config.data.labels, questions)
    grouped = labels_by_answer(labels.current)
    changed = [
        item.question_id
        for item in record.items
        if item.labels
        != [
            label.scores()
            for label in grouped.get((item.question_id, text_sha256(item.answer)), [])
        ]
    ]
    if changed:
        shown = ", ".join(changed[:5]) + (", …" if len(changed) > 5 else "")
        return f"the labels of {len(changed)} answer(s) changed since the run ({shown})"
    if labels.warning():
        warn(str(labels.warning()))
    return None


def _rederive(
    config: Config,
    reports: ReportsDir,
    folder: ReportFolder,
    manifest: Manifest,
    warn: Callable[[str], None],
) -> ReportFolder:
    """``rerender``'s rebuild from the run and the cache (under the caller's lock): imported
    here, only when a rebuild is asked (``judge.pipeline.rederive``)."""
    from judge.pipeline.rederive import rebuild

    return rebuild(config, reports, folder, manifest, warn)
