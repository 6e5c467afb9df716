"""``report.md``: the per-type tables, where the answers went wrong (the diagnosis per type,
then the answers below full marks, worst first), the answers that could not be produced, the
comparisons, a prompt edit's flips, the agreement with human labels and what needs review, for
people.

Every piece of data (ids, types, folder and model names, notes, quotes, errors, labellers)
enters the Markdown through ``md`` (``judge.formatting.markdown_text``), so that it renders as
the text it is: no HTML, link or table cell can come out of it.

The sections are each a module's: the answers (``answers_text``), the comparisons
(``comparisons_text``), the audit (``audit_text``) and its corrected estimates
(``corrected_text``), the chunk grades (``chunks_text``), tokens (``tokens_text``); how a
verdict's evidence is described is ``evidence_text``'s, which ``judge show`` and ``review.html``
share.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePath

from judge.audit.types import Interval
from judge.formatting import fmt_share
from judge.formatting import markdown_text as md
from judge.record.model import Record
from judge.report.answers_text import (
    CORRECTNESS_NOTE,
    bad_answer_lines,
    diagnosis_lines,
    failed_lines,
    needs_review_lines,
    unsupported_lines,
    verdict_scores,
)
from judge.report.audit_text import audit_lines
from judge.report.chunks_text import chunk_lines
from judge.report.comparisons_text import (
    comparison_lines,
    detectable_lines,
    lasting_lines,
    rule_line,
)
from judge.report.corrected_text import corrected_markdown_lines
from judge.report.evidence_text import evidence_summary
from judge.report.text_tables import render_markdown
from judge.report.tokens_text import token_lines
from judge.report.values_svg import picture_lines
from judge.results.diagnosis import closed_book
from judge.results.review import position_bias, self_judging
from judge.results.weak_judge import replies, weak_judgements


def prompt_path(prompt: str) -> str:
    """The judge's prompt file as the reports name it: never the absolute path the
    configuration resolved it to (it names one machine's folders, and tells a reader of a
    shared report nothing), but its file name; a relative path, as the Python API may record
    it, is shown as it is."""
    path = PurePath(prompt)
    return path.name if path.is_absolute() else path.as_posix()


def prompt_label(prompt: str, sha256: str) -> str:
    """``prompt_path`` and the file's sha256, which says which version of it the run used."""
    return f"{prompt_path(prompt)} (sha256 {sha256[:12]}…)"


def render_report_md(report: Record) -> str:
    """report.md, from the record alone: each section a function of it."""
    lines = _head_lines(report) + picture_lines(report)  # values.svg: tonight beside the last run
    lines += ["", "## Per question type", "", render_markdown(report.judge), ""]
    if "correctness" in report.judge.metrics:
        lines += [CORRECTNESS_NOTE, ""]
    for split, table in report.splits.items():
        lines += [f"### Split: {md(split)}", "", render_markdown(table), ""]
    with_correctness = any(row.correctness is not None for row in report.questions)
    lines += diagnosis_lines(report.diagnoses, with_correctness)
    lines += bad_answer_lines(report.questions)
    lines += failed_lines(report)
    lines += token_lines(report)
    lines += ["## Retrieval at every k", "", render_markdown(report.retrieval), ""]
    lines += chunk_lines(report)
    lines += bar_lines(report)
    lines += ["## Compared with earlier runs", "", rule_line(report.rule), ""]
    lines += [*detectable_lines(report), ""]
    lines += comparison_lines(report.comparisons, "the last compatible run")
    if report.baseline:
        lines += comparison_lines(report.baseline, "the pinned baseline")
    if report.season:
        lines += comparison_lines(report.season, "the season")
    lines += lasting_lines(report.gate.lasting)
    lines.append("")
    lines += prompt_edit_lines(report)
    lines += judge_lines(report)
    if report.audit is not None:
        lines += ["## Agreement with human labels", "", *audit_lines(report.audit), ""]
        corrected = corrected_markdown_lines(report.audit)
        if corrected:
            lines += ["### Corrected estimates", "", *corrected, ""]
    lines += ["## Needs review", "", *needs_review_lines(report.needs_review)]
    unsupported_section = unsupported_lines(report.verdicts)
    if unsupported_section:
        lines += ["", "## Unsupported answer sentences", "", *unsupported_section]
    lines += ["", "Open `review.html` to see each quote inside the chunk it came from.", ""]
    return "\n".join(lines)


