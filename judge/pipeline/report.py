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
from datetime import datetime
from typing import Any

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.hashing import text_sha256
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.labels import labels_by_answer, load_labels_if_any
from judge.inputs.runs import Run, load_run
from judge.judging.cache import VerdictCache
from judge.judging.grading import Fingerprint
from judge.judging.items import build_items
from judge.judging.judge import cached_verdicts, read_cached
from judge.judging.tasks.base import AnyTask
from judge.judging.tasks.registry import task_named
from judge.pipeline.build import build_report, package_version
from judge.pipeline.evaluate import earlier_runs
from judge.pipeline.history import write_history_page
from judge.pipeline.inputs import _ignore, measure_retrieval
from judge.record.model import QuestionRow, Record
from judge.record.stages import Judged, TaskResults
from judge.record.store import REPORT_FILE, ReportFolder, ReportsDir, read_saved_verdicts
from judge.report.files import folder_files
from judge.results.manifest import FORMAT_VERSION, Manifest


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
    written_by, this = record.manifest.versions.get("judge"), package_version("judge")
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
    """``rerender``'s rebuild from the run and the cache (under the caller's lock)."""
    config, golden = _as_it_was(config, folder, manifest)
    run = load_run(folder.run_path, golden)
    measured = measure_retrieval(config, golden, run, manifest.run.source)
    judged = _judged_then(config, folder, manifest, golden, run)
    labels = load_labels_if_any(config.data.labels, golden.by_id())
    if labels.warning():
        warn(str(labels.warning()))
    report = build_report(
        config,
        measured,
        judged,
        labels.current,
        datetime.fromisoformat(manifest.started_at),
        folder.name,
        earlier_runs(config, reports),
        finished_at=datetime.fromisoformat(manifest.finished_at),
        bars=_checked_bars(folder),
    )
    folder.write_files(folder_files(report))
    write_history_page(config, reports)  # the season, with this folder again
    return folder


def _as_it_was(
    config: Config, folder: ReportFolder, manifest: Manifest
) -> tuple[Config, GoldenSet]:
    """The configuration the folder's run ran with, and the golden set, refused when it or
    the corpus changed since (re-rendering would mix the two)."""
    golden = load_golden(config.data)
    if golden.questions_hash != manifest.fingerprints.golden:
        raise ConfigError(
            f"{folder.name} was judged on another golden set than {config.data.questions} "
            "holds now; re-rendering would mix the two"
        )
    if golden.corpus_hash != manifest.fingerprints.corpus:
        raise ConfigError(
            f"the corpus changed since {folder.name} was judged; its chunks would no longer "
            "be the ones the judge saw, so it cannot be re-rendered"
        )
    # Measure and describe the run as it was, whatever judge.toml says now; only where
    # files are kept comes from the current configuration (the project may have moved).
    config = manifest.configuration(config.source).with_overrides(
        data=config.data.model_dump(),
        judge={"cache_path": config.judge.cache_path},
        reports=config.reports.model_dump(),
    )
    return config, golden


def _judged_then(
    config: Config, folder: ReportFolder, manifest: Manifest, golden: GoldenSet, run: Run
) -> Judged:
    """Every judgement of the folder's run re-derived from the cache under the fingerprints
    it recorded, each marked cached as it was then; a reply gone from the cache keeps the
    folder's result."""
    fingerprint = Fingerprint(manifest.fingerprints.judge, manifest.fingerprints.judge_parts)
    recorded = manifest.fingerprints.tasks
    cache = VerdictCache(config.judge.cache_path)
    try:
        items = build_items(golden, run, config.retrieval.context_k)
        saved = read_saved_verdicts(folder.path)
        rederived = cached_verdicts(items, fingerprint.value, cache)
        saved_rows = _saved_rows(folder.record) if recorded else []
        further = {
            name: _rederive_task(
                task_named(name),
                Fingerprint(done.value, done.parts),
                cache,
                saved_rows,
                lambda task: task.items(golden, run, config),
            )
            for name, done in recorded.items()
        }
    finally:
        cache.close()
    # The report describes the run as it happened: whether a verdict came from the cache
    # then, not now.
    verdicts = saved | {
        qid: v.model_copy(update={"cached": saved[qid].cached}) if qid in saved else v
        for qid, v in rederived.items()
    }
    return Judged(
        verdicts,
        manifest.judge,
        fingerprint,
        manifest.judge_seconds,
        tasks=further,
        shown={item.question_id: item.context for item in items},
    )


def _checked_bars(folder: ReportFolder) -> bool:
    """Whether the folder's run checked its bars (its record's gate has bar checks): a rebuild
    checks them again, with the recorded configuration's bars; a record that cannot be read
    says nothing of them."""
    try:
        return bool(folder.record().gate.bar_checks)
    except (ConfigError, InputError, OSError):
        return False


def _saved_rows(record: Callable[[], Record]) -> list[QuestionRow]:
    """The folder record's rows: what stands for a reply pruned from the cache (none when the
    record cannot be read)."""
    try:
        return record().questions
    except (ConfigError, InputError, OSError):
        return []


def _saved(row: QuestionRow, task: AnyTask) -> Any:
    """What a record row keeps of ``task`` (None: nothing)."""
    if task.row_field == "judgements":
        return (row.judgements or {}).get(task.name)
    return getattr(row, task.row_field)


def _rederive_task(
    task: AnyTask,
    fingerprint: Fingerprint,
    cache: VerdictCache,
    saved_rows: list[QuestionRow],
    items_of: Callable[[AnyTask], list[Any]],
) -> TaskResults:
    """A further judgement's results re-derived from the cache, each marked cached as it was
    in the run ("as then"); a question whose replies are gone keeps the folder's result."""
    saved = {
        row.question_id: value for row in saved_rows if (value := _saved(row, task)) is not None
    }
    rederived = task.per_question(read_cached(task, cache, fingerprint, items_of(task)))
    per_question = saved | {
        qid: task.as_then(value, saved[qid]) if qid in saved else value
        for qid, value in rederived.items()
    }
    return TaskResults(task.row_field, per_question, fingerprint)
