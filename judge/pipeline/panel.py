"""``judge panel``: the run's answers judged by every member of ``[judge.panel]``, voted, and
each member measured against the human labels and against the others.

The wiring only: each member is the configured backend of that name (its own table's
settings), opened, announced and closed in turn through ``judging_session``, so its verdicts go
through the verdict cache under its own fingerprint (a second ``judge panel`` asks nothing).
A member that cannot be opened at all (no server) fails on every answer: the others vote, and
every vote says how many voted. The vote is ``judge.judging.panel``'s; the statistics
``judge.audit.panel_agreement``'s. The account is written as ``reports/panel/<time>.md``, and
the disputed answers as ``reports/panel/<time>.json``, which the next ``judge audit sample``
reads to take them first (``disputed_answers``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import TypeAdapter, ValidationError

from judge.audit.panel_agreement import (
    MemberAgreement,
    PairKappa,
    PanelSummary,
    agreement_lines,
    members_agreement,
    members_kappa,
    with_humans,
)
from judge.config import Config
from judge.errors import BackendUnavailable, ConfigError
from judge.formatting import timestamp
from judge.hashing import text_sha256
from judge.judging.grading import JudgeProgress
from judge.judging.items import build_items
from judge.judging.panel import PanelVote, panel_votes
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import by_question
from judge.judging.tasks.registry import load_task_prompt
from judge.judging.types import Verdict
from judge.pipeline.inputs import Inputs, _ignore, load_inputs
from judge.pipeline.session import JudgeChoice, judging_session
from judge.record.model import plain


class Paneled(NamedTuple):
    """What ``judge panel`` found."""

    members: tuple[str, ...]
    judges: dict[str, str]
    """Each member's judge, described (or why it could not be opened)."""
    votes: list[PanelVote]
    agreement: list[MemberAgreement]
    kappas: list[PairKappa]
    report: Path | None = None
    disputed: Path | None = None


