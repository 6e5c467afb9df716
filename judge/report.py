"""A judged run's report folder, written atomically, and the history and gate around it.

Folder ``reports/<UTC time>-<judge fingerprint>/``:

- ``manifest.json``  format version first; configuration, fingerprints, versions, timings
- ``report.md``      per-type tables, the comparison with earlier runs, items needing review
- ``report.json``    the same, for machines
- ``verdicts.csv``   one row per question: every metric, score, quote, match kind, span
- ``verdicts.jsonl`` the verdicts as data; ``items.jsonl`` what the judge saw
- ``run.jsonl``      the run that was judged
- ``review.html``    the reviewers' page (``judge.review_page``)

The folder is assembled under a temporary name and renamed into place when complete, so a crash
never leaves a half-written folder that looks finished. Then one line is appended to
``reports/history.jsonl`` and ``reports/latest`` names the folder.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import shutil
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from judge.aggregate import JUDGE_METRICS, NOT_OK, TypeTable
from judge.audit import (
    AuditResult,
    agreement,
    audit_items,
    fmt_number,
    fmt_share,
    judge_scores,
    spreadsheet_text,
)
from judge.audit import as_json as audit_json
from judge.config import Config
from judge.errors import EXIT_REGRESSION
from judge.evidence import VERIFIER_VERSION
from judge.golden import HumanLabel
from judge.hashing import tagged_hash, text_sha256
from judge.history import (
    HistoryEntry,
    SectionComparison,
    TypeMetrics,
    compare_with_baseline,
    compare_with_history,
    prompt_only_predecessor,
    read_baseline,
    read_history,
)
from judge.jsonl import write_atomic, write_jsonl
from judge.pipeline import Inputs, JudgeResult, RetrievalResult, judge_table
from judge.records import Flip, ItemRecord, changed_verdicts, read_verdicts
from judge.render import render_markdown, render_text
from judge.runs import Run, context_for, save_run
from judge.verdict import STATUSES, Verdict, review_reasons

FORMAT_VERSION = 1
PACKAGES = ("judge", "httpx", "ollama", "pydantic", "tenacity", "pandas", "llama_cpp_python")


class PromptEdit(NamedTuple):
    """What a prompt edit changed, against the run just before it."""

    previous_folder: str
    flips: list[Flip]
    agreement_before: float | None
    agreement_after: float | None
    labelled: int


# --- helpers ---------------------------------------------------------------------------------


def _git(cwd: Path) -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def run_hash(run: Run) -> str:
    """Hash of the rankings (with any text the run supplied) and answers, not of metadata:
    equal means the same RAG output."""
    return tagged_hash(
        {
            qid: [[[c.chunk_id, c.text] for c in r.retrieved], r.answer]
            for qid, r in run.records.items()
        },
        16,
    )


def retrieval_fingerprint(config: Config) -> str:
    return tagged_hash({"context_k": config.retrieval.context_k, "ks": config.retrieval.ks}, 16)


def _retrieval_metrics(table: TypeTable) -> TypeMetrics:
    """Per type: every metric, and ``n`` (questions scored)."""
    return {
        row["type"]: {m: row[m] for m in table.metrics} | {"n": float(row["n"])}
        for row in table.to_json()["rows"]
    }


def _judge_metrics(table: TypeTable) -> TypeMetrics:
    """Per type: the judge metrics and ``ok_share``, the share of items with an ok verdict.

    Retrieval at context_k sits in the judge table for reading but is compared (once) in the
    retrieval section. ``ok_share`` makes failing verdicts count: they are left out of the
    means, so without it a judge that fails on hard items would look better.
    """
    out: TypeMetrics = {}
    for row in table.to_json()["rows"]:
        judged = row["n"] + sum(row[status] for status in NOT_OK)
        out[row["type"]] = {m: row[m] for m in JUDGE_METRICS} | {
            "ok_share": row["n"] / judged if judged else None
        }
    return out


def labels_by_answer(labels: list[HumanLabel]) -> dict[tuple[str, str], list[HumanLabel]]:
    grouped: dict[tuple[str, str], list[HumanLabel]] = {}
    for label in labels:
        grouped.setdefault((label.question_id, label.answer_sha256), []).append(label)
    return grouped


# --- building the report ---------------------------------------------------------------------


class Report(NamedTuple):
    """Everything the report files are rendered from."""

    manifest: dict[str, Any]
    entry: HistoryEntry
    retrieval: TypeTable
    judge: TypeTable
    splits: dict[str, TypeTable]
    """Judge tables per split (tune, holdout) when the golden set has splits."""
    comparisons: list[SectionComparison]
    baseline: list[SectionComparison]
    prompt_edit: PromptEdit | None
    audit: AuditResult | None
    """Agreement with the human labels, when there are labels for these answers."""
    verdicts: list[Verdict]
    items: list[ItemRecord]

    @property
    def regressions(self) -> list[Any]:
        return [c for comp in [*self.comparisons, *self.baseline] for c in comp.regressions]


def build_report(
    config: Config,
    inputs: Inputs,
    retrieval: RetrievalResult,
    judged: JudgeResult,
    labels: list[HumanLabel],
    started_at: datetime,
    folder_name: str,
    finished_at: datetime | None = None,
) -> Report:
    """Assemble the report of one judged run (reads history and baseline, writes nothing)."""
    golden, outcome = inputs.golden, judged.outcome
    verdicts = [outcome.verdicts[q.id] for q in golden.questions if q.id in outcome.verdicts]
    counts: dict[str, int] = {
        status: sum(v.status == status for v in verdicts) for status in STATUSES
    }
    identity = outcome.identity
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "folder": folder_name,
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": (finished_at or datetime.now(UTC)).isoformat(timespec="seconds"),
        "judge": {
            "backend": identity.kind,
            "model": identity.model,
            "digest": identity.digest,
            "server_version": identity.server_version,
            "endpoint": identity.endpoint,
            "chosen_because": judged.backend_reason,
            "prompt": str(judged.prompt.path),
            "prompt_sha256": judged.prompt.sha256,
            "evidence_verifier_version": VERIFIER_VERSION,
        },
        "fingerprints": {
            "judge": outcome.fingerprint.value,
            "judge_parts": outcome.fingerprint.parts,
            "retrieval": retrieval_fingerprint(config),
            "golden": golden.questions_hash,
            "corpus": golden.corpus_hash,
            "run": run_hash(inputs.run),
        },
        "run": {"source": inputs.run_source, "meta": inputs.run.meta.model_dump(mode="json")},
        "config": config.model_dump(mode="json"),
        "git": _git(config.source.parent if config.source else Path.cwd()),
        "versions": _versions(),
        "status_counts": counts,
        "judge_seconds": round(outcome.elapsed_s, 3),
    }
    splits = sorted({q.split for q in golden.questions if q.split})
    split_tables: dict[str, TypeTable] = {
        split: judge_table(config, golden, retrieval.scores, verdicts, split) for split in splits
    }
    entry = HistoryEntry(
        folder=folder_name,
        started_at=manifest["started_at"],
        golden_hash=golden.questions_hash,
        corpus_hash=golden.corpus_hash,
        run_hash=manifest["fingerprints"]["run"],
        retrieval_fingerprint=manifest["fingerprints"]["retrieval"],
        judge_fingerprint=outcome.fingerprint.value,
        judge_parts=outcome.fingerprint.parts,
        metrics={
            "retrieval": _retrieval_metrics(retrieval.table),
            "judge": _judge_metrics(judged.table),
        },
        status_counts=counts,
    )
    reports_dir = config.reports.dir
    history = read_history(reports_dir / "history.jsonl")
    # Only runs before this one count (a re-rendered report must not compare with later runs).
    names = [e.folder for e in history]
    if folder_name in names:
        history = history[: names.index(folder_name)]
    comparisons = compare_with_history(entry, history, config.reports.regression_threshold)
    pinned = read_baseline(config.reports.baseline)
    baseline = (
        compare_with_baseline(entry, pinned, config.reports.regression_threshold) if pinned else []
    )
    items = _item_records(config, inputs, retrieval, labels, outcome.verdicts)
    item_map = {item.question_id: item for item in items}
    audit = audit_items(folder_name, item_map, outcome.verdicts, labels) if labels else None
    if audit is not None and audit.judge.n == 0:
        audit = None  # labels exist, but none for these exact answers
    prompt_edit = None
    previous = prompt_only_predecessor(entry, history)
    if previous is not None and (reports_dir / previous.folder / "verdicts.jsonl").exists():
        old = read_verdicts(reports_dir / previous.folder)
        flips = changed_verdicts(old, {v.question_id: v for v in verdicts})
        # Same run content, so the same items: only the verdicts differ.
        before = agreement("before", item_map, labels, judge_scores(old))
        after = agreement("after", item_map, labels, judge_scores(outcome.verdicts))
        prompt_edit = PromptEdit(
            previous.folder, flips, before.both_exact, after.both_exact, after.n
        )
    return Report(
        manifest,
        entry,
        retrieval.table,
        judged.table,
        split_tables,
        comparisons,
        baseline,
        prompt_edit,
        audit,
        verdicts,
        items,
    )


def _item_records(
    config: Config,
    inputs: Inputs,
    retrieval: RetrievalResult,
    labels: list[HumanLabel],
    verdicts: dict[str, Verdict],
) -> list[ItemRecord]:
    """What the judge saw for each judged question, with its retrieval scores and labels."""
    grouped = labels_by_answer(labels)
    by_question = {
        qid: {m: values[i] for m, values in retrieval.scores.values.items()}
        for i, qid in enumerate(retrieval.scores.question_ids)
    }
    items = []
    for q in inputs.golden.questions:
        record = inputs.run.records.get(q.id)
        if record is None or q.id not in verdicts:
            continue
        context = context_for(record, inputs.golden.corpus, config.retrieval.context_k)
        items.append(
            ItemRecord(
                question_id=q.id,
                type=q.type,
                split=q.split or "",
                question=q.question,
                answer=record.answer,
                context=[{"rank": c.rank, "chunk_id": c.chunk_id, "text": c.text} for c in context],
                relevant_chunks=list(q.relevant_chunks),
                retrieval=by_question.get(q.id, {}),
                labels=[
                    lab.model_dump(mode="json", exclude={"answer_sha256"})
                    for lab in grouped.get((q.id, text_sha256(record.answer)), [])
                ],
            )
        )
    return items


# --- rendering -------------------------------------------------------------------------------


def _comparison_lines(comparisons: list[SectionComparison], against: str) -> list[str]:
    lines = []
    for comp in comparisons:
        title = f"**{comp.section}** against {against if comp.baseline == 'baseline' else comp.baseline or '—'}"
        if comp.baseline is None:
            lines.append(f"- {title}: {comp.note}")
            continue
        moved = [c for c in comp.changes if c.direction != "noise"]
        noise = len(comp.changes) - len(moved)
        extra = f" ({comp.note})" if comp.note else ""
        lines.append(
            f"- {title}: {len(moved)} moves beyond the threshold, {noise} within noise{extra}"
        )
        for c in sorted(moved, key=lambda c: (c.direction != "regressed", c.type, c.metric)):
            lines.append(f"  - {c.direction}: {c.describe()}")
    return lines


def render_report_md(report: Report) -> str:
    m = report.manifest
    judge = m["judge"]
    lines = [
        f"# Report {m['folder']}",
        "",
        f"- judge: **{judge['backend']} · {judge['model']}** ({judge['chosen_because']})",
        f"- prompt: `{judge['prompt']}` · fingerprint `{m['fingerprints']['judge']}`",
        f"- run: `{m['run']['source']}` · golden `{m['fingerprints']['golden']}` · corpus "
        f"`{m['fingerprints']['corpus']}`",
        "- verdicts: " + ", ".join(f"{k} {v}" for k, v in m["status_counts"].items()),
        "",
        "## Per question type",
        "",
        render_markdown(report.judge),
        "",
    ]
    for split, table in report.splits.items():
        lines += [f"### Split: {split}", "", render_markdown(table), ""]
    lines += ["## Retrieval at every k", "", render_markdown(report.retrieval), ""]
    lines += ["## Compared with earlier runs", ""]
    lines += _comparison_lines(report.comparisons, "the last compatible run")
    if report.baseline:
        lines += _comparison_lines(report.baseline, "the pinned baseline")
    lines.append("")
    if report.prompt_edit is not None:
        edit = report.prompt_edit
        lines += [
            "## Since the prompt edit",
            "",
            f"Only the judge prompt changed since `{edit.previous_folder}`: "
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
                    f"| {flip.question_id} | {_scores(flip.old)} | {_scores(flip.new)} | "
                    f"{_cell(flip.old.evidence)} | {_cell(flip.new.evidence)} |"
                )
            lines.append("")
    if report.audit is not None:
        lines += ["## Agreement with human labels", "", *audit_lines(report.audit), ""]
    review = [(v, review_reasons(v)) for v in report.verdicts if review_reasons(v)]
    lines += ["## Needs review", ""]
    if not review:
        lines.append("Nothing flagged.")
    for verdict, reasons in review:
        lines.append(f"- **{verdict.question_id}**: {'; '.join(reasons)}")
    lines += ["", "Open `review.html` to see each quote inside the chunk it came from.", ""]
    return "\n".join(lines)


def audit_lines(audit: AuditResult) -> list[str]:
    """The headline agreement figures, judge next to the lexical baseline."""
    pct, num = fmt_share, fmt_number
    lines = [
        f"{audit.judge.n} labels from {', '.join(audit.labellers)}; `judge audit` gives the "
        "intervals, confusion matrices and the disagreements.",
        "",
        "| judge | both exact | faithfulness exact | faithfulness κ | relevance exact | relevance κ |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in (audit.judge, audit.lexical):
        f = row.per_axis["faithfulness"].get("all")
        r = row.per_axis["relevance"].get("all")
        lines.append(
            f"| {row.judge} | {pct(row.both_exact)} | {pct(f.exact if f else None)} | "
            f"{num(f.kappa if f else None)} | {pct(r.exact if r else None)} | {num(r.kappa if r else None)} |"
        )
    if audit.judge.n < 50:
        lines += ["", f"With {audit.judge.n} labels the intervals are wide: a few points is noise."]
    return lines


def _scores(verdict: Verdict) -> str:
    if verdict.status != "ok":
        return verdict.status
    return f"F{verdict.faithfulness} R{verdict.relevance}"


def _cell(text: str) -> str:
    text = " ".join(text.split())
    return (text[:60] + "…" if len(text) > 60 else text).replace("|", "\\|") or "—"


def report_json(report: Report) -> dict[str, Any]:
    def comparison(comp: SectionComparison) -> dict[str, Any]:
        return {
            "section": comp.section,
            "against": comp.baseline,
            "note": comp.note,
            "changes": [c._asdict() for c in comp.changes],
        }

    edit = report.prompt_edit
    return {
        "format_version": FORMAT_VERSION,
        "manifest": report.manifest,
        "tables": {
            "judge": report.judge.to_json(),
            "retrieval": report.retrieval.to_json(),
            "splits": {s: t.to_json() for s, t in report.splits.items()},
        },
        "comparisons": [comparison(c) for c in report.comparisons],
        "baseline": [comparison(c) for c in report.baseline],
        "prompt_edit": None
        if edit is None
        else {
            "previous": edit.previous_folder,
            "agreement_before": edit.agreement_before,
            "agreement_after": edit.agreement_after,
            "labelled": edit.labelled,
            "flips": [
                {
                    "question_id": f.question_id,
                    "before": _scores(f.old),
                    "after": _scores(f.new),
                    "quote_before": f.old.evidence,
                    "quote_after": f.new.evidence,
                }
                for f in edit.flips
            ],
        },
        "agreement": None if report.audit is None else audit_json(report.audit),
        "needs_review": {
            v.question_id: review_reasons(v) for v in report.verdicts if review_reasons(v)
        },
        "regressions": len(report.regressions),
    }


def write_verdicts_csv(path: Path, report: Report) -> None:
    """One row per question, UTF-8 with a BOM so that spreadsheets read the Japanese right."""
    items = {item.question_id: item for item in report.items}
    metrics = sorted({m for item in report.items for m in item.retrieval})
    header = [
        "question_id",
        "type",
        "split",
        "status",
        "faithfulness",
        "relevance",
        "evidence",
        "match_kind",
        "chunk_id",
        "span_start",
        "span_end",
        "coverage",
        "needs_review",
        "note",
        "error",
        *metrics,
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "cached",
    ]
    handle = io.StringIO()
    writer = csv.writer(handle)
    writer.writerow(header)
    for v in report.verdicts:
        item = items.get(v.question_id)
        match = v.match
        writer.writerow(
            [
                v.question_id,
                item.type if item else "",
                item.split if item else "",
                v.status,
                v.faithfulness,
                v.relevance,
                spreadsheet_text(v.evidence),
                match.kind if match else "",
                match.chunk_id if match else "",
                match.start if match else "",
                match.end if match else "",
                match.coverage if match else "",
                "; ".join(review_reasons(v)),
                spreadsheet_text(v.note),
                v.error or "",
                *[item.retrieval.get(m, "") if item else "" for m in metrics],
                v.prompt_tokens,
                v.completion_tokens,
                round(v.latency_s, 3),
                v.cached,
            ]
        )
    write_atomic(path, "\ufeff" + handle.getvalue())


def new_folder_name(config: Config, fingerprint: str, now: datetime) -> str:
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    name = f"{stamp}-{fingerprint.split(':')[1][:8]}"
    candidate, suffix = name, 2
    while (config.reports.dir / candidate).exists():  # two runs in one second, same judge
        candidate, suffix = f"{name}-{suffix}", suffix + 1
    return candidate


def write_files(folder: Path, report: Report, run: Run) -> None:
    """Every file of a report folder (each written whole: write, then rename)."""
    from judge.review_page import render_review_page

    def text(name: str, content: str) -> None:
        write_atomic(folder / name, content)

    def as_json(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, indent=2) + "\n"

    text("manifest.json", as_json(report.manifest))
    text("report.md", render_report_md(report))
    text("report.json", as_json(report_json(report)))
    write_verdicts_csv(folder / "verdicts.csv", report)
    write_jsonl(folder / "verdicts.jsonl", report.verdicts)
    write_jsonl(folder / "items.jsonl", report.items)
    save_run(run, folder / "run.jsonl")
    text("review.html", render_review_page(report))


def write_report(config: Config, report: Report, run: Run) -> Path:
    """Write the folder atomically, then the history line and the ``latest`` pointer."""
    from judge.history import append_history

    reports_dir = config.reports.dir
    reports_dir.mkdir(parents=True, exist_ok=True)
    final: Path = reports_dir / str(report.manifest["folder"])
    tmp = reports_dir / f".{final.name}.{os.getpid()}.partial"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    write_files(tmp, report, run)
    os.replace(tmp, final)
    append_history(reports_dir / "history.jsonl", report.entry)
    write_atomic(reports_dir / "latest", final.name + "\n")
    return final


# --- the console summary and the gate ------------------------------------------------------


def console_summary(report: Report, config: Config, folder: Path) -> list[str]:
    """The console summary of a judged run: tables, comparisons, flips, what needs review."""
    outcome_hits = sum(v.cached for v in report.verdicts)
    lines = [
        f"\njudged {len(report.verdicts)} answers in {report.manifest['judge_seconds']:.1f} s "
        f"({outcome_hits} from the cache)",
        f"\nretrieval per type (context_k = {config.retrieval.context_k})",
        render_text(report.retrieval),
        f"\njudge per type ({report.manifest['judge']['backend']} · {report.manifest['judge']['model']})",
        render_text(report.judge),
    ]
    for split, table in report.splits.items():
        lines += [f"\nsplit {split}", render_text(table)]
    lines.append("")
    for comp in [*report.comparisons, *report.baseline]:
        against = comp.baseline or "nothing"
        if comp.baseline is None:
            lines.append(f"{comp.section}: {comp.note}")
            continue
        moved = [c for c in comp.changes if c.direction != "noise"]
        lines.append(
            f"{comp.section} vs {against}: {len(comp.regressions)} regressed, "
            f"{len(moved) - len(comp.regressions)} improved, "
            f"{len(comp.changes) - len(moved)} within ±{config.reports.regression_threshold:g}"
            + (f" ({comp.note})" if comp.note else "")
        )
        lines += [f"  {c.describe()}" for c in comp.regressions]
    edit = report.prompt_edit
    if edit is not None:
        lines.append(
            f"\nprompt edit since {edit.previous_folder}: {len(edit.flips)} verdicts changed"
        )
        lines += [f"  {flip.describe()}" for flip in edit.flips]
        if edit.labelled:
            before, after = fmt_share(edit.agreement_before), fmt_share(edit.agreement_after)
            lines.append(
                f"  agreement with {edit.labelled} human labels (both scores): {before} → {after}"
            )
    if report.audit is not None:
        audit = report.audit
        lines.append(
            f"\nagreement with {audit.judge.n} human labels (both scores exact): judge "
            f"{fmt_share(audit.judge.both_exact)}, lexical baseline {fmt_share(audit.lexical.both_exact)}"
            " ('judge audit' for the details)"
        )
    review = [(v.question_id, review_reasons(v)) for v in report.verdicts if review_reasons(v)]
    if review:
        lines.append(
            f"\n{len(review)} verdicts need a look (review.html shows each quote in its chunk):"
        )
        lines += [f"  {qid}: {'; '.join(reasons)}" for qid, reasons in review]
    lines.append(f"\nsaved {folder}")
    return lines


def gate(report: Report, fail_on_regression: bool, require_baseline: bool) -> tuple[int, str]:
    """Exit code and one-line verdict of the regression gate."""
    regressions = report.regressions
    missing = [
        section
        for section in ("retrieval", "judge")
        if not any(
            c.baseline is not None
            for c in [*report.comparisons, *report.baseline]
            if c.section == section
        )
    ]
    if regressions:
        text = f"REGRESSED: {len(regressions)} per-type metric(s) fell by more than the threshold"
        return (EXIT_REGRESSION if fail_on_regression else 0), text
    if missing:
        text = (
            f"no compatible earlier run or baseline for {' and '.join(missing)}: nothing compared"
        )
        return (EXIT_REGRESSION if require_baseline else 0), text
    return 0, "ok: no regression beyond the threshold"
