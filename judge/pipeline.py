"""The one place where the stages are wired: inputs → retrieval → judge → report folder → gate.

``evaluate`` is what ``judge run``, ``judge nightly``, the Python API and the tests call. It owns
the lock on the reports folder, the judge backend's lifetime, the verdict cache, interruption,
the report and the gate. ``rerender`` rebuilds a folder's report through the same
``build_report`` from what the folder and the cache hold. Nothing here prints: progress goes to
``Hooks``, the outcome comes back as an ``Evaluation``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from judge.config import Config
from judge.errors import AdapterError, BackendUnavailable, ConfigError, Interrupted
from judge.inputs.adapter import AdapterProgress, adapter_answers
from judge.inputs.golden import GoldenSet, Leak, find_leaks, load_golden
from judge.inputs.labels import Labels, load_labels_if_any
from judge.inputs.runs import Run, load_run
from judge.judging.backends import JudgeBackend, OpenedBackend, open_backend
from judge.judging.backends.pool import PoolRefused, judging_concurrency
from judge.judging.cache import VerdictCache
from judge.judging.evidence import VERIFIER_VERSION
from judge.judging.grading import (
    Fingerprint,
    JudgeProgress,
    cached_verdicts,
    judge_fingerprint,
    judge_items,
)
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import Prompt, load_prompt
from judge.report.build import Judged, Measured, Report, build_report
from judge.report.files import render_files
from judge.results.baseline import read_baseline
from judge.results.folder import ReportFolder, ReportsDir
from judge.results.gate import Gate, gate
from judge.results.manifest import JudgeInfo
from judge.results.tables import retrieval_table
from judge.retrieval import score_run

if TYPE_CHECKING:
    import pandas as pd

    from judge.judging.stability import StabilityReport
    from judge.sweep.measure import JudgeMeans, SettingScores
    from judge.sweep.report import SweepOutcome
    from judge.sweep.settings import Setting


def _ignore(_: Any) -> None:
    pass


class JudgeChoice(NamedTuple):
    """Which judge is about to run, and on what (shown before any judging starts)."""

    judge: str
    reason: str
    prompt: Path
    run_source: str
    context_k: int


class Hooks(NamedTuple):
    """Callbacks for what happens during an evaluation (the CLI draws progress bars)."""

    on_adapter: Callable[[AdapterProgress], None] = _ignore
    on_inputs: Callable[[Inputs], None] = _ignore
    """Called once the inputs are loaded and valid, before any judging (warnings go here)."""
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore
    on_judging: Callable[[JudgeProgress], None] = _ignore


# --- inputs --------------------------------------------------------------------------------


class Inputs(NamedTuple):
    """A validated golden set, the run to evaluate, and the human labels."""

    golden: GoldenSet
    run: Run
    run_source: str
    """The run file (for an adapter, the file its answers were saved to)."""
    reused: bool
    """True when the adapter's saved answers were reused instead of asking it again."""
    asked_again: int
    """With reused answers: the questions the adapter had failed, asked again."""
    leaks: list[Leak]
    labels: Labels

    def warnings(self, with_labels: bool = True) -> list[str]:
        """Lines every command shows before its output (``check`` lists retired labels
        itself, so it leaves their warning out)."""
        lines = [
            f"document '{leak.doc}' quotes {len(leak.question_ids)} golden questions verbatim "
            f"({', '.join(leak.question_ids)}); the test set may be leaking into the corpus"
            for leak in self.leaks
        ]
        if self.reused:
            again = (
                f"asked again only the {self.asked_again} question(s) it had failed"
                if self.asked_again
                else "the adapter was not asked again"
            )
            lines.append(
                f"answers reused from {self.run_source} ({again}; --fresh-answers asks it)"
            )
        failed = self.run.meta.failed
        if failed:
            lines.append(
                f"the adapter failed for {len(failed)} question(s): {', '.join(sorted(failed))}"
            )
        label_warning = self.labels.warning()
        if label_warning and with_labels:
            lines.append(label_warning)
        return lines


