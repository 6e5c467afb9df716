"""``judge align``: prompt variants with worked exemplars from the labels, measured against
the current prompt on held-out labels, and adopted only past the guard.

The wiring only: the examples, folds and exemplars are ``judge.audit.align``'s, the guard's
statistics and decision ``judge.audit.guard``'s, the judging the session's (every reply goes
through the verdict cache, so a second ``judge align`` asks nothing). Adoption writes a new
versioned prompt file beside the current one (never edits it, so the verdict cache and the
history see a new judge) and judges the run's items with it to list the flips it would cause;
``judge.prompt`` is left for the user to point at it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from pydantic import TypeAdapter, ValidationError

from judge.audit.align import (
    AdoptedPrompt,
    Example,
    choose_exemplars,
    deal_folds,
    examples_of,
    exemplar_block,
    next_version_name,
    variant_prompt,
    variant_text,
)
from judge.audit.guard import (
    GUARD_ALPHA,
    GuardDecision,
    HeldOutLabel,
    VariantComparison,
    compare,
    guard_decision,
)
from judge.axes import AXES
from judge.config import Config
from judge.errors import ConfigError, Interrupted
from judge.formatting import timestamp
from judge.judging.backends.base import JudgeBackend
from judge.judging.grading import JudgeProgress
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import Prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import by_question
from judge.judging.tasks.registry import load_task_prompt
from judge.judging.types import Verdict
from judge.pipeline.inputs import Inputs, _ignore, load_inputs
from judge.pipeline.session import JudgeChoice, Session, judging_session
from judge.record.model import plain


class AlignSettings(NamedTuple):
    """What ``judge align`` tries: ``ks`` exemplars per variant (one variant each), dealt
    into ``folds``, within ``budget_tokens`` (estimated), at the guard's ``level``."""

    ks: tuple[int, ...] = (2, 4)
    folds: int = 5
    budget_tokens: int = 2000
    seed: int = 0
    level: float = GUARD_ALPHA
    resamples: int = 2000
    """Bootstrap resamples of every interval."""
    write: bool = True
    """Write the adopted prompt file (False: say what would be adopted, write nothing)."""


DEFAULTS = AlignSettings()


class Cost(NamedTuple):
    """What a prompt cost per item it asked (cached replies left out)."""

    prompt: str
    asked: int
    prompt_tokens: float | None
    seconds: float | None


class PromptFlip(NamedTuple):
    question_id: str
    before: tuple[int | None, ...]
    after: tuple[int | None, ...]


class Aligned(NamedTuple):
    """What ``judge align`` found, and what it did."""

    current: Path
    examples: int
    labels: int
    folds: int
    comparisons: list[VariantComparison]
    decision: GuardDecision
    written: Path | None
    """The new prompt file (None: nothing adopted, or adoption not written)."""
    exemplars: list[str]
    """The adopted prompt's exemplars (question ids)."""
    flips: list[PromptFlip]
    costs: list[Cost]
    shown: dict[str, list[int]]
    """Per variant, the exemplars each fold's prompt showed (fewer than k: the budget)."""
    report: Path | None = None


def _scores(verdict: Verdict | None) -> tuple[int, ...] | None:
    if verdict is None or verdict.status != "ok":
        return None
    scores = tuple(getattr(verdict, axis) for axis in AXES)
    return None if None in scores else tuple(int(s) for s in scores)


def _rows(
    examples: Sequence[Example], current: dict[str, Verdict], variant: dict[str, Verdict]
) -> list[HeldOutLabel]:
    return [
        HeldOutLabel(
            e.question_id,
            tuple(getattr(label, axis) for axis in AXES),
            _scores(current.get(e.question_id)),
            _scores(variant.get(e.question_id)),
        )
        for e in examples
        for label in e.labels
    ]


def _cost(name: str, verdicts: Sequence[Verdict]) -> Cost:
    asked = [v for v in verdicts if not v.cached]
    tokens = [v.prompt_tokens for v in asked if v.prompt_tokens is not None]
    return Cost(
        name,
        len(asked),
        sum(tokens) / len(tokens) if tokens else None,
        sum(v.latency_s for v in asked) / len(asked) if asked else None,
    )


