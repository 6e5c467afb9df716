"""``judge sweep``: every setting of ``[sweep]`` on the tuning split, chosen with the guards,
the default and the best few judged, the holdout scored for the final comparison only."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from judge.config import Config
from judge.config_sweep import SweepConfig
from judge.errors import AdapterError, ConfigError, Interrupted
from judge.formatting import timestamp
from judge.inputs.adapter import AdapterProgress, adapter_answers
from judge.inputs.golden import GoldenSet, load_golden
from judge.inputs.runs import load_run
from judge.io.write import clear_stale_folders
from judge.judging.backends.base import JudgeBackend
from judge.judging.grading import JudgeProgress
from judge.judging.items import build_items
from judge.judging.prompts import Prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import by_question
from judge.judging.tasks.registry import load_task_prompt
from judge.pipeline.inputs import _ignore
from judge.pipeline.session import JudgeChoice, judging_session
from judge.record.store import ReportsDir

if TYPE_CHECKING:
    from judge.sweep.measure import JudgeMeans, PooledChange, SettingScores
    from judge.sweep.outcome import SweepOutcome
    from judge.sweep.select import Selection
    from judge.sweep.settings import Setting


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


class _Splits(NamedTuple):
    """The golden set cut for a sweep: settings are chosen on ``tune``, shown on ``holdout``."""

    tune: GoldenSet
    holdout: GoldenSet
    scored: list[str]  # the tuning questions with relevant chunks, the ones the guards count


class _Choice(NamedTuple):
    """What the sweep does after choosing on the tuning split."""

    winner: Setting
    to_judge: list[Setting]  # the default and the best few others, judged on the tuning split
    final: list[Setting]  # the default and the winner (once when it is the default): the holdout


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
    from judge.report.sweep import sweep_files
    from judge.sweep.outcome import SweepOutcome
    from judge.sweep.settings import grid_settings

    started_at = datetime.now(UTC)
    swept = _sweep_table(config)
    if isinstance(backend, str):
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    settings, default = grid_settings(swept)
    reports = ReportsDir(config.reports.dir)
    try:
        with reports.lock():
            prompt = load_task_prompt(config.judge.prompt, ANSWER) if judge else None
            splits = _splits(config, load_golden(config.data))
            _check_sweep_adapter(config)
            tuned = _split_scores(config, splits.tune, "tune", settings, hooks)
            selection = _select(swept, splits.scored, settings, default, tuned)
            choice = _choice(swept, settings, default, tuned, selection)
            held: dict[str, SettingScores] = {}
            if splits.holdout.questions:
                held = _split_scores(config, splits.holdout, "holdout", choice.final, hooks)
            judged: dict[tuple[str, str], JudgeMeans] = {}
            judge_used = None
            if prompt is not None:
                runs = _judge_runs(splits, choice, tuned, held)
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
                holdout_changes=_holdout_changes(swept, held, default, choice.winner),
            )
            _write_folder(outcome.folder, sweep_files(outcome))
            return outcome
    except KeyboardInterrupt:
        raise Interrupted(
            "sweep stopped; the answers given so far are saved and the verdicts cached: run "
            "the same command again to resume"
        ) from None


def _sweep_table(config: Config) -> SweepConfig:
    """The configuration's ``[sweep]`` table, refused in one line when it has none."""
    if config.sweep is None:
        where = config.source or "the configuration"
        raise ConfigError(f"{where} has no [sweep] table; docs/sweep.md shows one")
    return config.sweep


def _splits(config: Config, golden: GoldenSet) -> _Splits:
    """The tuning and holdout splits; refused when too few tuning questions can be scored for
    the guards to mean anything."""
    from judge.sweep.measure import scored_questions
    from judge.sweep.select import MIN_QUESTIONS

    tune = golden._replace(questions=tuple(q for q in golden.questions if q.split != "holdout"))
    holdout = golden._replace(questions=tuple(q for q in golden.questions if q.split == "holdout"))
    scored = scored_questions(tune)
    if len(scored) < MIN_QUESTIONS:
        raise ConfigError(
            f"{config.data.questions}: the tuning split has {len(scored)} question(s) "
            f"with relevant chunks; the sweep's guards need at least {MIN_QUESTIONS} "
            "(with fewer, one question decides): add tuning questions"
        )
    return _Splits(tune, holdout, scored)