def load_inputs(
    config: Config,
    run_path: Path | None = None,
    *,
    fresh_answers: bool = False,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
    with_labels: bool = True,
) -> Inputs:
    """Load and validate the golden set, the run and (unless ``with_labels`` is false, for
    commands that never read them) the human labels.

    The run is a file (``run_path``, else ``data.run``) or the adapter's (``data.adapter``):
    its newest valid saved answers for this golden set and corpus with the questions it failed
    asked again, or, with ``fresh_answers`` or none saved, all new answers
    (``judge.inputs.adapter.adapter_answers``).
    """
    golden = load_golden(config.data)
    labels = load_labels_if_any(config.data.labels if with_labels else None, golden.by_id())
    path = run_path or config.data.run
    reused, asked_again = False, 0
    if path is not None:
        run = load_run(path, golden, config.data.max_file_mb)
        source = str(path)
    elif config.data.adapter:
        answers = adapter_answers(
            config.data.adapter,
            golden,
            ReportsDir(config.reports.dir).runs_dir,
            config.data.adapter_concurrency,
            fresh=fresh_answers,
            on_progress=on_adapter,
            search_dir=config.source.resolve().parent if config.source else None,
            timeout_s=config.data.adapter_timeout_s,
        )
        run, source = answers.run, str(answers.path)
        reused, asked_again = answers.reused, answers.asked_again
    else:
        raise ConfigError("no run: set data.run (a file) or data.adapter (module:function)")
    return Inputs(golden, run, source, reused, asked_again, find_leaks(golden), labels)


def measure_retrieval(config: Config, golden: GoldenSet, run: Run, source: str) -> Measured:
    """Score retrieval per question and build the per-type table."""
    scores = score_run(golden, run, config.retrieval.ks)
    return Measured(golden, run, source, scores, retrieval_table(config, golden, scores))


# --- evaluate --------------------------------------------------------------------------------


class Evaluation(NamedTuple):
    """One judged run: its report folder, the report it holds, and the gate."""

    folder: ReportFolder
    report: Report
    gate: Gate
    inputs: Inputs

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

        verdicts = {v.question_id: v for v in self.report.verdicts}
        items = {i.question_id: i for i in self.report.items}
        failed = self.inputs.run.meta.failed
        rows = []
        for q in self.inputs.golden.questions:
            v, item = verdicts.get(q.id), items.get(q.id)
            status = v.status if v else ("adapter_failed" if q.id in failed else "not_judged")
            row: dict[str, Any] = {
                "question_id": q.id,
                "type": q.type,
                "split": q.split or "",
                "tags": list(q.tags),
                "status": status,
                "faithfulness": v.faithfulness if v else None,
                "relevance": v.relevance if v else None,
                "evidence": v.evidence if v else "",
                "match_kind": v.match.kind if v and v.match else None,
                "needs_review": bool(v and (v.review or v.status != "ok")),
            }
            row.update(item.retrieval if item else {})
            rows.append(row)
        return pd.DataFrame(rows).set_index("question_id")


def _open(
    config: Config, backend: JudgeBackend | None, items: list[JudgeItem], prompt: Prompt
) -> tuple[OpenedBackend, bool]:
    """The backend to judge with, and whether this evaluation owns (and so closes) it.

    The ``openai`` judge runs without a server when every reply is in the cache already
    (imported from a batch engine by ``judge batch import``): there is nothing to ask it. A
    pool that some servers answered (``PoolRefused``) is a configuration to fix, not this case.
    """
    if backend is not None:
        return OpenedBackend(backend, "given by the caller"), False
    try:
        return open_backend(config.judge), True
    except PoolRefused:
        raise
    except BackendUnavailable as exc:
        if config.judge.backend != "openai":
            raise
        from judge.judging.backends.openai import CachedOpenAI

        offline = CachedOpenAI(config.judge.openai, str(exc))
        cache = VerdictCache(config.judge.cache_path)
        try:
            fingerprint = judge_fingerprint(offline.identity, prompt).value
            missing = {item.key for item in items} - cache.cached_keys(fingerprint)
        finally:
            cache.close()
        if missing:
            raise
        reason = f"backend = openai: no server ({exc}), but every reply is in the cache"
        return OpenedBackend(offline, reason), True