def _held_out(
    session: Session,
    prompt: Prompt,
    dealt: list[list[Example]],
    k: int,
    settings: AlignSettings,
    on_judging: Callable[[JudgeProgress], None],
) -> tuple[dict[str, Verdict], list[Verdict], list[int]]:
    """The verdicts of every example under the variant of ``k`` exemplars chosen from the
    other folds (cross-fitted), the verdicts in the order asked, and how many exemplars each
    fold's variant showed (fewer than ``k`` when the budget ran out)."""
    verdicts: dict[str, Verdict] = {}
    asked: list[Verdict] = []
    shown: list[int] = []
    stem = prompt.path.name.removesuffix(prompt.path.suffix)
    for fold, test in enumerate(dealt, start=1):
        pool = [e for other in dealt if other is not test for e in other]
        chosen = choose_exemplars(pool, k, settings.budget_tokens, prompt.uses_reference)
        shown.append(len(chosen))
        variant = variant_prompt(prompt, chosen, f"{stem}+k{k}-fold{fold}{prompt.path.suffix}")
        outcome = session.judge.run(ANSWER, variant, [e.item for e in test], on_judging)
        _stop_if_interrupted(outcome.interrupted)
        verdicts.update(by_question(outcome.results))
        asked.extend(outcome.results)
    return verdicts, asked, shown


def _stop_if_interrupted(interrupted: bool) -> None:
    """Ctrl-C while judging: stop before any figure or adoption (a guard on part of the labels
    is no guard); what was judged is cached, so the same command resumes."""
    if interrupted:
        raise Interrupted(
            "judge align interrupted before the guard decided: what was judged is cached; run "
            "the same command again to finish (it is not asked again)"
        )


def _examples(config: Config, inputs: Inputs) -> tuple[list[JudgeItem], list[Example]]:
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    examples = examples_of(items, inputs.labels.current)
    if len(examples) < 2:
        raise ConfigError(
            f"judge align needs labels for at least 2 answers of the run ({len(examples)} "
            f"found in {config.data.labels}: a label counts only for the exact answer it was "
            "given for); label some with 'judge audit sample --n 30' and 'judge audit import'"
        )
    return items, examples


