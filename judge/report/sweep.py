"""A sweep's outcome as its folder's files: ``sweep.md``, ``sweep.json`` and ``primary.svg``
(written by ``judge.pipeline.sweep``).

The outcome says first what to do (paste a snippet, or keep the defaults) and which guard
decided; then the evidence: the guards, the winner against the default question by question,
every setting's retrieval per type, the judge's grades beside recall for the settings it graded,
and the holdout comparison, which is shown and never used to choose.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from judge.formatting import fmt_number, markdown_text
from judge.grouped import ALL
from judge.sweep.outcome import SweepOutcome
from judge.sweep.plot import primary_svg
from judge.sweep.select import Selection

FORMAT_VERSION = 1


# --- the decision -----------------------------------------------------------------------------


def decision_lines(outcome: SweepOutcome) -> list[str]:
    """What to do, in a few lines of plain text (the console's and the report's first lines)."""
    sel = outcome.selection
    if sel.adopt:
        return [
            f"adopt {sel.winner}: every guard passed (held-out gain of {sel.primary} "
            f"{sel.held_out_gain:+.3f}, {_ratio(sel)} paired SE, stable in "
            f"{sel.stability_count}/{sel.n} folds)",
            "paste into judge.toml, and set the same values in your RAG system:",
            "[sweep.default]",
            *outcome.winner.toml().splitlines(),
        ]
    failed = next(g for g in sel.guards if not g.passed)
    return [
        f"keep the defaults ({outcome.default.label}): guard '{failed.name}' decided: {failed.detail}"
    ]


def _ratio(sel: Selection) -> str:
    ratio = sel.gain_over_se
    return "∞" if ratio == float("inf") else f"{ratio:.1f}×"


# --- markdown ----------------------------------------------------------------------------------


def sweep_markdown(outcome: SweepOutcome) -> str:
    sel, swept = outcome.selection, outcome.swept
    lines = [f"# Sweep {outcome.folder.name}", ""]
    decision = decision_lines(outcome)
    if sel.adopt:
        lines += [f"**Outcome: {markdown_text(decision[0])}**", "", decision[1], "", "```toml"]
        lines += [*decision[2:], "```", ""]
    else:
        lines += [f"**Outcome: {markdown_text(decision[0])}**", ""]
    lines += [
        f"{len(outcome.settings)} settings on {sel.n} tuning questions with relevant chunks; "
        f"primary metric {sel.primary}; chosen by leave-one-question-out (docs/sweep.md). "
        f"Adapter: `{markdown_text(swept.answer or swept.factory)}`.",
        "",
        "## Guards",
        "",
        "| guard | passed | detail |",
        "|---|---|---|",
        *[
            f"| {g.name} | {'yes' if g.passed else '**no**'} | {markdown_text(g.detail)} |"
            for g in sel.guards
        ],
        "",
        f"Best setting on all tuning questions: {markdown_text(sel.winner)}. Held-out gain "
        f"{sel.held_out_gain:+.4f}, paired SE {sel.held_out_se:.4f} ({_ratio(sel)}), n = {sel.n}; "
        f"stability {sel.stability_count}/{sel.n} folds.",
        "",
        "![primary metric per setting](primary.svg)",
        "",
    ]
    lines += _question_changes(sel)
    lines += _settings_table(outcome)
    lines += _judge_section(outcome)
    lines += _holdout_section(outcome)
    lines += _type_tables(outcome)
    lines += _failures(outcome)
    return "\n".join(lines).rstrip("\n") + "\n"


def _question_changes(sel: Selection) -> list[str]:
    if sel.winner == sel.default:
        return ["The best setting is the default: no question changes.", ""]
    lines = [
        f"## Question by question: {markdown_text(sel.winner)} against the default",
        "",
        f"{sel.primary}: {sel.better} better, {sel.worse} worse, {sel.equal} equal.",
        "",
    ]
    if sel.losses:
        lines += ["| question | change |", "|---|---|"]
        lines += [f"| {markdown_text(q.question_id)} | {q.change:+.3f} |" for q in sel.losses]
        lines.append("")
    return lines


def _settings_table(outcome: SweepOutcome) -> list[str]:
    sel, swept = outcome.selection, outcome.swept
    metrics = [sel.primary, *swept.secondary]
    judged = {key for key, split in outcome.judged if split == "tune"}
    lines = [
        "## Settings (tuning split, all types)",
        "",
        "| setting | " + " | ".join(metrics) + " | LOO picks | failed | faithfulness | relevance |",
        "|---|" + "---|" * (len(metrics) + 4),
    ]
    for s in outcome.settings:
        scores = outcome.tuned[s.key]
        name = markdown_text(s.label)
        if s == outcome.default:
            name += " (default)"
        if s.label == sel.winner and s != outcome.default:
            name = f"**{name}**"
        grades = outcome.judged[(s.key, "tune")].per_type[ALL] if s.key in judged else None
        f = fmt_number(grades["faithfulness"]) if grades else "not judged"
        r = fmt_number(grades["relevance"]) if grades else "not judged"
        lines.append(
            f"| {name} | "
            + " | ".join(f"{scores.mean(m):.3f}" for m in metrics)
            + f" | {sel.fold_picks.get(s.label, 0)} | {len(scores.failed)} | {f} | {r} |"
        )
    return [*lines, ""]


def _judge_section(outcome: SweepOutcome) -> list[str]:
    tune = [
        (s, outcome.judged[(s.key, "tune")])
        for s in outcome.settings
        if (s.key, "tune") in outcome.judged
    ]
    if not tune:
        return ["## Judge", "", "Not judged (--no-judge).", ""]
    recall = f"recall@{outcome.config.retrieval.context_k}"
    lines = [
        "## Judge beside retrieval (tuning split, per type)",
        "",
        f"Judge: {markdown_text(outcome.judge)}. Faithfulness and relevance are means over the "
        "ok verdicts (0-2); a setting that buys recall with faithfulness shows here.",
        "",
        f"| setting | type | {recall} | judged | ok | faithfulness | relevance |",
        "|---|---|---|---|---|---|---|",
    ]
    for s, grades in tune:
        table = outcome.tuned[s.key].table.frame
        for type_name, row in grades.per_type.items():
            if not row["n"]:
                continue
            value = table[recall].get(type_name) if recall in table else None
            shown = "–" if value is None or pd.isna(value) else f"{float(value):.3f}"
            lines.append(
                f"| {markdown_text(s.label)} | {markdown_text(type_name)} | {shown} | {row['n']} | "
                f"{row['ok']} | {fmt_number(row['faithfulness'])} | {fmt_number(row['relevance'])} |"
            )
    return [*lines, ""]


def _holdout_section(outcome: SweepOutcome) -> list[str]:
    if not outcome.holdout:
        return ["## Holdout", "", "The golden set has no holdout questions (split = holdout).", ""]
    sel = outcome.selection
    lines = ["## Holdout (the final comparison; never used to choose)", ""]
    default = outcome.holdout[outcome.default.key]
    if outcome.winner == outcome.default:
        lines += [
            f"The default on {len(default.question_ids)} holdout questions with relevant chunks: "
            f"{sel.primary} {default.mean(sel.primary):.3f}.",
            "",
        ]
    else:
        new = outcome.holdout[outcome.winner.key]
        lines += [
            f"{markdown_text(outcome.winner.label)} against the default, question by question "
            "(95 % bootstrap interval of the mean change):",
            "",
            "| metric | n | default | best | change | 95 % interval |",
            "|---|---|---|---|---|---|",
        ]
        for metric, change in outcome.holdout_changes.items():
            lines.append(
                f"| {metric} | {change.n} | {default.mean(metric):.3f} | {new.mean(metric):.3f} | "
                f"{change.mean:+.3f} | [{change.low:+.3f}, {change.high:+.3f}] |"
            )
        lines.append("")
    for s in (
        (outcome.default, outcome.winner)
        if outcome.winner != outcome.default
        else (outcome.default,)
    ):
        grades = outcome.judged.get((s.key, "holdout"))
        if grades is not None:
            row = grades.per_type[ALL]
            lines.append(
                f"Judge on the holdout, {markdown_text(s.label)}: {row['ok']}/{row['n']} ok, "
                f"faithfulness {fmt_number(row['faithfulness'])}, relevance "
                f"{fmt_number(row['relevance'])}."
            )
    return [*lines, ""]


def _type_tables(outcome: SweepOutcome) -> list[str]:
    lines = ["## Retrieval per type, every setting (tuning split)", ""]
    for s in outcome.settings:
        frame = outcome.tuned[s.key].table.frame
        metrics = [outcome.selection.primary, *outcome.swept.secondary]
        lines += [
            f"### {markdown_text(s.label)}",
            "",
            "| type | n | " + " | ".join(metrics) + " |",
            "|---|---|" + "---|" * len(metrics),
        ]
        for type_name, row in frame.iterrows():
            cells = ["–" if pd.isna(row[m]) else f"{float(row[m]):.3f}" for m in metrics]
            lines.append(
                f"| {markdown_text(type_name)} | {int(row['n'])} | " + " | ".join(cells) + " |"
            )
        lines.append("")
    return lines


def _failures(outcome: SweepOutcome) -> list[str]:
    rows = [
        (s, qid, error)
        for s in outcome.settings
        for qid, error in outcome.tuned[s.key].failed.items()
    ]
    if not rows:
        return []
    lines = [
        "## Questions the adapter failed (scored 0; the next sweep asks them again)",
        "",
        "| setting | question | error |",
        "|---|---|---|",
    ]
    lines += [
        f"| {markdown_text(s.label)} | {markdown_text(q)} | {markdown_text(e)} |"
        for s, q, e in rows
    ]
    return [*lines, ""]


# --- json and the folder -------------------------------------------------------------------------


def sweep_json(outcome: SweepOutcome) -> dict[str, Any]:
    sel = outcome.selection
    return {
        "format_version": FORMAT_VERSION,
        "started_at": outcome.started_at.isoformat(),
        "adapter": outcome.swept.answer or outcome.swept.factory,
        "primary": sel.primary,
        "secondary": list(outcome.swept.secondary),
        "rule": sel.rule._asdict(),
        "default": outcome.default.params,
        "outcome": {
            "adopt": sel.adopt,
            "setting": outcome.winner.params if sel.adopt else outcome.default.params,
            "decided_by": sel.decided_by,
            "snippet": "[sweep.default]\n" + outcome.winner.toml() if sel.adopt else None,
        },
        "guards": [g._asdict() for g in sel.guards],
        "winner": {
            "params": outcome.winner.params,
            "n": sel.n,
            "held_out_gain": sel.held_out_gain,
            "paired_se": sel.held_out_se,  # the key of format 1
            "stability_count": sel.stability_count,
            "fold_picks": sel.fold_picks,
            "better": sel.better,
            "worse": sel.worse,
            "equal": sel.equal,
            "losses": [q._asdict() for q in sel.losses],
            "secondary_changes": sel.secondary_changes,
        },
        "settings": [
            {
                "params": s.params,
                "label": s.label,
                "run": outcome.tuned[s.key].run_path,
                "means": {m: outcome.tuned[s.key].mean(m) for m in outcome.tuned[s.key].values},
                "failed": outcome.tuned[s.key].failed,
                "per_type": outcome.tuned[s.key].table.to_json(),
                "judge": outcome.judged[(s.key, "tune")].per_type
                if (s.key, "tune") in outcome.judged
                else None,
            }
            for s in outcome.settings
        ],
        "holdout": {
            s.label: {
                "run": scores.run_path,
                "means": {m: scores.mean(m) for m in scores.values},
                "judge": outcome.judged[(key, "holdout")].per_type
                if (key, "holdout") in outcome.judged
                else None,
            }
            for key, scores in outcome.holdout.items()
            for s in outcome.settings
            if s.key == key
        },
        "judge": outcome.judge,
    }


def sweep_files(outcome: SweepOutcome) -> dict[str, str]:
    """File name → text, for every file of a sweep folder."""
    sel = outcome.selection
    return {
        "sweep.md": sweep_markdown(outcome),
        "sweep.json": json.dumps(sweep_json(outcome), ensure_ascii=False, indent=2) + "\n",
        "primary.svg": primary_svg(sel.primary, sel.means, sel.default, sel.winner, sel.adopt),
    }