def _head_lines(report: Record) -> list[str]:
    """The title, the judge, the prompt, the run, the verdicts' statuses, how the evidence was
    produced and the warnings about the judge."""
    m = report.manifest
    judge = m.judge
    lines = [
        f"# Report {md(m.folder)}",
        "",
        f"- judge: **{md(judge.describe())}** ({md(judge.chosen_because)})"
        + (f"; the model: {md(judge.model_about)}" if judge.model_about else ""),
        # The fingerprints are our own hex digests; paths and names are data.
        f"- prompt: {md(prompt_label(judge.prompt, judge.prompt_sha256))} · fingerprint "
        f"`{m.fingerprints.judge}`",
        f"- run: {md(m.run.source)} · golden `{m.fingerprints.golden}` · corpus "
        f"`{m.fingerprints.corpus}`",
        "- verdicts: " + ", ".join(f"{md(k)} {v}" for k, v in m.status_counts.items()),
    ]
    lines += further_status_lines(report)
    evidence = evidence_summary(report.verdicts)
    if evidence is not None:
        lines.append(f"- evidence: {md(evidence)}")
    return lines + [f"- **warning**: {md(w)}" for w in judge_warnings(report)]


def further_status_lines(report: Record) -> list[str]:
    """The further judgements' statuses beside the answers' verdicts, one line for each that
    ran ("- chunk grades: ok 38, parse_error 2"): a malformed or failed chunk grade or
    correctness reply is counted as an answer's is, never left out of the report."""
    found: dict[str, Counter[str]] = {}
    for row in report.questions:
        for grade in row.chunk_grades or ():
            found.setdefault("chunk grades", Counter())[grade.status] += 1
        if row.correctness is not None:
            found.setdefault("correctness", Counter())[row.correctness.status] += 1
        for name, results in (row.judgements or {}).items():
            for result in results:
                found.setdefault(name, Counter())[result.status] += 1
    return [
        f"- {md(name)}: "
        + ", ".join(f"{md(k)} {v}" for k, v in sorted(counts.items(), key=_ok_first))
        for name, counts in found.items()
    ]


def _ok_first(item: tuple[str, int]) -> tuple[bool, str]:
    return item[0] != "ok", item[0]


def bar_lines(report: Record) -> list[str]:
    """The "Bars" section: how many of the per-type bars the run checked were met, and each
    crossed one's line (none when the run checked no bars: ``judge run --bars``, the nightly
    with a ``[bars]`` table)."""
    bars = report.gate.bar_checks
    if not bars:
        return []
    crossed = [check for check in bars if not check.passed]
    lines = ["## Bars", "", f"{len(bars) - len(crossed)} of {len(bars)} met.", ""]
    if crossed:
        lines += [*[f"- {md(check.message)}" for check in crossed], ""]
    return lines


def prompt_edit_lines(report: Record) -> list[str]:
    """The "Since the prompt edit" section: the verdicts that changed since the run before a
    prompt edit, and the agreement with the labels before and after (none without an edit)."""
    edit = report.prompt_edit
    if edit is None:
        return []
    lines = [
        "## Since the prompt edit",
        "",
        f"Only the judge prompt changed since {md(edit.previous_folder)}: "
        f"{len(edit.flips)} verdicts changed.",
        "",
    ]
    if edit.labelled:
        lines.append(
            f"Agreement with the human labels (both scores exact, {edit.labelled} labels): "
            f"{fmt_share(edit.agreement_before)} → {fmt_share(edit.agreement_after)}"
        )
        lines.append("")
    if edit.flips:
        lines += [
            "| question | before | after | quote before | quote after |",
            "|---|---|---|---|---|",
        ]
        for flip in edit.flips:
            lines.append(
                f"| {md(flip.question_id)} | {md(verdict_scores(flip.old))} | "
                f"{md(verdict_scores(flip.new))} | "
                f"{_cell(flip.old.evidence)} | {_cell(flip.new.evidence)} |"
            )
        lines.append("")
    return lines