@contextmanager
def _judging(
    config: Config,
    backend: JudgeBackend | None,
    items: list[JudgeItem],
    prompt: Prompt,
    run_source: str,
    on_judge_chosen: Callable[[JudgeChoice], None],
) -> Iterator[tuple[OpenedBackend, VerdictCache]]:
    """The backend (opened, announced, closed if this opened it) and the verdict cache, for
    as long as a command judges: ``evaluate``, ``sweep`` and ``judge_stability`` alike."""
    opened, owned = _open(config, backend, items, prompt)
    try:
        on_judge_chosen(
            JudgeChoice(
                opened.backend.identity.describe(),
                opened.reason,
                prompt.path,
                run_source,
                config.retrieval.context_k,
            )
        )
        cache = VerdictCache(config.judge.cache_path)
        try:
            yield opened, cache
        finally:
            cache.close()
    finally:
        if owned:
            opened.backend.close()


def judge_info(opened: OpenedBackend, prompt: Prompt) -> JudgeInfo:
    identity = opened.backend.identity
    return JudgeInfo(
        backend=identity.kind,
        model=identity.model,
        digest=identity.digest,
        server_version=identity.server_version,
        endpoint=identity.endpoint,
        chosen_because=opened.reason,
        prompt=str(prompt.path),
        prompt_sha256=prompt.sha256,
        evidence_verifier_version=VERIFIER_VERSION,
        model_about=identity.about,
    )


def evaluate(
    config: Config,
    *,
    backend: JudgeBackend | str | None = None,
    run_path: Path | None = None,
    fresh_answers: bool = False,
    rejudge_failed: bool = False,
    hooks: Hooks = Hooks(),  # noqa: B008 (an immutable tuple of no-op callbacks)
) -> Evaluation:
    """Judge every answer of a run and write a report folder; return it with its gate.

    ``backend``: a backend name (overrides ``judge.backend``) or a ready ``JudgeBackend``
    (then the caller owns it and closes it). ``rejudge_failed``: ask the judge again where its
    cached reply gave no usable verdict. Raises ``Interrupted`` on Ctrl-C, after keeping what
    was judged in the cache.
    """
    started_at = datetime.now(UTC)
    if isinstance(backend, str):  # recorded in the manifest as the configuration it ran with
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    try:
        return _evaluate(
            config,
            backend,
            hooks,
            started_at,
            run_path=run_path,
            fresh_answers=fresh_answers,
            rejudge_failed=rejudge_failed,
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
) -> Evaluation:
    reports = ReportsDir(config.reports.dir)
    with reports.lock():  # before the adapter is asked: a second run must not pay for answers
        prompt = load_prompt(config.judge.prompt)  # a bad prompt fails before any model loads
        reports.history()  # and so does a damaged history, before anything is asked or judged
        read_baseline(config.reports.baseline)  # and a baseline of the old format
        inputs = load_inputs(
            config, run_path, fresh_answers=fresh_answers, on_adapter=hooks.on_adapter
        )
        hooks.on_inputs(inputs)
        measured = measure_retrieval(config, inputs.golden, inputs.run, inputs.run_source)
        items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
        with _judging(config, backend, items, prompt, inputs.run_source, hooks.on_judge_chosen) as (
            opened,
            cache,
        ):
            outcome = judge_items(
                items,
                opened.backend,
                prompt,
                cache,
                concurrency=judging_concurrency(opened.backend, config.judge.concurrency),
                max_attempts=config.judge.max_attempts,
                on_progress=hooks.on_judging,
                rejudge_failed=rejudge_failed,
            )
        if outcome.interrupted:
            # The same command resumes: the verdicts are cached, and an adapter's answers are
            # saved and reused (no need to point --run at them).
            raise Interrupted(
                f"{len(outcome.verdicts)} of {len(inputs.run.records)} answers judged and "
                "cached; run the same command again to resume"
            )
        judged = Judged(
            outcome.verdicts, judge_info(opened, prompt), outcome.fingerprint, outcome.elapsed_s
        )
        name = reports.new_folder_name(outcome.fingerprint.value, started_at)
        report = build_report(config, measured, judged, inputs.labels.current, started_at, name)
        folder = reports.publish(name, render_files(report), report.entry)
    checked = gate(
        [*report.comparisons, *report.baseline],
        failed=[f.question_id for f in report.adapter_failed],
        total=len(inputs.golden.questions),
        unjudged=[v.question_id for v in report.unjudged],
        judged=len(report.verdicts),
    )
    return Evaluation(folder, report, checked, inputs)


