"""``judge check``: every input validated the way ``judge run`` loads it, and every problem
reported at once, before anything is judged; the judge ``judge run`` would use preflighted
(reachable, model present, its digest, how much of the run the cache holds) with nothing
judged; with ``--repeat N``, whether the RAG system answers the same questions the same way
(``repeat``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from judge.audit.types import AuditResult
from judge.axes import OPTIONAL_AXES
from judge.config import Config, shipped_prompt
from judge.errors import ConfigError, HarnessError, InputError, PromptError
from judge.inputs.adapter import AdapterProgress, log_note, produce_run
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.labels import load_labels_if_any
from judge.inputs.runs import Run, validate_run
from judge.inputs.user_code import adapter_output, load_adapter
from judge.judging.backends.base import JudgeBackend
from judge.judging.items import build_items
from judge.judging.prompts import Prompt, unread_prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import AnyTask
from judge.judging.tasks.registry import enabled_tasks, load_task_prompt
from judge.metrics import metric_names
from judge.pipeline.inputs import Inputs, _ignore, load_inputs
from judge.pipeline.session import Preflight, preflight, task_plans
from judge.record.store import ReportsDir
from judge.results.compare import GateRule
from judge.results.gate import (
    Detectable,
    detectable,
    gate_judge_metrics,
    gating_warning,
    night_family,
)
from judge.results.reproducibility import Repeated, repeated


class AnswerSource(NamedTuple):
    """Where the run's answers come from, and what ``judge run`` would ask the adapter after
    this check: the dry run's account of the RAG system's side."""

    source: str
    """The run file, or the file the adapter's answers are saved in."""
    adapter: str | None
    """``data.adapter`` when the answers are its (None for a run file: no adapter is asked)."""
    asked: int
    """Questions this check asked the adapter (0 for a run file, or saved answers reused whole)."""
    reused: bool
    """The adapter's saved answers were reused (only the questions it had failed asked again)."""
    total: int

    def describe(self) -> str:
        """What was and would be asked (the line beside the run's source, which it does not
        repeat)."""
        if self.adapter is None:
            return "a run file: no adapter is asked"
        if self.reused:
            again = (
                f"asked again only the {self.asked} question(s) it had failed"
                if self.asked
                else "not asked"
            )
            first = f"saved answers of {self.adapter} reused ({again})"
        else:
            first = f"{self.adapter} asked {self.asked} question(s), its answers saved"
        # check fails on any question the adapter failed, so a passing check leaves none to ask
        return (
            f"{first}; judge run reuses them and asks the adapter nothing "
            f"(--fresh-answers asks all {self.total})"
        )


class Checked(NamedTuple):
    """Valid inputs, and the counts ``judge check`` shows of them."""

    inputs: Inputs
    per_type: dict[str, int]
    """Questions per type, in ``data.question_types`` order (a type with none shows 0)."""
    unlabelled: list[str]
    """Questions whose relevant chunks nobody has labelled (judged only)."""
    documents: int
    """Documents the corpus' chunks come from."""
    labellers: int
    """Distinct labellers of the current human labels."""
    detectable: list[Detectable]
    """Per type, what the gate can call with that many questions (``judge.results.gate``)."""
    answers: AnswerSource
    judge: Preflight | None
    """The judge ``judge run`` would use, and what the cache holds of this run for it (the
    further judgements' too, where they are on: ``Preflight.further``); None when
    the preflight was skipped (``--no-judge``, for offline use)."""
    gating: str | None = None
    """That the golden set cannot be gated at the judge's verdict error (too small a type:
    ``judge.results.gate.gating_warning``), or None."""


