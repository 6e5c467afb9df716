"""The console summary of a judged run: tables, where the answers went wrong, comparisons,
flips, what needs review."""

from __future__ import annotations

from pathlib import Path

from judge.formatting import fmt_share, terminal_text
from judge.record.model import Record
from judge.report.chunks_text import chunk_console_line
from judge.report.markdown import judge_warnings
from judge.report.text_tables import render_text
from judge.results.diagnosis import TypeDiagnosis
from judge.results.lasting import MIN_NIGHTS

#: Flagged ok verdicts named in the console (verdicts that failed are all named); the rest are
#: in report.md and review.html.
REVIEW_LINES = 10


def _word(text: object) -> str:
    """Data (an id, a folder, a model name, an error) made safe to print, on one line."""
    return terminal_text(text, one_line=True)


def diagnosis_line(diagnoses: list[TypeDiagnosis]) -> str | None:
    """One line: per type, the diagnoses that went wrong and the layer to fix first
    ("where it went wrong: factual 2 retrieval miss, 8 generation: fix generation; ...");
    report.md has the table and the sentences. None for a run without questions."""
    if not diagnoses:
        return None
    parts = []
    for d in diagnoses:
        wrong = ", ".join(
            f"{count} {name}" for name, count in d.counts.items() if count and name != "ok"
        )
        if d.fix_first == "nothing":
            parts.append(f"{_word(d.type)} {wrong + ', ' if wrong else ''}nothing to fix")
            continue
        fix = "label chunks first" if d.fix_first == "labels" else f"fix {d.fix_first}"
        parts.append(f"{_word(d.type)} {wrong}: {fix}")
    return "where it went wrong: " + "; ".join(parts)


def cached_line(cached: int, total: int) -> str:
    """What the verdict cache already holds of a run, said before the judging starts (after a
    batch import of 2 of 10 replies, "2 of 10 already in the cache; judging the other 8"):
    how much the run will cost is known before it is paid."""
    if total and cached == total:
        return f"{cached} of {total} already in the cache; nothing to judge"
    return f"{cached} of {total} already in the cache; judging the other {total - cached}"


def console_summary(report: Record, folder: Path) -> list[str]:
    """The console summary of a judged run, from its record alone: tables, answers that could
    not be produced, comparisons, flips, the agreement with human labels, what needs review,
    where it was saved (``folder``), then the bars when the run checked them."""
    outcome_hits = sum(v.cached for v in report.verdicts)
    context_k = report.manifest.config.retrieval.context_k
    lines = [
        f"\njudged {len(report.verdicts)} answers in {report.manifest.judge_seconds:.1f} s "
        f"({outcome_hits} from the cache)",
        f"\nretrieval per type (context_k = {context_k})",
        render_text(report.retrieval),
        f"\njudge per type ({_word(report.manifest.judge.describe())})",
        *[f"warning: {_word(w)}" for w in judge_warnings(report)],
        render_text(report.judge),
    ]
    for split, table in report.splits.items():
        lines += [f"\nsplit {_word(split)}", render_text(table)]
    diagnosed = diagnosis_line(report.diagnoses)
    if diagnosed is not None:
        lines.append(f"\n{_word(diagnosed)}")
    graded = chunk_console_line(report)
    if graded is not None:
        lines.append(f"\n{_word(graded)}")
    lines += _failed_lines(report)
    lines.append("")
    lines += _comparison_lines(report)
    lines += _prompt_edit_lines(report)
    lines += _audit_lines(report)
    lines += _review_lines(report)
    lines.append(f"\nsaved {_word(folder)}")
    return [*lines, *_bar_lines(report)]


def _failed_lines(report: Record) -> list[str]:
    if not report.adapter_failed:
        return []
    return [
        f"\nthe adapter failed for {len(report.adapter_failed)} question(s) (no answer, so no "
        "verdict; counted in adapter_failed):",
        *[
            f"  {_word(f.question_id)} ({_word(f.type)}): {_word(f.error)}"
            for f in report.adapter_failed
        ],
    ]