def _choice(
    swept: SweepConfig,
    settings: list[Setting],
    default: Setting,
    tuned: dict[str, SettingScores],
    selection: Selection,
) -> _Choice:
    """The winner, the settings judged on the tuning split (the default, then the best
    ``judge_top`` others by the primary metric) and those scored on the holdout."""
    winner = {s.label: s for s in settings}[selection.winner]
    ranked = sorted(settings, key=lambda s: -tuned[s.key].mean(swept.primary))
    to_judge = [default, *[s for s in ranked if s != default][: swept.judge_top]]
    final = [default] if winner == default else [default, winner]
    return _Choice(winner, to_judge, final)


def _split_scores(
    config: Config, golden: GoldenSet, split: str, settings: list[Setting], hooks: SweepHooks
) -> dict[str, SettingScores]:
    """Each of ``settings`` asked and scored on one split, one step after the other."""
    return {
        s.key: _setting_scores(config, golden, s, split, (i, len(settings)), hooks)
        for i, s in enumerate(settings)
    }


def _judge_runs(
    splits: _Splits,
    choice: _Choice,
    tuned: dict[str, SettingScores],
    held: dict[str, SettingScores],
) -> list[tuple[Setting, str, GoldenSet, SettingScores]]:
    """The (setting, split) runs to judge: the chosen ones on the tuning split, then the final
    ones on the holdout (those that were scored there)."""
    runs = [(s, "tune", splits.tune, tuned[s.key]) for s in choice.to_judge]
    runs += [(s, "holdout", splits.holdout, held[s.key]) for s in choice.final if s.key in held]
    return runs


def _select(
    swept: SweepConfig,
    scored: list[str],
    settings: list[Setting],
    default: Setting,
    tuned: dict[str, SettingScores],
) -> Selection:
    """The guarded choice among the settings on the tuning split (``judge.sweep.select``)."""
    from judge.sweep.select import SweepRule, select

    try:
        return select(
            scored,
            {s.label: tuned[s.key].values for s in settings},
            default.label,
            swept.primary,
            swept.secondary,
            SweepRule(
                swept.min_gain, swept.se_multiple, swept.min_stability, swept.secondary_tolerance
            ),
        )
    except ValueError as exc:
        raise ConfigError(f"sweep: {exc}") from None


def _holdout_changes(
    swept: SweepConfig, held: dict[str, SettingScores], default: Setting, winner: Setting
) -> dict[str, PooledChange]:
    """The winner against the default on the holdout, question by question, per metric (none
    when the default won or there is no holdout): shown, never used to choose."""
    from judge.sweep.measure import pooled_change

    if winner == default or not held:
        return {}
    changes = {}
    for metric in (swept.primary, *swept.secondary):
        change = pooled_change(held[default.key], held[winner.key], metric)
        if change is not None:
            changes[metric] = change
    return changes


def _write_folder(folder: Path, files: dict[str, str]) -> None:
    """Write a sweep folder whole or not at all: into a hidden sibling, then renamed into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_folders(folder.parent)  # a killed sweep's staging folder, named otherwise
    staging = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for name, text in files.items():
        (staging / name).write_text(text, encoding="utf-8")
    os.replace(staging, folder)


def _new_sweep_folder(parent: Path, started_at: datetime) -> Path:
    """``<time>/``, or ``<time>-2/``, ... when another sweep started in the same second: claimed
    exclusively (an empty folder that ``_write_folder`` renames the finished one over)."""
    from judge.io.write import claim_unique

    return claim_unique(parent, timestamp(started_at), folder=True)


def _check_sweep_adapter(config: Config) -> None:
    """Import the sweep's adapter once before anything is asked: a typo fails in one line."""
    from judge.inputs.user_code import load_adapter

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
    with judging_session(
        config, backend, every_item, prompt, f"{len(runs)} sweep run(s)", hooks.on_judge_chosen
    ) as session:
        for index, (setting, split, golden, _) in enumerate(runs):
            hooks.on_step(SweepStep("judge", index, len(runs), f"{setting.label} ({split})"))
            outcome = session.answers(item_sets[(setting.key, split)], hooks.on_judging)
            if outcome.interrupted:
                raise KeyboardInterrupt
            judged[(setting.key, split)] = judge_means(
                golden, by_question(outcome.results), config.data.question_types
            )
    return judged, session.backend.identity.describe()
