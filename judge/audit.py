"""The human-agreement audit: blind sampling, label import, agreement of judge and humans.

Pairs: every human label whose answer hash equals the judged answer's, against the judge's ok
verdict for that item (a label is valid only for the exact answer it was given for). With
several labellers an item contributes one pair per label, so the judge is measured against
each person; their agreement with each other is reported separately (Krippendorff's alpha).
The lexical baseline is scored on the same items, so that an LLM judge that does not beat a
model-free overlap score is visible.
"""

from __future__ import annotations

import csv
import io
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from judge.agreement import (
    Interval,
    Pairs,
    bootstrap_ci,
    confusion,
    exact_agreement,
    krippendorff_alpha_ordinal,
    quadratic_kappa,
    within_one,
)
from judge.backends.lexical import judge_lexically
from judge.errors import InputError
from judge.golden import GoldenQuestion, HumanLabel, load_labels_if_any
from judge.hashing import text_sha256
from judge.jsonl import read_text, write_jsonl
from judge.records import ItemRecord, read_items, read_verdicts
from judge.verdict import Verdict

Axis = Literal["faithfulness", "relevance"]
AXES: tuple[Axis, ...] = ("faithfulness", "relevance")
SHEET_COLUMNS = [
    "question_id",
    "type",
    "question",
    "context",
    "answer",
    "answer_sha256",
    "faithfulness",
    "relevance",
    "labeller",
    "note",
]
#: Below this many pairs the report says the numbers are only indicative.
FEW_ITEMS = 50


def lexical_scores(item: ItemRecord) -> tuple[int, int]:
    payload = judge_lexically(item.question, [str(c["text"]) for c in item.context], item.answer)
    return int(payload["faithfulness"]), int(payload["relevance"])


# --- sampling ----------------------------------------------------------------------------------


def uncertainty(item: ItemRecord, verdict: Verdict) -> list[str]:
    """Why the judge may be unsure about this item (empty when nothing suggests it)."""
    reasons: list[str] = []
    if verdict.status != "ok":
        reasons.append(verdict.status)
    elif verdict.match is not None and verdict.match.kind in ("absent", "too_short", "partial"):
        reasons.append(f"quote {verdict.match.kind}")
    if verdict.status == "ok" and lexical_scores(item) != (verdict.faithfulness, verdict.relevance):
        reasons.append("lexical baseline disagrees")
    return reasons


def sample_items(
    items: dict[str, ItemRecord],
    verdicts: dict[str, Verdict],
    labels: list[HumanLabel],
    n: int,
    oversample_uncertain: float = 0.0,
    seed: int = 0,
) -> list[ItemRecord]:
    """``n`` items stratified by type, none already labelled for the same answer text.

    Each type gets a share of ``n`` proportional to its size (at least one where it has
    unlabelled items). ``oversample_uncertain`` (0-1) is the share of each type's quota filled
    first from items the judge may be unsure about (non-ok, quote not verified, lexical
    baseline disagreeing), the rest at random.
    """
    labelled = {(label.question_id, label.answer_sha256) for label in labels}
    pool: dict[str, list[ItemRecord]] = defaultdict(list)
    for item in items.values():
        if (item.question_id, text_sha256(item.answer)) not in labelled:
            pool[item.type].append(item)
    total = sum(len(v) for v in pool.values())
    if total == 0:
        return []
    n = min(n, total)
    rng = random.Random(seed)
    quotas = {t: max(1, round(n * len(v) / total)) for t, v in pool.items()}
    while sum(quotas.values()) > n:  # rounding up may overshoot: trim the largest quota
        largest = max(quotas, key=lambda t: quotas[t])
        quotas[largest] -= 1
    while sum(quotas.values()) < n:  # or undershoot: give to the type with most left over
        spare = max(pool, key=lambda t: len(pool[t]) - quotas[t])
        quotas[spare] += 1
    chosen: list[ItemRecord] = []
    for type_name, candidates in sorted(pool.items()):
        candidates = sorted(candidates, key=lambda i: i.question_id)
        rng.shuffle(candidates)
        quota = min(quotas[type_name], len(candidates))
        wanted = round(quota * oversample_uncertain)
        unsure = [i for i in candidates if wanted and uncertainty(i, verdicts[i.question_id])]
        first = unsure[:wanted]
        rest = [i for i in candidates if i not in first][: quota - len(first)]
        chosen += first + rest
    rng.shuffle(chosen)  # no type blocks: labellers see a mixed order
    return chosen


