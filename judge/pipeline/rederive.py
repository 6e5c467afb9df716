"""``judge report``'s rebuild of a folder's record from its run and the cache
(``judge.pipeline.report``: asked with ``--rederive``, or when the record cannot be read or no
longer holds): the golden set and corpus checked against the run's, every judgement re-derived
from the cached replies under the fingerprints the run recorded, the record built by the same
``build_report`` as ``judge run``. A module of its own so that rendering a folder from its
record, the common case, imports none of the judging and the build.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.labels import load_labels_if_any
from judge.inputs.runs import Run, load_run
from judge.judging.cache import VerdictCache
from judge.judging.grading import Fingerprint
from judge.judging.items import build_items
from judge.judging.judge import cached_verdicts, read_cached
from judge.judging.tasks.base import AnyTask
from judge.judging.tasks.registry import task_named
from judge.pipeline.build import build_report
from judge.pipeline.evaluate import earlier_runs
from judge.pipeline.history import write_history_page
from judge.pipeline.inputs import measure_retrieval
from judge.record.model import QuestionRow, Record
from judge.record.stages import Judged, TaskResults
from judge.record.store import ReportFolder, ReportsDir, read_saved_verdicts
from judge.report.files import folder_files
from judge.results.manifest import Manifest


def rebuild(
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
