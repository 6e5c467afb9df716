"""The stages wired together: inputs → retrieval scores → (judge) → per-type tables.

The CLI calls these functions and only prints; nothing here prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from judge.aggregate import (
    JUDGE_METRICS,
    TypeTable,
    judge_rows,
    per_type_table,
    retrieval_rows,
    status_counts,
)
from judge.backends import OpenedBackend
from judge.cache import VerdictCache
from judge.config import Config
from judge.errors import ConfigError
from judge.golden import GoldenSet, Leak, find_leaks, load_golden
from judge.grading import JudgeOutcome, JudgeProgress, build_items, judge_items
from judge.prompts import Prompt, load_prompt
from judge.retrieval import RetrievalScores, metric_names, score_run
from judge.runs import AdapterProgress, Run, load_run, produce_run, save_run, validate_run
from judge.verdict import Verdict


class Inputs(NamedTuple):
    """A validated golden set and the run to evaluate."""

    golden: GoldenSet
    run: Run
    run_source: str
    """The run file (for an adapter, the file its answers were saved to)."""
    leaks: list[Leak]


def load_inputs(
    config: Config,
    run_path: Path | None = None,
    on_adapter_progress: Callable[[AdapterProgress], None] = lambda _: None,
) -> Inputs:
    """Load and validate the golden set and the run (a file, or produced by the adapter)."""
    golden = load_golden(config.data)
    path = run_path or config.data.run
    if path is not None:
        run = load_run(path, golden, config.data.max_file_mb)
        source = str(path)
    elif config.data.adapter:
        search_dir = config.source.resolve().parent if config.source else None
        run = produce_run(
            config.data.adapter,
            golden,
            config.data.adapter_concurrency,
            on_adapter_progress,
            search_dir,
        )
        # Saved before anything else can fail: answers cost money and time, and a generator
        # that is not deterministic would give new answers (new cache keys) on a second call.
        saved = save_produced_run(run, config.reports.dir)
        validate_run(run, golden, lambda qid: f"{saved} (question '{qid}')")
        source = str(saved)
    else:
        raise ConfigError("no run: set data.run (a file) or data.adapter (module:function)")
    return Inputs(golden, run, source, find_leaks(golden))


def save_produced_run(run: Run, reports_dir: Path) -> Path:
    """Keep an adapter-produced run under ``reports/runs/``; ``--run`` re-uses it."""
    folder = reports_dir / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = folder / f"adapter-{stamp}.jsonl"
    save_run(run, path)
    return path


class RetrievalResult(NamedTuple):
    """Per-question scores and the per-type table."""

    scores: RetrievalScores
    table: TypeTable


def retrieval_table(config: Config, golden: GoldenSet, scores: RetrievalScores) -> TypeTable:
    """Per-type retrieval table at every k (primary metric: recall@context_k)."""
    by_id = golden.by_id()
    excluded = Counter(by_id[qid].type for qid in scores.excluded)
    return per_type_table(
        retrieval_rows(golden, scores),
        config.data.question_types,
        metric_names(config.retrieval.ks),
        counts={"excluded": dict(excluded)},
    )


def evaluate_retrieval(config: Config, golden: GoldenSet, run: Run) -> RetrievalResult:
    """Score retrieval and build the per-type table."""
    scores = score_run(golden, run, config.retrieval.ks)
    return RetrievalResult(scores, retrieval_table(config, golden, scores))


def judge_table(
    config: Config,
    golden: GoldenSet,
    scores: RetrievalScores,
    verdicts: list[Verdict],
    split: str | None = None,
) -> TypeTable:
    """Judge metrics next to retrieval at context_k, per type (primary metric: faithfulness).

    Non-ok verdicts are counted per status, never averaged; ``split`` keeps one split only.
    """
    by_id = golden.by_id()
    if split is not None:
        verdicts = [v for v in verdicts if (by_id[v.question_id].split or "") == split]
    k = config.retrieval.context_k
    context_metrics = [f"recall@{k}", f"hit@{k}", "mrr", f"ndcg@{k}"]
    retrieval = retrieval_rows(golden, scores)
    retrieval = retrieval[retrieval["metric"].isin(context_metrics)]
    if split is not None:
        retrieval = retrieval[retrieval["split"] == split]
    rows = pd.concat([judge_rows(golden, verdicts), retrieval], ignore_index=True)
    return per_type_table(
        rows,
        config.data.question_types,
        [*JUDGE_METRICS, *context_metrics],
        counts=status_counts(golden, verdicts),
    )


class JudgeResult(NamedTuple):
    """The judge stage's outcome and the per-type table next to retrieval."""

    outcome: JudgeOutcome
    table: TypeTable
    backend_reason: str
    prompt: Prompt


def evaluate_judge(
    config: Config,
    inputs: Inputs,
    retrieval: RetrievalResult,
    opened: OpenedBackend,
    cache: VerdictCache,
    on_progress: Callable[[JudgeProgress], None] = lambda _: None,
) -> JudgeResult:
    """Judge every answer and build the per-type table."""
    prompt = load_prompt(config.judge.prompt)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    outcome = judge_items(
        items,
        opened.backend,
        prompt,
        cache,
        concurrency=config.judge.concurrency,
        max_attempts=config.judge.max_attempts,
        on_progress=on_progress,
    )
    verdicts = list(outcome.verdicts.values())
    table = judge_table(config, inputs.golden, retrieval.scores, verdicts)
    return JudgeResult(outcome, table, opened.reason, prompt)