def write_sheet(path: Path, items: Sequence[ItemRecord]) -> None:
    """A blind labelling sheet: no judge scores or quotes. UTF-8 with BOM (Excel reads it)."""
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(SHEET_COLUMNS)
        for item in items:
            context = "\n\n".join(
                f"[{c['rank']}] {c['chunk_id']}\n{c['text']}" for c in item.context
            )
            writer.writerow(
                [
                    item.question_id,
                    item.type,
                    spreadsheet_text(item.question),
                    spreadsheet_text(context),
                    spreadsheet_text(item.answer),
                    text_sha256(item.answer),
                    "",
                    "",
                    "",
                    "",
                ]
            )


def spreadsheet_text(text: str) -> str:
    """Text a spreadsheet keeps as text: a cell starting with = + - @ would be read as a
    formula (run on opening, or rewritten on saving), so it gets the usual leading quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _same_answer(cell: str, answer_hash: str) -> bool:
    """Whether the sheet's answer cell still holds the labelled answer (after a spreadsheet
    round trip: a leading quote we added, or line breaks saved as CRLF)."""
    candidates = {cell, cell.removeprefix("'"), cell.replace("\r\n", "\n")}
    candidates.add(cell.removeprefix("'").replace("\r\n", "\n"))
    return any(text_sha256(c) == answer_hash for c in candidates)


# --- import --------------------------------------------------------------------------------


class ImportResult(NamedTuple):
    added: int
    replaced: int
    unchanged: int
    blank: int


def parse_sheet(
    path: Path, questions: dict[str, GoldenQuestion], default_labeller: str | None
) -> tuple[list[HumanLabel], int]:
    """Labels from a filled sheet; every bad row reported at once. Returns (labels, blank rows)."""
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [
        c
        for c in ("question_id", "answer_sha256", "faithfulness", "relevance")
        if c not in (reader.fieldnames or [])
    ]
    if missing:
        raise InputError(
            [f"{path}: missing column(s) {', '.join(missing)}; start from 'judge audit sample'"]
        )
    labels, problems, blank = [], [], 0
    now = datetime.now(UTC)
    for number, row in enumerate(reader, start=2):
        # Spreadsheet row numbers (the header is row 1); physical lines would not match them,
        # since context cells span many lines.
        where = f"{path}: row {number} ({(row.get('question_id') or '?').strip()})"
        faith, rel = (row.get("faithfulness") or "").strip(), (row.get("relevance") or "").strip()
        if not faith and not rel:
            blank += 1
            continue
        qid = (row.get("question_id") or "").strip()
        labeller = (row.get("labeller") or "").strip() or default_labeller
        row_problems = []
        if qid not in questions:
            row_problems.append(f"question_id '{qid}' is not a golden id")
        scores = {}
        for axis, value in (("faithfulness", faith), ("relevance", rel)):
            if value not in ("0", "1", "2"):
                row_problems.append(f"{axis} must be 0, 1 or 2, got '{value}'")
            else:
                scores[axis] = int(value)
        answer_hash = (row.get("answer_sha256") or "").strip()
        if len(answer_hash) != 64 or any(c not in "0123456789abcdef" for c in answer_hash):
            row_problems.append("answer_sha256 is damaged (copy the sheet's value unchanged)")
        elif row.get("answer") is not None and not _same_answer(row["answer"], answer_hash):
            row_problems.append(
                "the answer text was edited; labels must be for the exact answer shown"
            )
        if not labeller:
            row_problems.append("labeller is empty (fill the column or pass --labeller NAME)")
        if row_problems:
            problems += [f"{where}: {p}" for p in row_problems]
            continue
        labels.append(
            HumanLabel(
                question_id=qid,
                answer_sha256=answer_hash,
                faithfulness=scores["faithfulness"],
                relevance=scores["relevance"],
                labeller=str(labeller),
                note=(row.get("note") or "").strip(),
                labelled_at=now,
            )
        )
    if problems:
        raise InputError([*problems, "nothing was imported; fix the rows above and import again"])
    return labels, blank


def merge_labels(
    existing: list[HumanLabel], new: list[HumanLabel], replace: bool
) -> tuple[list[HumanLabel], ImportResult, list[str]]:
    """Add new labels; an identical one is skipped, a conflicting one needs ``replace``."""
    merged = {(lab.question_id, lab.answer_sha256, lab.labeller): lab for lab in existing}
    added = replaced = unchanged = 0
    conflicts = []
    for label in new:
        key = (label.question_id, label.answer_sha256, label.labeller)
        old = merged.get(key)
        if old is None:
            merged[key] = label
            added += 1
        elif (old.faithfulness, old.relevance, old.note) == (
            label.faithfulness,
            label.relevance,
            label.note,
        ):
            unchanged += 1
        elif replace:
            merged[key] = label
            replaced += 1
        else:
            conflicts.append(
                f"{label.question_id}: {label.labeller} already labelled this answer "
                f"F{old.faithfulness} R{old.relevance}, the file says F{label.faithfulness} "
                f"R{label.relevance}; pass --replace to overwrite"
            )
    return list(merged.values()), ImportResult(added, replaced, unchanged, 0), conflicts


def import_sheet(
    sheet: Path,
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    labeller: str | None,
    replace: bool,
) -> ImportResult:
    """Validate the whole sheet, then write the labels file once (atomically)."""
    new, blank = parse_sheet(sheet, questions, labeller)
    existing = load_labels_if_any(labels_path, questions)
    merged, result, conflicts = merge_labels(existing, new, replace)
    if conflicts:
        raise InputError([*conflicts, "nothing was imported"])
    if result.added or result.replaced:
        write_jsonl(labels_path, merged)
    return result._replace(blank=blank)


# --- agreement -------------------------------------------------------------------------------


class AxisStats(NamedTuple):
    n: int
    exact: float | None
    exact_ci: Interval | None
    within_one: float | None
    kappa: float | None
    kappa_ci: Interval | None
    confusion: list[list[int]]


def axis_stats(pairs: Pairs) -> AxisStats:
    return AxisStats(
        len(pairs),
        exact_agreement(pairs),
        bootstrap_ci(pairs, exact_agreement),
        within_one(pairs),
        quadratic_kappa(pairs),
        bootstrap_ci(pairs, quadratic_kappa),
        confusion(pairs),
    )


class Disagreement(NamedTuple):
    item: ItemRecord
    label: HumanLabel
    verdict: Verdict


class Agreement(NamedTuple):
    """Agreement of one judge with the humans."""

    judge: str
    per_axis: dict[Axis, dict[str, AxisStats]]
    """axis → type (and "all") → statistics."""
    both_exact: float | None
    both_exact_ci: Interval | None
    n: int
    disagreements: list[Disagreement]


def _pairs_for(
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], tuple[int, int] | None],
) -> list[tuple[ItemRecord, HumanLabel, tuple[int, int]]]:
    hashes = {qid: text_sha256(item.answer) for qid, item in items.items()}
    out = []
    for label in labels:
        item = items.get(label.question_id)
        if item is None or hashes[label.question_id] != label.answer_sha256:
            continue
        scores = score(item)
        if scores is not None:
            out.append((item, label, scores))
    return out


def agreement(
    name: str,
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
    score: Callable[[ItemRecord], tuple[int, int] | None],
    verdicts: dict[str, Verdict] | None = None,
) -> Agreement:
    """Per axis, per type and overall agreement of ``score`` with the human labels."""
    triples = _pairs_for(items, labels, score)
    per_axis: dict[Axis, dict[str, AxisStats]] = {}
    for index, axis in enumerate(AXES):
        grouped: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for item, label, scores in triples:
            pair = (getattr(label, axis), scores[index])
            grouped[item.type].append(pair)
            grouped["all"].append(pair)
        per_axis[axis] = {t: axis_stats(p) for t, p in grouped.items()}
    both: list[tuple[int, int]] = [
        (1, int((label.faithfulness, label.relevance) == scores)) for _, label, scores in triples
    ]
    disagreements = []
    if verdicts is not None:
        for item, label, scores in triples:
            if (label.faithfulness, label.relevance) != scores:
                disagreements.append(Disagreement(item, label, verdicts[item.question_id]))
    return Agreement(
        name,
        per_axis,
        exact_agreement(both),
        bootstrap_ci(both, exact_agreement),
        len(both),
        disagreements,
    )


def judge_scores(verdicts: dict[str, Verdict]) -> Callable[[ItemRecord], tuple[int, int] | None]:
    def score(item: ItemRecord) -> tuple[int, int] | None:
        v = verdicts.get(item.question_id)
        if v is None or v.status != "ok" or v.faithfulness is None or v.relevance is None:
            return None
        return v.faithfulness, v.relevance

    return score


def inter_annotator(
    items: dict[str, ItemRecord], labels: list[HumanLabel]
) -> dict[Axis, tuple[float | None, int]]:
    """Krippendorff's alpha (ordinal) among labellers, per axis: (alpha, items with 2+ labels)."""
    hashes = {qid: text_sha256(item.answer) for qid, item in items.items()}
    units: dict[str, list[HumanLabel]] = defaultdict(list)
    for label in labels:
        if label.question_id in hashes and hashes[label.question_id] == label.answer_sha256:
            units[label.question_id].append(label)
    shared = [u for u in units.values() if len(u) >= 2]
    return {
        axis: (
            krippendorff_alpha_ordinal([[getattr(lab, axis) for lab in unit] for unit in shared]),
            len(shared),
        )
        for axis in AXES
    }


