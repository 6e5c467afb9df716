"""``judge run``, ``judge nightly`` and ``judge report``: inputs → retrieval → judge → report
folder → gate.

``evaluate`` is what ``judge run``, ``judge nightly``, the Python API and the tests call. It owns
the lock on the reports folder, the judge backend's lifetime, the verdict cache, interruption,
the report and the gate. ``rerender`` renders a folder's files again from its record
(``report.json``), or, asked to re-derive (or when the record cannot be read or no longer
holds), rebuilds the record through the same ``build_report`` from the folder's run and the
cache. Nothing here
prints: progress goes to ``Hooks``, the outcome comes back as an ``Evaluation``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from judge.config import Config
from judge.errors import ConfigError, InputError, Interrupted
from judge.folders import ReportFolder, ReportsDir, read_saved_verdicts
from judge.hashing import text_sha256
from judge.inputs.adapter import AdapterProgress
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.labels import labels_by_answer, load_labels_if_any
from judge.inputs.runs import Run, load_run, run_lines
from judge.io.jsonl import jsonl_text
from judge.judging.backends.base import JudgeBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import Fingerprint, JudgeProgress
from judge.judging.items import build_items
from judge.judging.judge import Judge, cached_verdicts, read_cached
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import AnyTask, by_question
from judge.judging.tasks.registry import enabled_tasks, load_task_prompt, task_named
from judge.pipeline.bars import bars_asked
from judge.pipeline.build import Earlier, Judged, TaskResults, build_report, package_version
from judge.pipeline.inputs import Inputs, _ignore, load_inputs, measure_retrieval
from judge.pipeline.session import (
    JudgeChoice,
    TaskPlan,
    judge_info,
    judging_session,
    task_plans,
)
from judge.record import REPORT_FILE, QuestionRow, Record
from judge.report.files import render_files
from judge.results.baseline import read_baseline
from judge.results.compare import QuestionValues
from judge.results.gate import Gate
from judge.results.manifest import FORMAT_VERSION, Manifest

if TYPE_CHECKING:
    import pandas as pd


class Hooks(NamedTuple):
    """Callbacks for what happens during an evaluation (the CLI draws its progress bars with
    them). Each is optional; ``evaluate(on_progress=...)`` is the short way to ``on_judging``."""

    on_adapter: Callable[[AdapterProgress], None] = _ignore
    on_inputs: Callable[[Inputs], None] = _ignore
    """Called once the inputs are loaded and valid, before any judging (warnings go here)."""
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore
    on_judging: Callable[[JudgeProgress], None] = _ignore
    """Called as the judging advances: done of total items, how many from the cache, how many
    not ok (``judge.judging.grading.JudgeProgress``)."""


def _both(first: Callable[[Any], None], second: Callable[[Any], None]) -> Callable[[Any], None]:
    if first is _ignore:
        return second

    def call(event: Any) -> None:
        first(event)
        second(event)

    return call


@contextmanager
def _with_progress(hooks: Hooks, progress: bool | None) -> Iterator[Hooks]:
    """``hooks`` with the console's progress bars added (``judge.console``, the CLI's own) when
    ``progress`` is True, or when it is None (the default), someone is watching
    (``judge.console.shows_progress``: stdout a terminal, or a notebook) and ``hooks`` draws
    no progress of its own (the CLI passes its bars: they are not drawn twice)."""
    if progress is None:
        own = hooks.on_adapter is not _ignore or hooks.on_judging is not _ignore
        if own:
            progress = False
        else:
            from judge.console import shows_progress

            progress = shows_progress()
    if not progress:
        yield hooks
        return
    from judge.console import adapter_progress, judge_progress

    with adapter_progress() as on_adapter, judge_progress() as on_judging:
        yield hooks._replace(
            on_adapter=_both(hooks.on_adapter, on_adapter),
            on_judging=_both(hooks.on_judging, on_judging),
        )


class Evaluation(NamedTuple):
    """One judged run: its report folder, its record (``judge.record``) and the inputs."""

    folder: ReportFolder
    report: Record
    """The run record: everything the folder's files were rendered from."""
    inputs: Inputs

    @property
    def gate(self) -> Gate:
        return self.report.gate

    @property
    def judge_table(self) -> pd.DataFrame:
        """Per type (then ``all``): n, non-ok counts, judge means, retrieval at context_k."""
        return self.report.judge.frame

    @property
    def retrieval_table(self) -> pd.DataFrame:
        """Per type (then ``all``): n, excluded, retrieval metrics at every k."""
        return self.report.retrieval.frame

    def questions(self) -> pd.DataFrame:
        """One row per golden question: its verdict, its quote check and its retrieval."""
        import pandas as pd

        tags = {q.id: list(q.tags) for q in self.inputs.golden.questions}
        rows = []
        for question in self.report.questions:
            v, item = question.verdict, question.item
            row: dict[str, Any] = {
                "question_id": question.question_id,
                "type": question.type,
                "split": question.split,
                "tags": tags.get(question.question_id, []),
                "status": question.status,
                "faithfulness": v.faithfulness if v else None,
                "relevance": v.relevance if v else None,
                "evidence": v.evidence if v else "",
                "match_kind": v.match.kind if v and v.match else None,
                "needs_review": bool(v and question.triage.needs_review),
            }
            row.update(item.retrieval if item and v else {})
            rows.append(row)
        return pd.DataFrame(rows).set_index("question_id")