def _figure(value: float | None, interval: Interval | None) -> str:
    shown = "–" if value is None else f"{value:.2f}"
    return shown if interval is None else f"{shown} [{interval.low:.2f}, {interval.high:.2f}]"


def judge_lines(report: Record) -> list[str]:
    """The "The judge's prompt and panel" section: the prompt ``judge align`` adopted with its
    held-out agreement beside the previous prompt's, and the newest ``judge panel`` of these
    answers (each member's κ with the humans and with the others, the disputed answers);
    none when the run has neither."""
    adopted, panel = report.adopted_prompt, report.panel
    if adopted is None and panel is None:
        return []
    lines = ["## The judge's prompt and panel", ""]
    if adopted is not None:
        lines += [
            f"The prompt {md(adopted.prompt)} was adopted by `judge align` "
            f"({md(adopted.variant)} exemplars; {md(adopted.report)}): held-out exact agreement, "
            f"both axes, {_figure(adopted.value, adopted.value_ci)} beside "
            f"{md(adopted.previous)}'s {_figure(adopted.previous_value, adopted.previous_ci)} "
            f"(95 % intervals; {adopted.labels} labels on {adopted.answers} answers; sign test "
            f"p = {adopted.p_value:.3f}).",
            "",
        ]
    if panel is not None:
        lines += [
            f"A panel of {len(panel.members)} judges ({', '.join(md(m) for m in panel.members)}; "
            f"{md(panel.report)}) judged {panel.answers} of these answers; quadratic κ with "
            "95 % intervals:",
            "",
            "| member | with | axis | κ | n |",
            "|---|---|---|---|---|",
            *[
                f"| {md(p.first)} | {md(p.second)} | {md(p.axis)} | "
                f"{_figure(p.kappa, p.interval)} | {p.n} |"
                for p in [*panel.with_humans, *panel.between]
            ],
            "",
            f"Disputed by the panel (2 points apart or split; in Needs review): "
            f"{len(panel.disputed)} answer(s)"
            + "".join(
                f"\n- {md(qid)}: {md('; '.join(flags))}" for qid, flags in panel.disputed.items()
            ),
            "",
        ]
    return lines


def judge_warnings(report: Record) -> list[str]:
    """Run-level doubts about the judge: it is the generator's model (``self_judging``), it
    cites one sentence number for most items (``position_bias``), or it repeats one reply or
    its prompt's format example (``weak_judge``); or answers came with no context
    (``closed_book``)."""
    warnings = []
    self_judged = self_judging(
        report.manifest.judge.model, report.manifest.run.meta.generator_model
    )
    if self_judged is not None:
        warnings.append(self_judged)
    bias = position_bias(report.verdicts)
    if bias is not None:
        warnings.append(bias.warning)
    found = replies(
        report.verdicts,
        [g for row in report.questions for g in row.chunk_grades or ()],
        [row.correctness for row in report.questions if row.correctness is not None],
    )
    warnings += [w.warning for w in weak_judgements(found, report.manifest.judge.backend)]
    empty = closed_book(row.item for row in report.questions if row.item is not None)
    if empty is not None:
        warnings.append(empty)
    return warnings


def _cell(text: str) -> str:
    """A quote shortened for a table cell (cut before escaping, so no escape is cut in half)."""
    text = re.sub("[ \t\n]+", " ", text).strip(" ")  # not split(): it would eat a raw CR
    return md(text[:60] + "…" if len(text) > 60 else text) or "—"
