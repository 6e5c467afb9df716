"""``judge check``: every input validated the way ``judge run`` loads it, and every problem
reported at once, before anything is judged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.errors import InputError, PromptError
from judge.inputs.adapter import AdapterProgress
from judge.judging.prompts import load_prompt
from judge.metrics import metric_names
from judge.pipeline.inputs import Inputs, _ignore, load_inputs
from judge.results.compare import GateRule
from judge.results.gate import GATE_JUDGE_METRICS, Detectable, detectable, night_family


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


def check(
    config: Config,
    run_path: Path | None = None,
    *,
    fresh_answers: bool = False,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> Checked:
    """Load the golden set, the run, the labels and the prompt; raise one ``InputError`` with
    every problem found. ``on_inputs`` sees the inputs once loaded, before that error.

    What other commands only warn about is an error here (labels of questions that are gone
    from the labels file, an adapter that failed a question): check is where it must show.
    """
    inputs = load_inputs(config, run_path, fresh_answers=fresh_answers, on_adapter=on_adapter)
    on_inputs(inputs)
    golden, run = inputs.golden, inputs.run
    problems = [problem for problem in [inputs.labels.missing_problem()] if problem]
    try:  # the prompt, exactly as `run` loads it
        load_prompt(config.judge.prompt)
    except PromptError as exc:
        problems.append(str(exc))
    problems += [
        f"{inputs.run_source}: the adapter failed for question '{q.id}': {run.meta.failed[q.id]}"
        for q in golden.questions
        if q.id in run.meta.failed
    ]
    if problems:
        raise InputError(problems)
    per_type = dict.fromkeys(config.data.question_types, 0)
    for q in golden.questions:
        per_type[q.type] = per_type.get(q.type, 0) + 1
    ordered = {t: per_type[t] for t in config.data.question_types}
    scored = dict.fromkeys(ordered, 0)
    for q in golden.questions:
        if q.relevant_chunks:
            scored[q.type] = scored.get(q.type, 0) + 1
    family = night_family(
        ordered,
        scored,
        len(metric_names(config.retrieval.ks)),
        len(GATE_JUDGE_METRICS),
    )
    return Checked(
        inputs,
        ordered,
        [q.id for q in golden.questions if q.relevant_chunks is None],
        len({c.doc for c in golden.corpus.values()}),
        len({label.labeller for label in inputs.labels.current}),
        detectable(ordered, family, GateRule.from_config(config.reports)),
    )
