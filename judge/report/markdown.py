"""``report.md``: the per-type tables, where the answers went wrong (the diagnosis per type,
then the answers below full marks, worst first), the answers that could not be produced, the
comparisons, a prompt edit's flips, the agreement with human labels and what needs review, for
people.

Every piece of data (ids, types, folder and model names, notes, quotes, errors, labellers)
enters the Markdown through ``md`` (``judge.formatting.markdown_text``), so that it renders as
the text it is: no HTML, link or table cell can come out of it.

How a verdict's evidence is described (``evidence_origin``) and how an answer is cut at its
judged sentences (``sentence_segments``) live here too: ``judge show`` and ``review.html`` say
the same thing in the same words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath
from typing import TypeVar

from judge.audit.types import AuditResult, AxisStats
from judge.formatting import FEW_ITEMS, fmt_number, fmt_share
from judge.formatting import markdown_text as md
from judge.judging.types import ContextChunk, EvidenceMatch, SentenceCheck, Verdict
from judge.record import QuestionRow, Record
from judge.report.audit_text import corrected_markdown_lines
from judge.report.chunks_text import chunk_lines
from judge.report.text_tables import render_markdown
from judge.report.tokens_text import token_lines
from judge.results.compare import SEASON, GateRule, SectionComparison, moved_list, p_value
from judge.results.diagnosis import CORRECTNESS_DIAGNOSES, DIAGNOSES, TypeDiagnosis
from judge.results.gate import detectable, gate_judge_metrics, night_family
from judge.results.review import position_bias, self_judging, unsupported

#: How many moved questions a row of report.md names (report.json has them all).
MOVED_IN_ROW = 10
#: Rows of the "Bad answers first" table; the rest are in verdicts.csv and review.html.
BAD_ANSWERS_SHOWN = 25
#: Characters of a question or an answer in that table.
EXCERPT_CHARS = 80


def _comparison_lines(comparisons: list[SectionComparison], against: str) -> list[str]:
    """Per comparison: its counts, then a table of every (type, metric) where a question
    moved (old and new mean over the pairs, the change with its 95 % interval, the pairs, the
    direction, the questions that moved); the comparisons where no question moved are counted."""
    lines = []
    for comp in comparisons:
        other = (
            against
            if comp.baseline == "baseline"
            else "the season"
            if comp.baseline == SEASON
            else md(comp.baseline or "—")
        )
        title = f"**{comp.section}** against {other}"
        if comp.baseline is None:
            lines.append(f"- {title}: {md(comp.note)}")
            continue
        rows = [c for c in comp.changes if c.moved]
        extra = f" ({md(comp.note)})" if comp.note else ""
        lines.append(
            f"- {title}: {comp.counts_text()}; {len(comp.changes) - len(rows)} of "
            f"{len(comp.changes)} with no question changed{extra}"
        )
        if not rows:
            continue
        lines += [
            "",
            "  | type | metric | pairs | old | new | change [95 % interval] | p | direction "
            "| questions that moved |",
            "  |---|---|---:|---:|---:|---|---:|---|---|",
        ]
        for c in rows:
            moved = moved_list(c.moved, MOVED_IN_ROW)
            nights = f" ({c.nights} nights)" if c.nights > 1 else ""
            p = c.p_fall if c.delta < 0 else c.p_rise
            lines.append(
                f"  | {md(c.type)} | {md(c.metric)} | {c.n} | {c.old:.3f} | {c.new:.3f}{nights} "
                f"| {c.delta:+.3f} [{c.low:+.3f}, {c.high:+.3f}] | {p_value(p)} "
                f"| {DIRECTION_WORDS[c.direction]} | {md(moved)} |"
            )
        lines.append("")
    return lines


DIRECTION_WORDS = {
    "collapsed": "**collapsed**",
    "regressed": "**regressed**",
    "improved": "improved",
    "listed": "listed (not shown)",
    "noise": "noise",
}


def _rule_line(rule: GateRule) -> str:
    return (
        "Compared question by question (docs/gate.md): a type's metric regressed when its fall "
        "is beyond the margin and shown by an exact test within the night's family-wise level; "
        "it collapsed when most of its answers fell to the floor at once (whatever the type's "
        "size), and over the season when the last nights stay below each question's median of "
        f"earlier runs ({rule.describe()}). A move beyond the margin with p ≤ 0.1 that is not "
        "shown is listed, never a regression."
    )


def _detectable_lines(report: Record) -> list[str]:
    """What this golden set can see, per type (``judge.results.gate.detectable``), as
    ``judge check`` says it."""
    per_type: dict[str, int] = {}
    scored: dict[str, int] = {}
    for row in report.questions:
        per_type[row.type] = per_type.get(row.type, 0) + 1
        labelled = row.item is not None and bool(row.item.relevant_chunks)
        scored[row.type] = scored.get(row.type, 0) + labelled
    judge_metrics = gate_judge_metrics(report.judge.metrics)
    family = night_family(per_type, scored, len(report.retrieval.metrics), len(judge_metrics))
    seen = detectable(per_type, family, report.rule)
    return ["What this golden set can see:", "", *(f"- {md(d.describe())}" for d in seen)]


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
    evidence = evidence_summary(report.verdicts)
    if evidence is not None:
        lines.append(f"- evidence: {md(evidence)}")
    lines += [f"- **warning**: {md(w)}" for w in judge_warnings(report)]
    lines += [
        "",
        "## Per question type",
        "",
        render_markdown(report.judge),
        "",
    ]
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
    lines += ["## Compared with earlier runs", "", _rule_line(report.rule), ""]
    lines += [*_detectable_lines(report), ""]
    lines += _comparison_lines(report.comparisons, "the last compatible run")
    if report.baseline:
        lines += _comparison_lines(report.baseline, "the pinned baseline")
    if report.season:
        lines += _comparison_lines(report.season, "the season")
    lines.append("")
    if report.prompt_edit is not None:
        edit = report.prompt_edit
        lines += [
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


def judge_warnings(report: Record) -> list[str]:
    """Run-level doubts about the judge: it is the generator's model (``self_judging``), or it
    cites one sentence number for most items (``position_bias``)."""
    warnings = []
    self_judged = self_judging(
        report.manifest.judge.model, report.manifest.run.meta.generator_model
    )
    if self_judged is not None:
        warnings.append(self_judged)
    bias = position_bias(report.verdicts)
    if bias is not None:
        warnings.append(bias.warning)
    return warnings


def _count_share(k: int, n: int) -> str:
    return f"{k} ({k / n:.0%})" if n and k else "0"


#: Under the judge table of a run that judged correctness: what the column measures.
CORRECTNESS_NOTE = (
    "*correctness*: the answer against the question's reference answer (0–2; a refusal of an "
    "out-of-scope question is correct), the mean over the questions the judge gave an ok "
    "correctness verdict; questions without a reference answer are not scored "
    "(*correctness_asked* counts the questions scored, *correctness_not_ok* those whose "
    "verdict failed)."
)


def diagnosis_lines(
    diagnoses: Sequence[TypeDiagnosis], with_correctness: bool = False
) -> list[str]:
    """The "Where it went wrong" section: per type, how many answers got each diagnosis
    (``judge.results.diagnosis``, the rule) with its share, and which layer to fix first.
    The diagnoses only correctness gives (``wrong per reference``) have a column when the
    run judged correctness (``with_correctness``)."""
    if not diagnoses:
        return []
    shown = [
        name
        for name in DIAGNOSES
        if name not in CORRECTNESS_DIAGNOSES
        or with_correctness
        or any(d.counts[name] for d in diagnoses)
    ]
    lines = [
        "## Where it went wrong",
        "",
        "Each answer's diagnosis (`docs/reports.md` has the rule): a retrieval miss had no "
        "relevant chunk among the chunks the generator saw; a generation failure had one.",
        "",
        "| type | n | " + " | ".join(shown) + " |",
        "|---|---:|" + "---:|" * len(shown),
    ]
    for d in diagnoses:
        cells = [_count_share(d.counts[name], d.total) for name in shown]
        lines.append(f"| {md(d.type)} | {d.total} | " + " | ".join(cells) + " |")
    total = sum(d.total for d in diagnoses)
    sums = [sum(d.counts[name] for d in diagnoses) for name in shown]
    lines.append(
        f"| **all** | **{total}** | "
        + " | ".join(f"**{_count_share(k, total)}**" for k in sums)
        + " |"
    )
    lines += ["", *[f"- {md(d.sentence)}" for d in diagnoses], ""]
    return lines


def _below_full_marks(row: QuestionRow) -> bool:
    """An ok verdict below 2/2, or an answer diagnosed as gone wrong whatever its scores."""
    verdict = row.verdict
    if verdict is None or verdict.status != "ok":
        return False
    full = verdict.faithfulness == 2 and verdict.relevance == 2
    return not full or row.diagnosis not in ("ok", "not judged")


def bad_answers(rows: Sequence[QuestionRow]) -> list[QuestionRow]:
    """The answers below full marks, worst first: lowest faithfulness plus relevance, then
    lowest faithfulness (an invented fact before an off-topic answer), then golden-set order."""
    bad = [row for row in rows if _below_full_marks(row)]

    def worst(row: QuestionRow) -> tuple[int, int]:
        verdict = row.verdict
        assert verdict is not None
        f, r = verdict.faithfulness or 0, verdict.relevance or 0
        return f + r, f

    return sorted(bad, key=worst)  # stable: golden-set order among equals


def _excerpt(text: str, most: int = EXCERPT_CHARS) -> str:
    """Text cut for a table cell, on one line (cut before escaping, so no escape is cut)."""
    text = re.sub("[ \t\r\n]+", " ", text).strip(" ")
    return md(text[:most] + "…" if len(text) > most else text) or "—"


def _evidence_status(verdict: Verdict) -> str:
    """What the evidence is, short: ``evidence_origin`` without its caveat."""
    said = evidence_origin(verdict)
    for caveat in (CITED_CAVEAT, SENTENCES_CAVEAT):
        said = said.replace(f" ({caveat})", "")
    return said or "—"


def bad_answer_lines(rows: Sequence[QuestionRow]) -> list[str]:
    """The "Bad answers first" table: every answer below full marks (``bad_answers``), up to
    ``BAD_ANSWERS_SHOWN``; scores written out (F0 R2), never shown by colour alone."""
    bad = bad_answers(rows)
    lines = ["## Bad answers first", ""]
    if not bad:
        return [*lines, "Every judged answer has full marks (F2 R2).", ""]
    lines += [
        f"{len(bad)} answers below full marks (or diagnosed as gone wrong), worst first "
        "(lowest F + R, then lowest F):",
        "",
        "| question | type | diagnosis | scores | question text | answer | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in bad[:BAD_ANSWERS_SHOWN]:
        verdict = row.verdict
        assert verdict is not None and row.item is not None
        lines.append(
            f"| {md(row.question_id)} | {md(row.type)} | {md(row.diagnosis)} "
            f"| {row_scores(row)} | {_excerpt(row.question)} "
            f"| {_excerpt(row.item.answer)} | {md(_evidence_status(verdict))} |"
        )
    left = len(bad) - BAD_ANSWERS_SHOWN
    if left > 0:
        lines += [
            "",
            f"{left} more below full marks are left out here: `verdicts.csv` has every answer "
            "with its question, answer and diagnosis, and `review.html` lists them all.",
        ]
    return [*lines, ""]


def needs_review_lines(rows: Sequence[QuestionRow]) -> list[str]:
    """One line per question to look at, with its reasons: the questions the record says need
    review (``judge.results.review``), which the console and review.html count too.

    A cited sentence's line says what it is (``evidence_origin``): it points at real text, and
    that is all it proves. Quote-mode lines are the reasons alone, which say what the quote is.
    """
    lines = []
    for row in rows:
        verdict = row.verdict
        said = list(row.triage.reasons)
        if verdict is not None and verdict.status == "ok" and verdict.mode == "cited":
            said.append(f"evidence: {evidence_origin(verdict)}")
        lines.append(f"- **{md(row.question_id)}**: {md('; '.join(said))}")
    return lines or ["Nothing flagged."]


def unsupported_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """Sentence mode: each verdict with unsupported answer sentences, and those sentences by
    number: the judge's finding (it lowers faithfulness), listed here with the sentences; the
    question is among those that need review too (``judge.results.review``)."""
    lines = []
    for verdict in verdicts:
        bad = unsupported(verdict)
        if not bad:
            continue
        total = len(verdict.sentences or ())
        lines.append(
            f"- **{md(verdict.question_id)}**: {len(bad)} of {total} answer sentences unsupported"
        )
        lines += [f"  - ✗ sentence {check.n}: {md(check.text) or '—'}" for check in bad]
    return lines


def failed_lines(report: Record) -> list[str]:
    """The section on the questions the RAG system gave no answer for (none when it answered
    every one): they have no verdict, so the tables count them in ``adapter_failed``."""
    if not report.adapter_failed:
        return []
    lines = [
        "## Answers that could not be produced",
        "",
        f"The adapter failed for {len(report.adapter_failed)} question(s): they have no answer, "
        "so no verdict, and the tables count them in `adapter_failed`.",
        "",
    ]
    lines += [
        f"- **{md(f.question_id)}** ({md(f.type)}): {md(f.error)}" for f in report.adapter_failed
    ]
    return [*lines, ""]


def _majority(stats: AxisStats | None) -> str:
    """The majority-class figure: exact agreement of always answering the most common human
    score, with that score ("73 % (always 2)"): the bar an exact-agreement figure must clear."""
    if stats is None or stats.majority_exact is None:
        return "—"
    return f"{fmt_share(stats.majority_exact)} (always {stats.majority_class})"


def audit_lines(audit: AuditResult) -> list[str]:
    """The headline agreement figures, judge next to the lexical baseline, each axis's exact
    agreement beside its majority-class line ("always 2"): a judge below it is worse than a
    constant."""
    pct, num = fmt_share, fmt_number
    lines = [
        f"{audit.judge.labelled} labels from {', '.join(md(name) for name in audit.labellers)}; "
        f"the judge gave an ok verdict on {audit.judge.n} ({pct(audit.judge.coverage)}), and "
        f"both rows are scored on those {audit.judge.n}. `judge audit` gives the intervals, "
        "confusion matrices and the disagreements. The majority columns are what always "
        "answering the most common human score would get: an exact figure below its majority "
        "is worse than that constant.",
        "",
        "| judge | both exact | both exact, all labels (non-ok wrong) | faithfulness exact "
        "| faithfulness majority | faithfulness κ | faithfulness bal. acc. | relevance exact "
        "| relevance majority | relevance κ | relevance bal. acc. |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    below: list[str] = []
    for row in (audit.judge, audit.lexical):
        f = row.per_axis["faithfulness"].get("all")
        r = row.per_axis["relevance"].get("all")
        lines.append(
            f"| {md(row.judge)} | {pct(row.both_exact)} | {pct(row.both_exact_all)} "
            f"| {pct(f.exact if f else None)} | {_majority(f)} | {num(f.kappa if f else None)} "
            f"| {pct(f.balanced_accuracy if f else None)} | {pct(r.exact if r else None)} "
            f"| {_majority(r)} | {num(r.kappa if r else None)} "
            f"| {pct(r.balanced_accuracy if r else None)} |"
        )
        for axis, stats in (("faithfulness", f), ("relevance", r)):
            if (
                stats is not None
                and stats.exact is not None
                and stats.majority_exact is not None
                and stats.exact < stats.majority_exact
            ):
                below.append(
                    f"{md(row.judge)}'s {axis} agreement ({pct(stats.exact)}) is below always "
                    f"answering {stats.majority_class} ({pct(stats.majority_exact)})"
                )
    correctness = audit.judge.per_axis.get("correctness", {}).get("all")
    if correctness is not None:
        lines += [
            "",
            f"Correctness (against the reference answer), over the {correctness.n} labels that "
            f"carry it and whose answer the judge gave an ok correctness verdict: exact "
            f"{pct(correctness.exact)} (majority {_majority(correctness)}), κ "
            f"{num(correctness.kappa)}, bal. acc. {pct(correctness.balanced_accuracy)}.",
        ]
        if (
            correctness.exact is not None
            and correctness.majority_exact is not None
            and correctness.exact < correctness.majority_exact
        ):
            below.append(
                f"{md(audit.judge.judge)}'s correctness agreement ({pct(correctness.exact)}) "
                f"is below always answering {correctness.majority_class} "
                f"({pct(correctness.majority_exact)})"
            )
    if below:
        lines += ["", f"**Below the majority class**: {'; '.join(below)}."]
    if audit.judge.n < FEW_ITEMS:
        lines += ["", f"With {audit.judge.n} labels the intervals are wide: a few points is noise."]
    return lines


def verdict_scores(verdict: Verdict) -> str:
    if verdict.status != "ok":
        return verdict.status
    return f"F{verdict.faithfulness} R{verdict.relevance}"


def row_scores(row: QuestionRow) -> str:
    """A question's scores: ``verdict_scores``, then its correctness when the run judged it
    (``F2 R2 C0``; ``C –`` for a correctness verdict that is not ok)."""
    verdict, correctness = row.verdict, row.correctness
    text = "—" if verdict is None else verdict_scores(verdict)
    if correctness is None:
        return text
    score = correctness.correctness if correctness.status == "ok" else None
    return f"{text} C{'–' if score is None else score}"


def _cell(text: str) -> str:
    """A quote shortened for a table cell (cut before escaping, so no escape is cut in half)."""
    text = re.sub("[ \t\n]+", " ", text).strip(" ")  # not split(): it would eat a raw CR
    return md(text[:60] + "…" if len(text) > 60 else text) or "—"


# --- what the evidence is, and the answer sentence by sentence ------------------------------

#: Said wherever a cited sentence is shown: the judge picked it by number from the context the
#: prompt numbered, so its text is real; nothing checks that it backs the score.
CITED_CAVEAT = "real by construction; whether it supports the verdict is the reviewer's call"
SENTENCES_CAVEAT = (
    "real by construction; whether each supports its answer sentence is the reviewer's call"
)

#: An answer sentence's verdict in words, with the sign the terminal and the page use.
SENTENCE_WORDS = {
    "supported": "✓ supported",
    "unsupported": "✗ unsupported",
    "no_claim": "· no claim",
}

Tag = TypeVar("Tag")


def evidence_origin(verdict: Verdict) -> str:
    """Which mode produced the verdict's evidence and what that proves ("" when not ok).

    A quote is text the judge wrote, searched for in the chunks afterwards: "verified" means it
    was found (exact or normalised), and only that. A cited sentence is one the judge picked by
    number, so its text is real whatever the judge meant, and finding it proves nothing about
    support: the words say so instead of calling it verified; it is named by the number the
    prompt showed it under. A lexical-baseline quote says what it is in the judge line.
    """
    if verdict.status != "ok":
        return ""
    if verdict.mode == "sentences":
        checks = verdict.sentences or ()
        if not checks:
            return "sentence by sentence: no answer sentence with a claim to check"
        cited = sum(1 for s in checks if s.evidence is not None and s.evidence.cited)
        return (
            f"sentence by sentence: {cited} of {len(checks)} answer sentences cite a context "
            f"sentence ({SENTENCES_CAVEAT})"
        )
    match = verdict.match
    if match is not None and match.cited:
        return f"{cited_name(match)} ({CITED_CAVEAT})"
    if verdict.mode == "cited":
        kind = match.kind.replace("_", " ") if match else "none"
        return "no sentence cited" if kind in ("empty", "none") else f"no sentence cited ({kind})"
    if match is None:
        return "quote (not checked)"
    if match.kind == "empty":
        return "no quote"
    if match.found:
        return f"quote (verified: {match.kind})"
    if match.kind == "partial":
        return f"quote (not verified: partly found, {match.coverage:.0%})"
    return f"quote (not verified: {match.kind.replace('_', ' ')})"


def cited_name(match: EvidenceMatch) -> str:
    """A cited context sentence by its number and chunk ("cited sentence 7 in backup/restore"),
    or by chunk and character span when the match has no number."""
    number = match.sentence
    where = f" in {match.chunk_id}" if match.chunk_id else ""
    if number is not None:
        return f"cited sentence {number}{where}"
    span = (
        f", characters {match.start}–{match.end}"
        if match.start is not None and match.end is not None
        else ""
    )
    return f"cited sentence{where}{span}"


def evidence_summary(verdicts: Sequence[Verdict]) -> str | None:
    """One line on how the run's evidence was produced, per mode (None without ok verdicts)."""
    ok = [v for v in verdicts if v.status == "ok"]
    parts = []
    quotes = [v for v in ok if v.mode == "quote"]
    if quotes:
        found = sum(1 for v in quotes if v.match is not None and v.match.found)
        parts.append(
            f"quotes written by the judge and searched for in the chunks: {found} of "
            f"{len(quotes)} verified (found exact or normalised)"
        )
    cited = [v for v in ok if v.mode == "cited"]
    if cited:
        pointing = sum(1 for v in cited if v.match is not None and v.match.cited)
        parts.append(
            f"sentences cited by number: {pointing} of {len(cited)} verdicts cite a context "
            f"sentence ({CITED_CAVEAT})"
        )
    by_sentence = [v for v in ok if v.mode == "sentences"]
    if by_sentence:
        checks = [s for v in by_sentence for s in v.sentences or ()]
        bad = sum(1 for s in checks if s.verdict == "unsupported")
        verdicts_word = "verdict" if len(by_sentence) == 1 else "verdicts"
        parts.append(
            f"sentence by sentence: {bad} of {len(checks)} answer sentences unsupported in "
            f"{len(by_sentence)} {verdicts_word}; supported ones cite a context sentence "
            f"({SENTENCES_CAVEAT})"
        )
    return "; ".join(parts) if parts else None