def _comparison_lines(report: Record) -> list[str]:
    lines = []
    comparisons = [*report.comparisons, *report.baseline, *report.season]
    if any(comp.baseline is not None for comp in comparisons):
        lines.append(f"compared question by question ({report.rule.describe()}):")
    for comp in comparisons:
        against = _word(comp.baseline or "nothing")
        if comp.baseline is None:
            lines.append(f"{comp.section}: {_word(comp.note)}")
            continue
        lines.append(
            f"{comp.section} vs {against}: {comp.counts_text()}"
            + (f" ({_word(comp.note)})" if comp.note else "")
        )
        lines += [f"  {_word(c.describe())}" for c in comp.moved]
    lasting = report.gate.lasting
    if lasting:
        lines.append(f"below the baseline or the season for {MIN_NIGHTS} runs or more:")
        lines += [f"  {_word(x.describe())}" for x in lasting]
    return lines


def judge_change_note(report: Record) -> str | None:
    """What the nightly's first line adds when the judge changed since the run before (a new
    prompt version, ``judge align``'s adoption or a hand edit): a jump in scores is then read
    as the judge's, not as a regression. None when the judge is the one of the run before."""
    edit = report.prompt_edit
    if edit is None:
        return None
    prompt = Path(report.manifest.judge.prompt).name
    return (
        f"judge change: prompt {_word(prompt)} since {_word(edit.previous_folder)} "
        f"({len(edit.flips)} verdicts changed; read a jump in scores as the judge's)"
    )


def _prompt_edit_lines(report: Record) -> list[str]:
    edit = report.prompt_edit
    if edit is None:
        return []
    lines = [
        f"\nprompt edit since {_word(edit.previous_folder)}: {len(edit.flips)} verdicts changed",
        *[f"  {_word(flip.describe())}" for flip in edit.flips],
    ]
    if edit.labelled:
        before, after = fmt_share(edit.agreement_before), fmt_share(edit.agreement_after)
        lines.append(
            f"  agreement with {edit.labelled} human labels (both scores): {before} → {after}"
        )
    return lines


def _audit_lines(report: Record) -> list[str]:
    """The agreement with the human labels in two lines (the record's audit figures)."""
    audit = report.audit
    if audit is None:
        return []
    judge, lexical = audit.judge, audit.lexical
    # The lexical judge against the lexical baseline is one judge compared with itself: said so.
    beside = (
        "the lexical baseline itself (no second judge to compare with)"
        if report.manifest.judge.backend == "lexical"
        else f"lexical baseline {fmt_share(lexical.both_exact)} on the same {judge.n}"
    )
    lines = [
        f"\nagreement with {judge.n} human labels (both scores exact): judge "
        f"{fmt_share(judge.both_exact)}, {beside}; the judge gave an ok verdict on {judge.n} of "
        f"{judge.labelled} labelled ({fmt_share(judge.coverage)}); over all "
        f"{judge.labelled}, non-ok counted as wrong: judge "
        f"{fmt_share(judge.both_exact_all)} ('judge audit' for the details)"
    ]
    correctness = judge.per_axis.get("correctness", {}).get("all")
    if correctness is not None:
        lines.append(
            f"  correctness against {correctness.n} labels that carry it: exact "
            f"{fmt_share(correctness.exact)} (always {correctness.majority_class}: "
            f"{fmt_share(correctness.majority_exact)})"
        )
    return lines


def _review_lines(report: Record) -> list[str]:
    review = report.needs_review
    if not review:
        return []
    # Verdicts that failed are failures of the run: every one is named, with its error.
    # Flagged quotes can be many (a weak judge flags most): the first few, then a count.
    failed = [row for row in review if row.status != "ok"]
    flagged = [row for row in review if row.status == "ok"]
    shown = failed + flagged[:REVIEW_LINES]
    lines = [f"\n{len(review)} verdicts need a look (review.html shows each quote in its chunk):"]
    lines += [
        f"  {_word(row.question_id)}: {_word('; '.join(row.triage.reasons))}" for row in shown
    ]
    if len(shown) < len(review):
        lines.append(f"  … {len(review) - len(shown)} more (report.md and review.html)")
    return lines


def _bar_lines(report: Record) -> list[str]:
    """The bars the run checked (``judge run --bars``, the nightly with a ``[bars]`` table), from
    the gate's bar checks: how many were met, then each crossed bar's line; none when the run
    checked no bars."""
    bars = report.gate.bar_checks
    if not bars:
        return []
    crossed = [check for check in bars if not check.passed]
    return [
        f"\nbars: {len(bars) - len(crossed)} of {len(bars)} met",
        *[check.message for check in crossed],
    ]