def panel(
    config: Config,
    *,
    run_path: Path | None = None,
    on_judge_chosen: Callable[[JudgeChoice], None] = _ignore,
    on_judging: Callable[[JudgeProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> Paneled:
    """Judge the run with every member, vote, measure, and write the account."""
    settings = config.judge.panel
    if settings is None:
        raise ConfigError(
            'no panel: add [judge.panel] with members = ["ollama", "lexical"] (two or more '
            "backends) to judge.toml"
        )
    started_at = datetime.now(UTC)
    prompt = load_task_prompt(config.judge.prompt, ANSWER)
    inputs = load_inputs(config, run_path)
    on_inputs(inputs)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    verdicts: dict[str, dict[str, Verdict]] = {}
    judges: dict[str, str] = {}
    for member in settings.members:
        one = config.with_overrides(judge={"backend": member})
        try:
            with judging_session(one, None, items, prompt, inputs.run_source, on_judge_chosen) as s:
                judges[member] = s.backend.identity.describe()
                verdicts[member] = by_question(s.answers(items, on_judging).results)
        except BackendUnavailable as exc:
            judges[member] = f"not available: {exc}"
            verdicts[member] = {}
    votes = panel_votes(verdicts, [item.question_id for item in items])
    paneled = Paneled(
        settings.members,
        judges,
        votes,
        members_agreement(items, inputs.labels.current, verdicts, votes),
        members_kappa(votes),
    )
    answers = {item.question_id: text_sha256(item.record.answer) for item in items}
    return _write(config, paneled, answers, started_at)


def _write(
    config: Config, paneled: Paneled, answers: dict[str, str], started_at: datetime
) -> Paneled:
    from judge.io.write import claim_unique, write_atomic

    folder = Path(config.reports.dir) / "panel"
    report = claim_unique(folder, timestamp(started_at), ".md")
    lines = ["# judge panel", "", *(f"    {line}" for line in panel_lines(paneled))]
    write_atomic(report, "\n".join(lines) + "\n")
    disputed = report.with_suffix(".json")
    records = [
        {"question_id": v.question_id, "answer_sha256": answers[v.question_id], "flags": v.flags}
        for v in paneled.votes
        if v.disputed
    ]
    data = {
        "disputed": records,
        "members": list(paneled.members),
        "answers": answers,
        "with_humans": plain(with_humans(paneled.agreement)),
        "between": plain(paneled.kappas),
    }
    write_atomic(disputed, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return paneled._replace(report=report, disputed=disputed)


def _newest(reports_dir: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest ``reports/panel/<time>.json`` and its content (None: none, or unreadable)."""
    from judge.io.json import parse_json
    from judge.io.text import read_text

    folder = reports_dir / "panel"
    newest = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not newest:
        return None
    data, problem = parse_json(read_text(newest[-1]))
    if problem is not None or not isinstance(data, dict):
        return None
    return newest[-1], data


def panel_summary(reports_dir: Path, answers: dict[str, str]) -> PanelSummary | None:
    """The newest ``judge panel``, as a run with these answers (question id → answer hash)
    shows it: None when no panel ran, it judged none of these exact answers, or its file
    cannot be read (the views then show the run's judge alone)."""
    found = _newest(reports_dir)
    if found is None:
        return None
    path, data = found
    judged = data.get("answers")
    if not isinstance(judged, dict):
        return None
    same = {qid for qid, sha in answers.items() if judged.get(qid) == sha}
    if not same:
        return None
    kappas = TypeAdapter(list[PairKappa])
    try:
        return PanelSummary(
            tuple(str(m) for m in data.get("members", [])),
            kappas.validate_python(data.get("with_humans", [])),
            kappas.validate_python(data.get("between", [])),
            {
                str(r["question_id"]): tuple(str(f) for f in r.get("flags", []))
                for r in data.get("disputed", [])
                if isinstance(r, dict) and r.get("question_id") in same
            },
            len(same),
            path.with_suffix(".md").name,
        )
    except (ValidationError, TypeError, KeyError, AttributeError):
        return None


def disputed_answers(reports_dir: Path) -> set[tuple[str, str]]:
    """(question id, answer hash) of the answers the newest ``judge panel`` disputed; none
    when no panel ran (or its file cannot be read: the sample is then drawn as before)."""
    found = _newest(reports_dir)
    if found is None:
        return set()
    _, data = found
    return {
        (str(r["question_id"]), str(r["answer_sha256"]))
        for r in data.get("disputed", [])
        if isinstance(r, dict) and "question_id" in r and "answer_sha256" in r
    }


#: Answers listed per list (partial votes, disputed); the rest are counted.
LISTED = 20


def _listed(lines: list[str]) -> list[str]:
    if len(lines) <= LISTED:
        return lines
    return [*lines[:LISTED], f"  … and {len(lines) - LISTED} more"]


def panel_lines(paneled: Paneled) -> list[str]:
    """What ``judge panel`` prints (and its report keeps)."""
    lines = [f"panel: {len(paneled.members)} members; the vote per axis is the median, a tie "]
    lines[0] += "to the lower score"
    lines += [f"  {name}: {paneled.judges.get(name, '')}" for name in paneled.members]
    full = sum(v.full for v in paneled.votes)
    lines.append(f"votes: {len(paneled.votes)} answers, {full} by the full panel")
    partial = [v for v in paneled.votes if not v.full]
    lines += _listed(
        [
            f"  {v.question_id}: {'/'.join(map(str, v.scores)) if v.scores else '–'} "
            f"({v.voters} of {v.members} voted)"
            for v in partial
        ]
    )
    lines += agreement_lines(paneled.agreement, paneled.kappas)
    disputed = [v for v in paneled.votes if v.disputed]
    lines.append(f"disputed (2 points apart or split): {len(disputed)} answer(s)")
    lines += _listed(
        [
            f"  {vote.question_id}: {'; '.join(vote.flags)} ("
            + ", ".join(
                f"{name} {'/'.join(map(str, s)) if s else 'failed'}"
                for name, s in vote.by_member.items()
            )
            + ")"
            for vote in disputed
        ]
    )
    return lines