def rerender(
    config: Config, folder_name: str | None, warn: Callable[[str], None] = _ignore
) -> ReportFolder:
    """Rebuild a folder's report from its saved run and the cache; nothing is judged.

    Each verdict is re-derived from the backend reply stored in the cache (so a newer evidence
    verifier or parser applies); a reply no longer in the cache (pruned) keeps the verdict
    saved in the folder. The golden set and corpus must be the ones the run used.
    """
    reports = ReportsDir(config.reports.dir)
    with reports.lock():
        folder = reports.folder(folder_name)
        manifest = folder.manifest
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
        run = load_run(folder.run_path, golden)
        measured = measure_retrieval(config, golden, run, manifest.run.source)
        fingerprint = Fingerprint(manifest.fingerprints.judge, manifest.fingerprints.judge_parts)
        cache = VerdictCache(config.judge.cache_path)
        try:
            items = build_items(golden, run, config.retrieval.context_k)
            saved = folder.verdicts()
            rederived = cached_verdicts(items, fingerprint.value, cache)
        finally:
            cache.close()
        # The report describes the run as it happened: whether a verdict came from the cache
        # then, not now.
        verdicts = saved | {
            qid: v.model_copy(update={"cached": saved[qid].cached}) if qid in saved else v
            for qid, v in rederived.items()
        }
        judged = Judged(verdicts, manifest.judge, fingerprint, manifest.judge_seconds)
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
            finished_at=datetime.fromisoformat(manifest.finished_at),
        )
        folder.write_files(render_files(report))
    return folder


# --- sweep ------------------------------------------------------------------------------------


class SweepStep(NamedTuple):
    """A sweep moving on: asking the adapter under a setting, or judging one."""

    stage: str
    """"answers" (tuning split), "judge" or "holdout" (answers for the final comparison)."""
    position: int
    """0-based, of ``total``."""
    total: int
    label: str


class SweepHooks(NamedTuple):
    on_step: Callable[[SweepStep], None] = _ignore
    on_adapter: Callable[[AdapterProgress], None] = _ignore
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore
    on_judging: Callable[[JudgeProgress], None] = _ignore


