"""``judge stability``: how often the judge's verdicts change when only the order of the
chunks changes, or a prompt injection is appended to the answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from judge.config import Config
from judge.formatting import timestamp
from judge.judging.backends.base import JudgeBackend
from judge.judging.grading import JudgeProgress
from judge.judging.items import build_items
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.registry import load_task_prompt
from judge.pipeline.inputs import Inputs, _ignore, load_inputs
from judge.pipeline.session import JudgeChoice, judging_session

if TYPE_CHECKING:
    from judge.judging.types import StabilityReport


def judge_stability(
    config: Config,
    *,
    sample: int = 20,
    seed: int = 0,
    backend: JudgeBackend | str | None = None,
    run_path: Path | None = None,
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore,
    on_judging: Callable[[JudgeProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> tuple[StabilityReport, Path]:
    """Re-judge a seeded sample with its chunks reversed and shuffled and with an English and
    a Japanese prompt injection appended to the answer (``judge.judging.stability``); write
    the result as ``reports/stability/<time>.md`` and return it with that path. Everything
    judged goes through the verdict cache, so a second check costs nothing.
    """
    from judge.io.write import claim_unique, write_atomic
    from judge.judging.stability import check_stability
    from judge.report.stability import stability_markdown

    if isinstance(backend, str):
        config = config.with_overrides(judge={"backend": backend})
        backend = None
    started_at = datetime.now(UTC)
    prompt = load_task_prompt(config.judge.prompt, ANSWER)
    inputs = load_inputs(config, run_path, with_labels=False)
    on_inputs(inputs)  # the inputs' warnings: leaks, reused answers, the adapter's log
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    with judging_session(
        config, backend, items, prompt, inputs.run_source, on_judge_chosen
    ) as session:
        report = check_stability(
            items,
            session.backend,
            prompt,
            session.cache,
            sample=sample,
            seed=seed,
            type_order=config.data.question_types,
            concurrency=session.judge.in_flight,
            max_attempts=session.judge.max_attempts,
            on_progress=on_judging,
        )
    # Named by the second it started, made unique when another check started in the same
    # second (claimed exclusively: <time>-2.md, ...), never written over.
    path = claim_unique(Path(config.reports.dir) / "stability", timestamp(started_at), ".md")
    write_atomic(path, "\n".join(stability_markdown(report)) + "\n")
    return report, path