class AuditResult(NamedTuple):
    folder: str
    judge: Agreement
    lexical: Agreement
    humans: dict[Axis, tuple[float | None, int]]
    labellers: list[str]


def audit_items(
    folder_name: str,
    items: dict[str, ItemRecord],
    verdicts: dict[str, Verdict],
    labels: list[HumanLabel],
) -> AuditResult:
    """The judge's verdicts and the lexical baseline, against the human labels."""
    judge = agreement("judge", items, labels, judge_scores(verdicts), verdicts)
    lexical = agreement("lexical baseline", items, labels, lexical_scores)
    return AuditResult(
        folder_name,
        judge,
        lexical,
        inter_annotator(items, labels),
        sorted({label.labeller for label in labels}),
    )


def run_audit(folder: Path, labels: list[HumanLabel]) -> AuditResult:
    """The audit of a saved run folder."""
    return audit_items(folder.name, read_items(folder), read_verdicts(folder), labels)


def fmt_share(value: float | None) -> str:
    """A share as a percentage, "–" when undefined."""
    return "–" if value is None else f"{value:.1%}"


def fmt_number(value: float | None) -> str:
    """A statistic with two decimals, "–" when undefined."""
    return "–" if value is None else f"{value:.2f}"


def _ci(interval: Interval | None, percent: bool) -> str:
    if interval is None:
        return ""
    fmt = fmt_share if percent else fmt_number
    return f" [{fmt(interval.low)}, {fmt(interval.high)}]"