def sweep(
    config: Config,
    *,
    judge: bool = True,
    backend: JudgeBackend | str | None = None,
    hooks: SweepHooks = SweepHooks(),  # noqa: B008 (an immutable tuple of no-op callbacks)
) -> SweepOutcome:
    """Run every setting of ``[sweep]`` on the tuning split, choose with the guards, judge the
    default and the best few, score the holdout for the final comparison only, and write a
    sweep folder (``reports/sweeps/``). Answers are saved per setting and split, so a stopped
    sweep resumes and no setting is asked a question twice; verdicts go through the cache.
    """
    from judge.sweep.measure import scored_questions
    from judge.sweep.report import SweepOutcome, write_sweep
    from judge.sweep.select import MIN_QUESTIONS, SweepRule, select
    from judge.sweep.settings import grid_settings

    started_at = datetime.now(UTC)
    swept = config.sweep
    if swept is None:
        where = config.source or "the configuration"
        raise ConfigError(f"{where} has no [sweep] table; docs/sweep.md shows one")
    if isinstance(backend, str):
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    settings, default = grid_settings(swept)
    reports = ReportsDir(config.reports.dir)
    try:
        with reports.lock():
            prompt = load_prompt(config.judge.prompt) if judge else None
            golden = load_golden(config.data)
            tune = golden._replace(
                questions=tuple(q for q in golden.questions if q.split != "holdout")
            )
            holdout = golden._replace(
                questions=tuple(q for q in golden.questions if q.split == "holdout")
            )
            scored = scored_questions(tune)
            if len(scored) < MIN_QUESTIONS:
                raise ConfigError(
                    f"{config.data.questions}: the tuning split has {len(scored)} question(s) "
                    f"with relevant chunks; the sweep's guards need at least {MIN_QUESTIONS} "
                    "(with fewer, one question decides): add tuning questions"
                )
            _check_sweep_adapter(config)
            tuned = {
                s.key: _setting_scores(config, tune, s, "tune", (i, len(settings)), hooks)
                for i, s in enumerate(settings)
            }
            try:
                selection = select(
                    scored,
                    {s.label: tuned[s.key].values for s in settings},
                    default.label,
                    swept.primary,
                    swept.secondary,
                    SweepRule(
                        swept.min_gain,
                        swept.se_multiple,
                        swept.min_stability,
                        swept.secondary_tolerance,
                    ),
                )
            except ValueError as exc:
                raise ConfigError(f"sweep: {exc}") from None
            by_label = {s.label: s for s in settings}
            winner = by_label[selection.winner]
            ranked = sorted(settings, key=lambda s: -tuned[s.key].mean(swept.primary))
            to_judge = [default, *[s for s in ranked if s != default][: swept.judge_top]]
            final = [default] if winner == default else [default, winner]
            held = {
                s.key: _setting_scores(config, holdout, s, "holdout", (i, len(final)), hooks)
                for i, s in enumerate(final)
                if holdout.questions
            }
            judged: dict[tuple[str, str], JudgeMeans] = {}
            judge_used = None
            if prompt is not None:
                runs = [(s, "tune", tune, tuned[s.key]) for s in to_judge]
                runs += [(s, "holdout", holdout, held[s.key]) for s in final if s.key in held]
                judged, judge_used = _judge_settings(config, backend, prompt, runs, hooks)
            outcome = SweepOutcome(
                config=config,
                started_at=started_at,
                settings=settings,
                default=default,
                tuned=tuned,
                selection=selection,
                holdout=held,
                judged=judged,
                judge=judge_used,
                folder=_new_sweep_folder(reports.path / "sweeps", started_at),
            )
            write_sweep(outcome)
            return outcome
    except KeyboardInterrupt:
        raise Interrupted(
            "sweep stopped; the answers given so far are saved and the verdicts cached: run "
            "the same command again to resume"
        ) from None


def _new_sweep_folder(parent: Path, started_at: datetime) -> Path:
    stamp = started_at.strftime("%Y%m%dT%H%M%SZ")
    path, n = parent / stamp, 1
    while path.exists():  # two sweeps in one second
        n += 1
        path = parent / f"{stamp}-{n}"
    return path


def _check_sweep_adapter(config: Config) -> None:
    """Import the sweep's adapter once before anything is asked: a typo fails in one line."""
    from judge.inputs.adapter import load_adapter

    assert config.sweep is not None
    spec = config.sweep.answer or config.sweep.factory or ""
    load_adapter(spec, config.source.resolve().parent if config.source else None)


def _setting_scores(
    config: Config,
    golden: GoldenSet,
    setting: Setting,
    split: str,
    position: tuple[int, int],
    hooks: SweepHooks,
) -> SettingScores:
    """A setting's answers on one split (saved ones reused, failed ones asked again), scored.

    A setting the adapter failed on every question is a setting it rejects: the sweep stops
    there with the adapter's own message, rather than ranking a setting that never ran.
    """
    from judge.inputs.adapter import saved_run
    from judge.sweep.measure import setting_scores
    from judge.sweep.settings import Built, setting_adapter, sweep_spec

    assert config.sweep is not None
    hooks.on_step(SweepStep("answers" if split == "tune" else "holdout", *position, setting.label))
    search_dir = config.source.resolve().parent if config.source else None
    spec = f"sweep-{sweep_spec(config.sweep)}-{setting.key}-{split}"
    runs_dir = ReportsDir(config.reports.dir).runs_dir
    adapter = setting_adapter(config.sweep, setting, search_dir)
    saved = saved_run(runs_dir, spec, golden)
    if isinstance(adapter, Built) and (saved is None or load_run(saved, golden).meta.failed):
        adapter.built()  # it will be asked: a factory that rejects the setting fails here, once
    answers = adapter_answers(
        spec,
        golden,
        runs_dir,
        config.data.adapter_concurrency,
        on_progress=hooks.on_adapter,
        search_dir=search_dir,
        timeout_s=config.data.adapter_timeout_s,
        adapter=adapter,
    )
    run = answers.run
    if golden.questions and not run.records:
        first = next(iter(run.meta.failed.values()), "no answer")
        raise AdapterError(
            f"the sweep's adapter failed every {split} question under {setting.label}, so it "
            f"rejects that setting: {first} (fix the grid or the adapter; answers in "
            f"{answers.path})"
        )
    return setting_scores(config, golden, setting, run, str(answers.path), answers.reused)