def evaluate(
    config: Config,
    *,
    backend: JudgeBackend | str | None = None,
    run_path: Path | None = None,
    fresh_answers: bool = False,
    rejudge_failed: bool = False,
    hooks: Hooks = Hooks(),  # noqa: B008 (an immutable tuple of no-op callbacks)
    progress: bool | None = None,
    on_progress: Callable[[JudgeProgress], None] | None = None,
    bars: bool = False,
) -> Evaluation:
    """Judge every answer of a run and write a report folder; return it with its gate.

    ``backend``: a backend name (overrides ``judge.backend``) or a ready ``JudgeBackend``
    (then the caller owns it and closes it). ``rejudge_failed``: ask the judge again where its
    cached reply gave no usable verdict. Raises ``Interrupted`` on Ctrl-C, after keeping what
    was judged in the cache.

    ``progress``: the command line's progress bars (asking the adapter, judging) on stderr;
    None (the default) shows them when stdout is a terminal or this runs in a notebook, unless
    ``hooks`` already has an ``on_adapter`` or ``on_judging`` of its own; False never.
    ``on_progress``: called with each ``JudgeProgress`` (done, total, cached, not_ok), with or
    without the bars (``hooks.on_judging`` too, if given, is called first).
    ``bars``: check the configuration's per-type bars, one gate check each in the record
    (refused before anything is asked when it has none: ``judge.pipeline.bars.bars_asked``).
    """
    started_at = datetime.now(UTC)
    bars_asked(config, bars)
    if isinstance(backend, str):  # recorded in the manifest as the configuration it ran with
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    try:
        with _with_progress(hooks, progress) as shown:
            if on_progress is not None:
                shown = shown._replace(on_judging=_both(shown.on_judging, on_progress))
            return _evaluate(
                config,
                backend,
                shown,
                started_at,
                run_path=run_path,
                fresh_answers=fresh_answers,
                rejudge_failed=rejudge_failed,
                bars=bars,
            )
    except KeyboardInterrupt:  # before or after judging (judging stops by itself, below)
        raise Interrupted("stopped before anything was judged or written") from None