def check(
    config: Config,
    run_path: Path | None = None,
    *,
    fresh_answers: bool = False,
    preflight_judge: bool = False,
    backend: JudgeBackend | str | None = None,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> Checked:
    """Load the golden set, the run, the labels and the prompt; raise one ``InputError`` with
    every problem found. ``on_inputs`` sees the inputs once loaded, before that error.

    What other commands only warn about is an error here (labels of questions that are gone
    from the labels file, an adapter that failed a question): check is where it must show.

    ``preflight_judge`` (the command's default; ``--no-judge`` turns it off): once the inputs
    are valid, open the judge as ``judge run`` would (``backend``: a name overriding
    ``judge.backend``, or a ready backend, as ``evaluate`` takes it), read its identity and
    count the run's items in the verdict cache; nothing is judged. A judge that cannot run
    raises the same ``BackendUnavailable`` (exit 3) as ``judge run``. Off by default here so
    that validating inputs alone never opens a model.
    """
    if isinstance(backend, str):
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    prompt, tasks, problems = _prompts(config, backend is not None)
    if problems and _asks_adapter(config, run_path):
        # every file checked before the adapter is asked anything: its answers cost time
        raise InputError(problems + _file_problems(config))
    inputs = load_inputs(config, run_path, fresh_answers=fresh_answers, on_adapter=on_adapter)
    on_inputs(inputs)
    golden, run = inputs.golden, inputs.run
    problems = _input_problems(inputs, problems)
    if problems:
        raise InputError(problems)
    ordered, scored = _questions_per_type(config, inputs)
    family = night_family(
        ordered,
        scored,
        len(metric_names(config.retrieval.ks)),
        len(gate_judge_metrics(OPTIONAL_AXES if config.judge.correctness.enabled else ())),
    )
    judged = None
    if preflight_judge and prompt is not None:  # the prompt loaded: problems would be raised
        items = build_items(golden, run, config.retrieval.context_k)
        plans = task_plans(config, tasks, golden, run)
        judged = preflight(config, items, prompt, backend, plans)
    return Checked(
        inputs,
        ordered,
        [q.id for q in golden.questions if q.relevant_chunks is None],
        len({c.doc for c in golden.corpus.values()}),
        len({label.labeller for label in inputs.labels.current}),
        detectable(ordered, family, GateRule.from_config(config.reports)),
        _answers(config, run_path, inputs),
        judged,
        _gating(config, ordered),
    )


#: Labels an audit must have scored before its measured error replaces the documented default
#: in ``judge check``'s warning: with fewer, the default is the better guess.
MIN_LABELS_FOR_ERROR = 20


def measured_error(audit: AuditResult | None) -> tuple[float, int] | None:
    """The judge's verdict error as a run's audit measured it: one minus its exact agreement
    with the humans, averaged over faithfulness and relevance (all types), and the labels it
    rests on; None without an audit or with fewer than ``MIN_LABELS_FOR_ERROR`` labels."""
    if audit is None or audit.judge.n < MIN_LABELS_FOR_ERROR:
        return None
    shares = [
        stats["all"].exact
        for axis in ("faithfulness", "relevance")
        if (stats := audit.judge.per_axis.get(axis)) and "all" in stats
    ]
    exact = [share for share in shares if share is not None]
    if not exact:
        return None
    return 1.0 - sum(exact) / len(exact), audit.judge.n


def _gating(config: Config, per_type: dict[str, int]) -> str | None:
    """``gating_warning`` at the verdict error the latest run's audit measured (its labels, its
    judge), else at the documented default; the warning says which."""
    try:
        audit = ReportsDir(config.reports.dir).folder(None).record().audit
    except HarnessError:  # no run yet, or one this judge cannot read: the default
        audit = None
    measured = measured_error(audit)
    if measured is None:
        warning = gating_warning(per_type)
        return None if warning is None else f"{warning}; the verdict error is the default"
    error, labels = measured
    warning = gating_warning(per_type, error)
    if warning is None:
        return None
    return f"{warning}; the verdict error is the latest run's audit's, on {labels} labels"


def _prompts(
    config: Config, given_backend: bool = False
) -> tuple[Prompt | None, list[tuple[AnyTask, Prompt]], list[str]]:
    """The answer prompt and the enabled further judgements' prompts, loaded exactly as `run`
    loads them, and every problem found with them. Loaded first, before the adapter is asked:
    a prompt that does not load must not cost the user a round of answers. The lexical judge
    (configured, not ``given_backend``) reads no prompt, so it needs no prompt file; a named
    one that is there is still checked, and so it is with ``--no-judge`` (the run that
    follows would load it)."""
    problems: list[str] = []
    prompt: Prompt | None = None
    path = config.judge.prompt
    if not given_backend and config.judge.backend == "lexical":
        path = unread_prompt(path, shipped_prompt("judge.v1.md"))
    try:  # the prompt, exactly as `run` loads it
        prompt = load_task_prompt(path, ANSWER)
    except PromptError as exc:
        problems.append(str(exc))
    tasks: list[tuple[AnyTask, Prompt]] = []
    try:  # and those of the further judgements, where they are on
        tasks = enabled_tasks(config)
    except (PromptError, ConfigError) as exc:
        problems.append(str(exc))
    return prompt, tasks, problems


def _asks_adapter(config: Config, run_path: Path | None) -> bool:
    """Whether loading the inputs would ask ``data.adapter`` (a run file wins over it)."""
    return (run_path or config.data.run) is None and bool(config.data.adapter)


def _file_problems(config: Config) -> list[str]:
    """The problems of the golden set, the corpus and the labels, read without asking the
    adapter: reported with a bad prompt's, so that one check shows every file's."""
    try:
        golden = load_golden(config.data)
        labels = load_labels_if_any(config.data.labels, golden.by_id())
    except InputError as exc:
        return exc.problems
    except ConfigError as exc:
        return [str(exc)]
    return [problem for problem in [labels.missing_problem()] if problem]


def _input_problems(inputs: Inputs, prompt_problems: list[str]) -> list[str]:
    """Every problem check refuses, in one list: labels gone from the labels file, the
    prompts' (``prompt_problems``), a question the adapter failed."""
    problems = [problem for problem in [inputs.labels.missing_problem()] if problem]
    problems += prompt_problems
    failed = inputs.run.meta.failed
    problems += [
        f"{inputs.run_source}: the adapter failed for question '{q.id}': {failed[q.id]}"
        for q in inputs.golden.questions
        if q.id in failed
    ]
    return problems


def _questions_per_type(config: Config, inputs: Inputs) -> tuple[dict[str, int], dict[str, int]]:
    """Per question type, in the configured order: how many questions, and how many of them
    retrieval scores (those with relevant chunks)."""
    questions = inputs.golden.questions
    per_type = dict.fromkeys(config.data.question_types, 0)
    for q in questions:
        per_type[q.type] = per_type.get(q.type, 0) + 1
    ordered = {t: per_type[t] for t in config.data.question_types}
    scored = dict.fromkeys(ordered, 0)
    for q in questions:
        if q.relevant_chunks:
            scored[q.type] = scored.get(q.type, 0) + 1
    return ordered, scored


def _answers(config: Config, run_path: Path | None, inputs: Inputs) -> AnswerSource:
    """Where ``load_inputs`` took the answers from (a run file wins over the adapter)."""
    total = len(inputs.run.records)
    if (run_path or config.data.run) is not None or not config.data.adapter:
        return AnswerSource(inputs.run_source, None, 0, False, total)
    asked = inputs.asked_again if inputs.reused else len(inputs.golden.questions)
    return AnswerSource(inputs.run_source, config.data.adapter, asked, inputs.reused, total)


# --- judge check --repeat N -------------------------------------------------------------------


def repeat_refusal(config: Config, run_path: Path | None = None) -> None:
    """Refuse ``--repeat`` before anything is loaded or asked when there is no adapter to ask:
    a recorded run file is one set of answers, and asking again is what is measured."""
    if run_path is not None:
        raise ConfigError(
            f"--repeat asks data.adapter again, but --run gives a run file ({run_path}): "
            "drop --run to measure the adapter"
        )
    if not config.data.adapter:
        where = f" ({config.data.run})" if config.data.run is not None else ""
        raise ConfigError(
            f"--repeat needs data.adapter (module:function): a recorded run file{where} holds "
            "one set of answers and cannot be asked again; set data.adapter to measure whether "
            "the RAG system answers the same way twice"
        )


class Repeat(NamedTuple):
    """The asks of ``judge check --repeat``, compared; and what went wrong while asking."""

    repeated: Repeated
    problems: list[str]
    """Questions the adapter failed, or answered invalidly, in one of the asks: check's errors
    (they are left out of the comparison, which still stands for the others)."""
    log: Path | None
    """What the adapter printed while it was asked (``reports/runs/repeat-<UTC time>.log``),
    None when it printed nothing."""

    def warnings(self) -> list[str]:
        return [] if self.log is None else [log_note(self.log)]


def repeat(
    config: Config,
    golden: GoldenSet,
    asks: int,
    *,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
) -> Repeat:
    """Ask ``data.adapter`` every golden question ``asks`` times, afresh each time, and compare
    the answers question by question (``judge.results.reproducibility.repeated``).

    Nothing of these asks is saved as answers: the runs stay in memory, so the saved answers a
    later command reuses (``judge.inputs.adapter.adapter_answers``: the newest
    ``reports/runs/adapter-*.jsonl``) are those ``check`` itself validated. Only what the
    adapter prints is kept, in a log under ``reports/runs/`` that no command reads as answers.
    ``on_adapter`` sees one progress over all asks.
    """
    spec = config.data.adapter
    if not spec:  # repeat_refusal says so first, in the CLI
        raise ConfigError("--repeat needs data.adapter (module:function)")
    runs_dir = ReportsDir(config.reports.dir).runs_dir
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    total = len(golden.questions)
    runs: list[Run] = []
    problems: list[str] = []
    with adapter_output(runs_dir / f"repeat-{stamp}.log") as log:
        adapter = load_adapter(spec, config.source.resolve().parent if config.source else None)
        for ask in range(1, asks + 1):

            def progress(event: AdapterProgress, done: int = (ask - 1) * total) -> None:
                on_adapter(event._replace(done=done + event.done, total=asks * total))

            run = produce_run(
                spec,
                golden,
                config.data.adapter_concurrency,
                progress,
                timeout_s=config.data.adapter_timeout_s,
                adapter=adapter,
            )
            where = f"--repeat, ask {ask} of {asks}"
            problems += [
                f"{where}: the adapter failed for question '{q.id}': {run.meta.failed[q.id]}"
                for q in golden.questions
                if q.id in run.meta.failed
            ]
            invalid: set[str] = set()

            def located(qid: str, where: str = where, invalid: set[str] = invalid) -> str:
                invalid.add(qid)
                return f"{where}, question '{qid}'"

            try:
                validate_run(run, golden, located)
            except InputError as exc:
                problems += exc.problems
            records = {qid: r for qid, r in run.records.items() if qid not in invalid}
            runs.append(Run(run.meta, records))
    compared = repeated(golden.questions, runs, config.data.question_types)
    return Repeat(compared, problems, log.path if log.written else None)