def _judge_settings(
    config: Config,
    backend: JudgeBackend | None,
    prompt: Prompt,
    runs: list[tuple[Setting, str, GoldenSet, SettingScores]],
    hooks: SweepHooks,
) -> tuple[dict[tuple[str, str], JudgeMeans], str]:
    """Judge each (setting, split)'s answers with one backend, through the verdict cache."""
    from judge.sweep.measure import judge_means

    runs_by_key = {(s.key, split): (golden, scores) for s, split, golden, scores in runs}
    item_sets = {
        key: build_items(
            golden, load_run(Path(scores.run_path), golden), config.retrieval.context_k
        )
        for key, (golden, scores) in runs_by_key.items()
    }
    every_item = [item for items in item_sets.values() for item in items]
    judged: dict[tuple[str, str], JudgeMeans] = {}
    with _judging(
        config, backend, every_item, prompt, f"{len(runs)} sweep run(s)", hooks.on_judge_chosen
    ) as (opened, cache):
        for index, (setting, split, golden, _) in enumerate(runs):
            hooks.on_step(SweepStep("judge", index, len(runs), f"{setting.label} ({split})"))
            outcome = judge_items(
                item_sets[(setting.key, split)],
                opened.backend,
                prompt,
                cache,
                concurrency=judging_concurrency(opened.backend, config.judge.concurrency),
                max_attempts=config.judge.max_attempts,
                on_progress=hooks.on_judging,
            )
            if outcome.interrupted:
                raise KeyboardInterrupt
            judged[(setting.key, split)] = judge_means(
                golden, outcome.verdicts, config.data.question_types
            )
    return judged, opened.backend.identity.describe()


# --- the judge's own stability ------------------------------------------------------------------


def judge_stability(
    config: Config,
    *,
    sample: int = 20,
    seed: int = 0,
    backend: JudgeBackend | str | None = None,
    run_path: Path | None = None,
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore,
    on_judging: Callable[[JudgeProgress], None] = _ignore,
) -> tuple[StabilityReport, Path]:
    """Re-judge a seeded sample with its chunks reversed and shuffled and with an English and
    a Japanese prompt injection appended to the answer (``judge.judging.stability``); write
    the result as ``reports/stability/<time>.md`` and return it with that path. Everything
    judged goes through the verdict cache, so a second check costs nothing.
    """
    from judge.jsonl import write_atomic
    from judge.judging.stability import check_stability, stability_markdown

    if isinstance(backend, str):
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    started_at = datetime.now(UTC)
    prompt = load_prompt(config.judge.prompt)
    inputs = load_inputs(config, run_path, with_labels=False)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    with _judging(config, backend, items, prompt, inputs.run_source, on_judge_chosen) as (
        opened,
        cache,
    ):
        report = check_stability(
            items,
            opened.backend,
            prompt,
            cache,
            sample=sample,
            seed=seed,
            concurrency=judging_concurrency(opened.backend, config.judge.concurrency),
            max_attempts=config.judge.max_attempts,
            on_progress=on_judging,
        )
    folder = Path(config.reports.dir) / "stability"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{started_at.strftime('%Y%m%dT%H%M%SZ')}.md"
    write_atomic(path, "\n".join(stability_markdown(report)) + "\n")
    return report, path