def unsupported_marker(check: SentenceCheck) -> str:
    """The textual mark of an unsupported sentence, readable without colour: ``[✗2 unsupported]``."""
    return f"[✗{check.n} unsupported]"


def cut_at_spans(text: str, spans: Sequence[tuple[int, int, Tag]]) -> list[tuple[str, Tag | None]]:
    """``text`` in pieces: each span's text with its tag, the text between spans untagged.

    Spans come from the judge's reply, so they are not trusted to fit: taken in order of their
    start, one that overlaps an earlier one, is empty or lies outside the text is left out (its
    text stays plain). The pieces always join back to exactly ``text``: a bad span can lose a
    marking, never a character.
    """
    pieces: list[tuple[str, Tag | None]] = []
    at = 0
    for start, end, tag in sorted(spans, key=lambda span: (span[0], span[1])):
        if start < at or end <= start or end > len(text):
            continue
        if start > at:
            pieces.append((text[at:start], None))
        pieces.append((text[start:end], tag))
        at = end
    if at < len(text):
        pieces.append((text[at:], None))
    return pieces


def answer_pieces(
    answer: str, sentences: Sequence[SentenceCheck]
) -> list[tuple[str, SentenceCheck | None]]:
    """The answer cut at its judged sentences' spans, the text between them kept."""
    return cut_at_spans(answer, [(s.start, s.end, s) for s in sentences])


def cited_pieces(
    chunk: ContextChunk, sentences: Sequence[SentenceCheck]
) -> list[tuple[str, tuple[int, ...] | None]]:
    """A chunk's text cut at the context sentences that supported answer sentences cite, each
    with the numbers of the answer sentences citing it (two may cite the same one)."""
    citing: dict[tuple[int, int], list[int]] = {}
    for check in sentences:
        match = check.evidence
        if (
            check.verdict == "supported"
            and match is not None
            and match.cited
            and match.chunk_id == chunk.chunk_id
            and match.start is not None
            and match.end is not None
        ):
            citing.setdefault((match.start, match.end), []).append(check.n)
    return cut_at_spans(chunk.text, [(a, b, tuple(ns)) for (a, b), ns in citing.items()])