def render_audit(result: AuditResult, judge_name: str) -> str:
    """The audit as text (also used, as Markdown-friendly text, in reports)."""
    lines = [f"agreement with human labels · run {result.folder} · judge {judge_name}"]
    n = result.judge.n
    lines.append(
        f"labels: {n} pairs from {len(result.labellers)} labeller(s) ({', '.join(result.labellers)})"
    )
    if n < FEW_ITEMS:
        lines.append(
            f"note: {n} pairs give wide intervals (95 % bootstrap intervals in brackets); "
            "treat differences of a few points as noise"
        )
    for agreement_ in (result.judge, result.lexical):
        lines.append("")
        lines.append(
            f"{agreement_.judge}: both scores exact {fmt_share(agreement_.both_exact)}"
            f"{_ci(agreement_.both_exact_ci, True)} over {agreement_.n} labels"
        )
        for axis in AXES:
            lines.append(f"  {axis}")
            lines.append(
                f"    {'type':<14}{'n':>4}  {'exact':<24}{'within 1':>9}  kappa (quadratic)"
            )
            stats_by_type = agreement_.per_axis.get(axis, {})
            for type_name in [*sorted(t for t in stats_by_type if t != "all"), "all"]:
                if type_name not in stats_by_type:
                    continue
                s = stats_by_type[type_name]
                exact = fmt_share(s.exact) + _ci(s.exact_ci, True)
                kappa = fmt_number(s.kappa) + _ci(s.kappa_ci, False)
                lines.append(
                    f"    {type_name:<14}{s.n:>4}  {exact:<24}{fmt_share(s.within_one):>9}  {kappa}"
                )
            overall = stats_by_type.get("all")
            if overall is not None:
                lines.append(
                    "    confusion (rows human 0/1/2, columns judge 0/1/2): "
                    + " | ".join(" ".join(f"{c:>2}" for c in row) for row in overall.confusion)
                )
    lines.append("")
    for axis, (alpha, shared) in result.humans.items():
        lines.append(
            f"humans among themselves, {axis}: Krippendorff's alpha (ordinal) {fmt_number(alpha)} "
            f"over {shared} items labelled by 2+ people"
        )
    if result.judge.disagreements:
        lines.append("")
        lines.append(
            f"disagreements ({len(result.judge.disagreements)}): read these before editing the prompt"
        )
        for d in result.judge.disagreements:
            v, label = d.verdict, d.label
            match = f" [{v.match.kind}]" if v.match else ""
            lines += [
                f"- {d.item.question_id} ({d.item.type}) human {label.labeller} F{label.faithfulness} "
                f"R{label.relevance} · judge F{v.faithfulness} R{v.relevance}",
                f"    question: {d.item.question}",
                f"    answer:   {d.item.answer}",
                f"    judge:    {v.note}",
                f"    quote:    {v.evidence or '(none)'}{match}",
            ]
            if label.note:
                lines.append(f"    human:    {label.note}")
    return "\n".join(lines)