def align(
    config: Config,
    settings: AlignSettings = DEFAULTS,
    *,
    backend: JudgeBackend | None = None,
    run_path: Path | None = None,
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore,
    on_judging: Callable[[JudgeProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> Aligned:
    """Try a variant per ``settings.ks`` against the current prompt on held-out labels, adopt
    one past the guard (``judge.audit.guard``) and write its prompt file, and write the
    account as ``reports/align/<time>.md``."""
    if config.data.labels is None:
        raise ConfigError("set data.labels in judge.toml (judge align learns from the labels)")
    started_at = datetime.now(UTC)
    prompt = load_task_prompt(config.judge.prompt, ANSWER)
    inputs = load_inputs(config, run_path)
    on_inputs(inputs)
    items, examples = _examples(config, inputs)
    dealt = deal_folds(examples, settings.folds, settings.seed)
    with judging_session(
        config, backend, items, prompt, inputs.run_source, on_judge_chosen
    ) as session:
        base = session.judge.run(ANSWER, prompt, [e.item for e in examples], on_judging)
        _stop_if_interrupted(base.interrupted)
        current = by_question(base.results)
        comparisons: list[VariantComparison] = []
        exemplars_shown: dict[str, list[int]] = {}
        costs = [_cost(f"current ({prompt.path.name})", base.results)]
        for k in settings.ks:
            name = f"k={k}"
            verdicts, asked, shown = _held_out(session, prompt, dealt, k, settings, on_judging)
            exemplars_shown[name] = shown
            comparisons.append(
                compare(name, _rows(examples, current, verdicts), settings.resamples)
            )
            costs.append(_cost(name, asked))
        decision = guard_decision(comparisons, settings.level)
        written, exemplars, flips = _adopt(session, prompt, items, examples, decision, settings)
    aligned = Aligned(
        prompt.path,
        len(examples),
        sum(len(e.labels) for e in examples),
        len(dealt),
        comparisons,
        decision,
        written,
        exemplars,
        flips,
        costs,
        exemplars_shown,
    )
    return aligned._replace(report=_write_report(config, aligned, started_at))


def _adopt(
    session: Session,
    prompt: Prompt,
    items: list[JudgeItem],
    examples: list[Example],
    decision: GuardDecision,
    settings: AlignSettings,
) -> tuple[Path | None, list[str], list[PromptFlip]]:
    """The adopted prompt written as the next version (exemplars chosen from every label),
    and the flips it causes on the run's items."""
    if decision.adopted is None:
        return None, [], []
    k = _k(decision.adopted)
    chosen = choose_exemplars(examples, k, settings.budget_tokens, prompt.uses_reference)
    text = variant_text(prompt.text, exemplar_block(chosen, prompt.uses_reference))
    ids = [e.question_id for e in chosen]
    if not settings.write:
        return None, ids, []
    from judge.io.write import claim_unique, write_atomic

    parent = prompt.path.parent
    name = next_version_name(prompt.path, sorted(p.name for p in parent.iterdir()))
    path = claim_unique(parent, name.removesuffix(prompt.path.suffix), prompt.path.suffix)
    write_atomic(path, text)
    adopted = load_task_prompt(path, ANSWER)
    old, new = session.judge.run(ANSWER, prompt, items), session.judge.run(ANSWER, adopted, items)
    _stop_if_interrupted(old.interrupted or new.interrupted)
    before, after = by_question(old.results), by_question(new.results)
    flips = [
        PromptFlip(qid, _shown(before.get(qid)), _shown(after.get(qid)))
        for qid in [item.question_id for item in items]
        if _shown(before.get(qid)) != _shown(after.get(qid))
    ]
    return path, ids, flips


def _k(comparison: VariantComparison) -> int:
    """The k of a variant, from its name (``k=2``)."""
    return int(comparison.variant.removeprefix("k="))


def _shown(verdict: Verdict | None) -> tuple[int | None, ...]:
    scores = _scores(verdict)
    return scores if scores is not None else tuple(None for _ in AXES)


def _write_report(config: Config, aligned: Aligned, started_at: datetime) -> Path:
    from judge.io.write import claim_unique, write_atomic

    path = claim_unique(Path(config.reports.dir) / "align", timestamp(started_at), ".md")
    lines = ["# judge align", "", *(f"    {line}" for line in aligned_lines(aligned))]
    write_atomic(path, "\n".join(lines) + "\n")
    adopted = _adopted(aligned, path.name)
    found = None if adopted is None else plain(adopted)
    write_atomic(path.with_suffix(".json"), json.dumps({"adopted": found}, indent=1) + "\n")
    return path


def _adopted(aligned: Aligned, report: str) -> AdoptedPrompt | None:
    """What a run judged with the written prompt shows of it (None: nothing written)."""
    chosen = aligned.decision.adopted
    if aligned.written is None or chosen is None:
        return None
    return AdoptedPrompt(
        aligned.written.name,
        aligned.current.name,
        chosen.variant,
        chosen.labels,
        chosen.items,
        chosen.value,
        chosen.value_ci,
        chosen.current,
        chosen.current_ci,
        chosen.p_value,
        report,
    )


def adopted_prompt(reports_dir: Path, prompt: str) -> AdoptedPrompt | None:
    """The newest ``judge align`` adoption that wrote the prompt file named ``prompt``, from
    ``reports/align/<time>.json``; None when no align wrote it (or its file cannot be read:
    the views then show the prompt alone)."""
    from judge.io.json import parse_json
    from judge.io.text import read_text

    folder = reports_dir / "align"
    for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        data, problem = parse_json(read_text(path))
        found = data.get("adopted") if problem is None and isinstance(data, dict) else None
        try:
            adopted = TypeAdapter(AdoptedPrompt).validate_python(found) if found else None
        except ValidationError:
            continue
        if adopted is not None and adopted.prompt == prompt:
            return adopted
    return None


def aligned_lines(aligned: Aligned) -> list[str]:
    """What ``judge align`` prints (and its report keeps)."""
    from judge.audit.guard import variant_lines

    lines = [
        f"current prompt: {aligned.current}; {aligned.labels} labels on {aligned.examples} "
        f"answers of the run, {aligned.folds} folds (a label is never both exemplar and test)"
    ]
    for comparison in aligned.comparisons:
        shown = aligned.shown.get(comparison.variant, [])
        lines.append(
            f"{comparison.variant}: exemplars shown per fold: {', '.join(map(str, shown))}"
            + (
                " (the token budget allowed no more)"
                if shown and min(shown) < _k(comparison)
                else ""
            )
        )
        lines += variant_lines(comparison)
    for cost in aligned.costs:
        tokens = "n/a" if cost.prompt_tokens is None else f"{cost.prompt_tokens:.0f}"
        seconds = "n/a" if cost.seconds is None else f"{cost.seconds:.2f}"
        lines.append(
            f"cost of {cost.prompt}: {cost.asked} item(s) asked, {tokens} prompt tokens and "
            f"{seconds} s per item (cached replies left out)"
        )
    lines.append(aligned.decision.guard)
    if aligned.written is not None:
        lines.append(
            f"wrote {aligned.written} (exemplars: {', '.join(aligned.exemplars)}); set "
            f"judge.prompt to it to use it; {aligned.current} is unchanged"
        )
        lines.append(f"flips the adopted prompt causes on the run's answers: {len(aligned.flips)}")
        lines += [
            f"  {flip.question_id}: {_pair(flip.before)} → {_pair(flip.after)}"
            for flip in aligned.flips
        ]
    elif aligned.decision.adopted is not None:
        lines.append(f"not written (--dry-run); exemplars: {', '.join(aligned.exemplars)}")
    return lines


def _pair(scores: tuple[int | None, ...]) -> str:
    return "/".join("–" if s is None else str(s) for s in scores)