def _evaluate(
    config: Config,
    backend: JudgeBackend | None,
    hooks: Hooks,
    started_at: datetime,
    *,
    run_path: Path | None,
    fresh_answers: bool,
    rejudge_failed: bool,
    bars: bool,
) -> Evaluation:
    reports = ReportsDir(config.reports.dir)
    with reports.lock():  # before the adapter is asked: a second run must not pay for answers
        prompt = load_task_prompt(
            config.judge.prompt, ANSWER
        )  # a bad prompt fails before any model loads
        tasks = enabled_tasks(config)  # so do those of the further judgements that are on
        # A damaged history or a baseline of the old format fails here too, before anything is
        # asked or judged; both are read once and handed down.
        earlier = earlier_runs(config, reports)
        inputs = load_inputs(
            config, run_path, fresh_answers=fresh_answers, on_adapter=hooks.on_adapter
        )
        hooks.on_inputs(inputs)
        measured = measure_retrieval(config, inputs.golden, inputs.run, inputs.run_source)
        items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
        plans = task_plans(config, tasks, inputs.golden, inputs.run)
        with judging_session(
            config, backend, items, prompt, inputs.run_source, hooks.on_judge_chosen, plans
        ) as session:
            outcome = session.answers(items, hooks.on_judging, rejudge_failed=rejudge_failed)
            verdicts = by_question(outcome.results)
            if outcome.interrupted:
                # The same command resumes: the verdicts are cached, and an adapter's answers
                # are saved and reused (no need to point --run at them).
                raise Interrupted(
                    f"{len(verdicts)} of {len(inputs.run.records)} answers judged and "
                    "cached; run the same command again to resume"
                )
            further = _judge_further(session.judge, plans, hooks.on_judging, rejudge_failed)
        judged = Judged(
            verdicts,
            judge_info(session.opened, prompt),
            outcome.fingerprint,
            outcome.elapsed_s,  # the answers' time, as the summary says it
            tasks=further,
            shown={item.question_id: item.context for item in items},
        )
        name = reports.new_folder_name(outcome.fingerprint.value, started_at, earlier.history)
        report = build_report(
            config, measured, judged, inputs.labels.current, started_at, name, earlier, bars=bars
        )
        # The folder keeps the run that was judged beside what was rendered from it.
        files = {**render_files(report), "run.jsonl": jsonl_text(run_lines(inputs.run))}
        folder = reports.publish(name, files, report.entry)
    return Evaluation(folder, report, inputs)


def _judge_further(
    judge: Judge,
    plans: Sequence[TaskPlan],
    on_progress: Callable[[JudgeProgress], None],
    rejudge_failed: bool,
) -> dict[str, TaskResults]:
    """Ask each further judgement that is on, in turn; Ctrl-C during one raises
    ``Interrupted`` saying what is kept (the answers' verdicts, the judgements before it, and
    every reply so far are in the cache: the same command resumes)."""
    done = ["every answer judged"]
    out: dict[str, TaskResults] = {}
    for plan in plans:
        task = plan.task
        outcome = judge.run(
            task, plan.prompt, plan.items, on_progress, rejudge_failed=rejudge_failed
        )
        per_question = task.per_question(outcome.results)
        if outcome.interrupted:
            raise Interrupted(
                f"{' and '.join(done)}, and {task.progress(plan.items, per_question)}; all "
                "cached; run the same command again to resume"
            )
        if per_question:
            done.append(task.all_done)
        out[task.name] = TaskResults(task.row_field, per_question, outcome.fingerprint)
    return out


def earlier_runs(config: Config, reports: ReportsDir) -> Earlier:
    """The history and the pinned baseline, read once, and a reader of earlier runs' records
    that reads each folder at most once (None for one gone, damaged or of another format)."""
    read: dict[str, Record | None] = {}

    def record(name: str) -> Record | None:
        if name not in read:
            try:
                read[name] = reports.folder(name).record()
            except (ConfigError, InputError, OSError):
                read[name] = None
        return read[name]

    saved: dict[str, QuestionValues | None] = {}

    def values(name: str) -> QuestionValues | None:
        if name not in saved:
            try:
                saved[name] = reports.folder(name).values()
            except (ConfigError, InputError, OSError):
                saved[name] = None
        return saved[name]

    return Earlier(reports.history(), read_baseline(config.reports.baseline), record, values)


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
                    folder.write_files(render_files(record, with_record=False))
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
    folder.write_files(render_files(report))
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
