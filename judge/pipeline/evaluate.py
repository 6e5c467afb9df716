"""``judge run`` and ``judge nightly``: inputs → retrieval → judge → report folder → gate.

``evaluate`` is what ``judge run``, ``judge nightly``, the Python API and the tests call. It owns
the lock on the reports folder, the judge backend's lifetime, the verdict cache, interruption,
the report and the gate. ``judge report`` is wired beside it (``judge.pipeline.report``), and
reads earlier runs as ``evaluate`` does (``earlier_runs``). Nothing here prints: progress goes
to ``Hooks``, the outcome comes back as an ``Evaluation``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from judge.config import Config, shipped_prompt
from judge.errors import ConfigError, InputError, Interrupted
from judge.inputs.adapter import AdapterProgress
from judge.inputs.runs import run_lines
from judge.io.jsonl import jsonl_text
from judge.judging.backends.base import JudgeBackend
from judge.judging.grading import JudgeProgress
from judge.judging.items import build_items
from judge.judging.judge import Judge
from judge.judging.prompts import unread_prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import by_question
from judge.judging.tasks.registry import enabled_tasks, load_task_prompt
from judge.pipeline.bars import bars_asked
from judge.pipeline.build import build_report
from judge.pipeline.history import write_history_page
from judge.pipeline.inputs import Inputs, _ignore, load_inputs, measure_retrieval
from judge.pipeline.session import (
    JudgeChoice,
    TaskPlan,
    judge_info,
    judging_session,
    task_plans,
)
from judge.record.model import Record
from judge.record.stages import Earlier, Judged, TaskResults
from judge.record.store import ReportFolder, ReportsDir, read_gate
from judge.report.files import folder_files
from judge.results.baseline import read_baseline
from judge.results.compare import QuestionValues
from judge.results.gate import Gate

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


def _changes_only(call: Callable[[JudgeProgress], None]) -> Callable[[JudgeProgress], None]:
    """``call`` with each progress that differs from the one before: the judging reports the
    progress once more when the cache lookup is over (the command line's "already in the
    cache" line reads that event), which a user's ``on_progress`` printed as its last line
    twice when every item came from the cache."""
    last: list[JudgeProgress] = []

    def changed(event: JudgeProgress) -> None:
        if last and last[0] == event:
            return
        last[:] = [event]
        call(event)

    return changed


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
        """One row per golden question: its verdict, its quote check, its diagnosis (the
        record's, ``judge.results.diagnosis``) and its retrieval."""
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
                "diagnosis": question.diagnosis,
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
    wait_s: float = 0.0,
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
    ``wait_s``: how long to wait for another run writing to the reports folder before
    ``Busy`` (exit 4; ``judge nightly --wait``).
    """
    started_at = datetime.now(UTC)
    bars_asked(config, bars)
    if isinstance(backend, str):  # recorded in the manifest as the configuration it ran with
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    try:
        with _with_progress(hooks, progress) as shown:
            if on_progress is not None:
                changed = _changes_only(on_progress)
                shown = shown._replace(on_judging=_both(shown.on_judging, changed))
            return _evaluate(
                config,
                backend,
                shown,
                started_at,
                run_path=run_path,
                fresh_answers=fresh_answers,
                rejudge_failed=rejudge_failed,
                bars=bars,
                wait_s=wait_s,
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
    wait_s: float,
) -> Evaluation:
    reports = ReportsDir(config.reports.dir)
    with reports.lock(wait_s):  # before the adapter is asked: a second run must not pay for answers
        path = config.judge.prompt
        if backend is None and config.judge.backend == "lexical":  # it reads no prompt
            path = unread_prompt(path, shipped_prompt("judge.v1.md"))
        prompt = load_task_prompt(path, ANSWER)  # a bad prompt fails before any model loads
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
        files = chain(folder_files(report), [("run.jsonl", jsonl_text(run_lines(inputs.run)))])
        folder = reports.publish(name, files, report.entry)
        write_history_page(config, reports)  # the season's picture, with tonight in it
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

    gates: dict[str, Gate | None] = {}

    def gate(name: str) -> Gate | None:
        if name in read:  # the whole record is read already: its gate
            whole = read[name]
            return None if whole is None else whole.gate
        if name not in gates:
            try:
                gates[name] = read_gate(reports.folder(name).path)
            except (ConfigError, InputError, OSError):
                gates[name] = None
        return gates[name]

    history, baseline = reports.history(), read_baseline(config.reports.baseline)
    return Earlier(history, baseline, record, values, gate)