def gate(result: AuditResult, min_kappa: float | None, min_agreement: float | None) -> list[str]:
    """Reasons the audit fails its bar (empty: it passes)."""
    failures = []
    for axis in AXES:
        overall = result.judge.per_axis.get(axis, {}).get("all")
        kappa = overall.kappa if overall else None
        exact = overall.exact if overall else None
        if min_kappa is not None and (kappa is None or kappa < min_kappa):
            failures.append(f"{axis} kappa {fmt_number(kappa)} < {min_kappa}")
        if min_agreement is not None and (exact is None or exact < min_agreement):
            failures.append(f"{axis} exact agreement {fmt_share(exact)} < {min_agreement:.0%}")
    return failures


def as_json(result: AuditResult) -> dict[str, Any]:
    def agreement_json(a: Agreement) -> dict[str, Any]:
        return {
            "both_exact": a.both_exact,
            "both_exact_ci": a.both_exact_ci._asdict() if a.both_exact_ci else None,
            "n": a.n,
            "per_axis": {
                axis: {
                    t: {
                        **s._asdict(),
                        "exact_ci": s.exact_ci._asdict() if s.exact_ci else None,
                        "kappa_ci": s.kappa_ci._asdict() if s.kappa_ci else None,
                    }
                    for t, s in by_type.items()
                }
                for axis, by_type in a.per_axis.items()
            },
        }

    return {
        "judge": agreement_json(result.judge),
        "lexical": agreement_json(result.lexical),
        "humans": {
            axis: {"alpha": alpha, "items": n} for axis, (alpha, n) in result.humans.items()
        },
        "labellers": result.labellers,
    }


# --- labelling in the terminal ---------------------------------------------------------------


def label_in_terminal(
    items: list[ItemRecord],
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    labeller: str,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> int:
    """Ask for scores item by item (blind: no judge output shown); save after each.

    Items this labeller already labelled for the same answer text are skipped, so stopping
    (q, Ctrl-D) and starting again resumes where it stopped. Returns the labels saved.
    """
    existing = load_labels_if_any(labels_path, questions)
    done = {(lab.question_id, lab.answer_sha256) for lab in existing if lab.labeller == labeller}
    todo = [i for i in items if (i.question_id, text_sha256(i.answer)) not in done]
    say(f"{len(todo)} item(s) to label as '{labeller}' ({len(items) - len(todo)} already done)")
    saved = 0
    for number, item in enumerate(todo, start=1):
        say(f"\n[{number}/{len(todo)}] {item.question_id} · {item.type}")
        say(f"question: {item.question}")
        for chunk in item.context:
            say(f"  #{chunk['rank']} {chunk['chunk_id']}\n  {chunk['text']}")
        say(f"answer: {item.answer}")
        scores: list[int] = []
        try:
            for axis in AXES:
                while True:
                    reply = ask(f"{axis} 0-2 (s skip, q quit): ").strip().lower()
                    if reply in ("0", "1", "2"):
                        scores.append(int(reply))
                        break
                    if reply in ("s", "q"):
                        break
                    say("  type 0, 1 or 2 (or s, q)")
                if reply in ("s", "q"):
                    break
            if len(scores) < len(AXES):
                if reply == "q":
                    break
                continue
            note = ask("note (optional): ").strip()
        except EOFError:
            break
        label = HumanLabel(
            question_id=item.question_id,
            answer_sha256=text_sha256(item.answer),
            faithfulness=scores[0],
            relevance=scores[1],
            labeller=labeller,
            note=note,
            labelled_at=datetime.now(UTC),
        )
        with labels_path.open("a", encoding="utf-8") as handle:
            handle.write(label.model_dump_json(exclude_none=True) + "\n")
        saved += 1
    say(f"saved {saved} label(s) to {labels_path}")
    return saved
