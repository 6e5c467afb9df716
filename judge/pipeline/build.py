"""Assemble the report of one judged run: manifest, tables, comparisons, agreement, items.

``build_report`` reads nothing and writes nothing: the history, the pinned baseline and the
earlier runs' records come from the wiring (``Earlier``); the files are
rendered from its ``Record`` (``judge.record``, ``judge.report.files``) and written by ``judge.folders``.
A live run and a re-rendered folder both come here with a ``Judged``: the verdicts and which
judge gave them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from judge.audit.agreement import agreement, audit_items, judge_scores
from judge.audit.chunk_agreement import chunk_agreement, corrected_recall
from judge.config import Config
from judge.hashing import HASH_SCHEME, tagged_hash, text_sha256
from judge.inputs.golden import GoldenSet
from judge.inputs.labels import HumanLabel, labels_by_answer
from judge.inputs.runs import Run
from judge.judging.grading import Fingerprint
from judge.judging.items import context_for
from judge.judging.tasks.chunk import depth_of
from judge.judging.types import STATUSES, ChunkGrade, ContextChunk, CorrectnessVerdict, Verdict
from judge.record import ChunkSummary, PromptEdit, QuestionRow, Record, Tables
from judge.results.bars import check_bars
from judge.results.baseline import Baseline, compare_with_baseline
from judge.results.chunk_grades import (
    RELEVANT_GRADE,
    GradedChunk,
    judged_tables,
    missing_labels,
)
from judge.results.compare import (
    SECTIONS,
    GateRule,
    QuestionValues,
    SectionComparison,
    TypeMetrics,
    decide,
)
from judge.results.diagnosis import diagnose
from judge.results.flips import changed_verdicts
from judge.results.gate import bar_checks, gate
from judge.results.history import (
    HistoryEntry,
    compare_with_history,
    compared_settings_note,
    prompt_only_predecessor,
)
from judge.results.item_record import ItemRecord
from judge.results.manifest import (
    Fingerprints,
    GitInfo,
    JudgeInfo,
    Manifest,
    RunInfo,
    TaskFingerprint,
)
from judge.results.reproducibility import steady_inputs, steady_note
from judge.results.review import NO_TRIAGE, position_bias, triage
from judge.results.season import RECENT, WINDOW, season_comparison
from judge.results.tables import ADAPTER_FAILED, JUDGE_METRICS, NOT_OK, TypeTable, judge_table
from judge.results.tokens import token_totals
from judge.results.values import question_values
from judge.retrieval import RetrievalScores
from judge.textnorm import REFUSAL_MARKERS

PACKAGES = ("judge", "httpx", "ollama", "pydantic", "tenacity", "pandas", "llama_cpp_python")


class TaskResults(NamedTuple):
    """One further judgement's results as the record keeps them (``TaskDef.per_question``),
    the record row's field that holds them, and the fingerprint they were cached under."""

    row_field: str
    per_question: Mapping[str, Any]
    fingerprint: Fingerprint


class Judged(NamedTuple):
    """What the judge stage hands to the report: the verdicts and who gave them, and the
    results of the further judgements that ran."""

    verdicts: dict[str, Verdict]
    judge: JudgeInfo
    fingerprint: Fingerprint
    seconds: float
    tasks: Mapping[str, TaskResults] = MappingProxyType({})
    """Per further judgement that ran (``chunk``, ``correctness``, ...), its results; a
    judgement that was off is not in it."""
    shown: Mapping[str, Sequence[ContextChunk]] = MappingProxyType({})
    """Per question id, the chunks its judge was shown (the items' contexts, built once by
    ``build_items``); a question not in it has its context built from the run again."""

    def of(self, task: str) -> Mapping[str, Any]:
        """Per question id, a judgement's results (empty: it was off)."""
        found = self.tasks.get(task)
        return MappingProxyType({}) if found is None else found.per_question

    @property
    def chunk_grades(self) -> Mapping[str, tuple[ChunkGrade, ...]]:
        """Per question id, the grades of its retrieved chunks (empty: chunk grading off)."""
        return self.of("chunk")

    @property
    def correctness(self) -> Mapping[str, CorrectnessVerdict]:
        """Per question id, its correctness verdict (empty: correctness off)."""
        return self.of("correctness")


class Earlier(NamedTuple):
    """What a run is compared with, read by the wiring once per command and handed down:
    the history, the pinned baseline, and earlier runs' records by folder name."""

    history: list[HistoryEntry]
    baseline: Baseline | None
    record: Callable[[str], Record | None]
    """An earlier run's record by folder name (read once per folder), or None when it is
    gone, damaged or of another format: the comparison then falls back to an older run."""
    values: Callable[[str], QuestionValues | None]
    """An earlier run's values question by question (its ``values.json``), None likewise: what
    the comparisons read (the last run, the season's runs), cheaper than a whole record."""


class Measured(NamedTuple):
    """The inputs and retrieval of one run, as the report needs them."""

    golden: GoldenSet
    run: Run
    run_source: str
    scores: RetrievalScores
    retrieval: TypeTable


def run_hash(run: Run) -> str:
    """Hash of the rankings (with any text the run supplied) and answers, not of metadata:
    equal means the same RAG output.

    ``tagged_hash({qid: [[[chunk_id, text], ...], answer], ...}, 16)``, its canonical JSON
    written out with each retrieved chunk's part encoded once per chunk, not once per question
    that retrieved it (``tests/pipeline/test_build.py`` compares the two)."""
    parts = []
    for qid in sorted(run.records):
        record = run.records[qid]
        ranking = ",".join([_retrieved_json(c.chunk_id, c.text) for c in record.retrieved])
        parts.append(f"{_json_string(qid)}:[[{ranking}],{_json_string(record.answer)}]")
    digest = hashlib.sha256(("{" + ",".join(parts) + "}").encode("utf-8")).hexdigest()
    return f"{HASH_SCHEME}:{digest[:16]}"


#: How ``json.dumps(..., ensure_ascii=False)`` (``hashing.canonical_json``) writes a string.
_json_string: Callable[[str], str] = json.encoder.encode_basestring


@functools.lru_cache(maxsize=1 << 14)
def _retrieved_json(chunk_id: str, text: str | None) -> str:
    """A retrieved chunk's ``[id, text]`` in canonical JSON (``null`` for no text)."""
    shown = "null" if text is None else _json_string(text)
    return f"[{_json_string(chunk_id)},{shown}]"


def retrieval_fingerprint(config: Config) -> str:
    return tagged_hash({"context_k": config.retrieval.context_k, "ks": config.retrieval.ks}, 16)


def _git(cwd: Path) -> GitInfo:
    """The commit checked out where the configuration is, and whether the tree has changes
    (untracked files count): one ``git status`` (its ``branch.oid`` header is the commit)."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return GitInfo(commit=None, dirty=None)
    lines = status.stdout.splitlines()
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if status.returncode != 0 or commit is None or commit == "(initial)":
        return GitInfo(commit=None, dirty=None)  # not a repository, or no commit yet
    return GitInfo(commit=commit, dirty=any(not line.startswith("#") for line in lines))


def package_version(name: str) -> str | None:
    """The installed version of a distribution (None: not installed)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _versions() -> dict[str, str | None]:
    return {"python": platform.python_version()} | {
        name: package_version(name) for name in PACKAGES
    }


def _retrieval_metrics(table: TypeTable) -> TypeMetrics:
    """Per type: every metric, and ``n`` (questions scored)."""
    return {
        row["type"]: {m: row[m] for m in table.metrics} | {"n": float(row["n"])}
        for row in table.to_json()["rows"]
    }


def _judge_metrics(table: TypeTable) -> TypeMetrics:
    """Per type: the judge metrics and ``ok_share``, the share of questions with an ok verdict
    (the history's summary of a run; runs are compared question by question, from their
    folders: ``judge.results.values``).

    Retrieval at context_k sits in the judge table for reading; the retrieval section has it.
    ``ok_share`` makes failing verdicts count: they are left out of the means, so without it a
    judge that fails on hard items would look better. Its denominator holds the questions the
    adapter failed for too, so a failing RAG system cannot either.
    """
    out: TypeMetrics = {}
    for row in table.to_json()["rows"]:
        judged = row["n"] + sum(row[status] for status in NOT_OK) + row[ADAPTER_FAILED]
        out[row["type"]] = {m: row[m] for m in JUDGE_METRICS} | {
            "ok_share": row["n"] / judged if judged else None
        }
    return out


def _manifest(
    config: Config,
    measured: Measured,
    judged: Judged,
    counts: dict[str, int],
    folder_name: str,
    started_at: datetime,
    finished_at: datetime | None,
) -> Manifest:
    golden = measured.golden
    return Manifest(
        folder=folder_name,
        started_at=started_at.isoformat(timespec="seconds"),
        finished_at=(finished_at or datetime.now(UTC)).isoformat(timespec="seconds"),
        judge=judged.judge,
        fingerprints=Fingerprints(
            judge=judged.fingerprint.value,
            judge_parts=judged.fingerprint.parts,
            retrieval=retrieval_fingerprint(config),
            golden=golden.questions_hash,
            corpus=golden.corpus_hash,
            run=run_hash(measured.run),
            tasks={
                name: TaskFingerprint(value=done.fingerprint.value, parts=done.fingerprint.parts)
                for name, done in judged.tasks.items()
            },
        ),
        run=RunInfo(source=measured.run_source, meta=measured.run.meta),
        config=config.model_copy(update={"source": None}),
        git=_git(config.source.parent if config.source else Path.cwd()),
        versions=_versions(),
        status_counts=counts,
        judge_seconds=round(judged.seconds, 3),
        tokens=token_totals(
            judged.verdicts.values(),
            {q.id: q.type for q in golden.questions},
            config.data.question_types,
        ),
    )


def _entry(
    manifest: Manifest,
    measured: Measured,
    judged: Judged,
    table: TypeTable,
    counts: dict[str, int],
) -> HistoryEntry:
    """The run's history line: its compatibility keys and per-type means."""
    return HistoryEntry(
        folder=manifest.folder,
        started_at=manifest.started_at,
        golden_hash=manifest.fingerprints.golden,
        corpus_hash=manifest.fingerprints.corpus,
        run_hash=manifest.fingerprints.run,
        retrieval_fingerprint=manifest.fingerprints.retrieval,
        judge_fingerprint=judged.fingerprint.value,
        judge_parts=judged.fingerprint.parts,
        metrics={
            "retrieval": _retrieval_metrics(measured.retrieval),
            "judge": _judge_metrics(table),
        },
        status_counts=counts,
        settings=manifest.run.meta.settings(),
    )


def _prompt_edit(
    previous: Record,
    judged: Judged,
    items: dict[str, ItemRecord],
    labels: list[HumanLabel],
) -> PromptEdit:
    """What changed against the run just before, which differed only in its prompt: the same
    run content, so the same items; only the verdicts differ."""
    old = {v.question_id: v for v in previous.verdicts}
    # In golden-set order (the items'), as every list of the record is.
    flips = changed_verdicts(old, {qid: judged.verdicts[qid] for qid in items})
    before = agreement("before", items, labels, judge_scores(old))
    after = agreement("after", items, labels, judge_scores(judged.verdicts))
    return PromptEdit(previous.manifest.folder, flips, before.both_exact, after.both_exact, after.n)


def build_report(
    config: Config,
    measured: Measured,
    judged: Judged,
    labels: list[HumanLabel],
    started_at: datetime,
    folder_name: str,
    earlier: Earlier,
    finished_at: datetime | None = None,
    *,
    bars: bool = False,
) -> Record:
    """Assemble the record of one judged run; it reads and writes nothing (what the run is
    compared with comes in ``earlier``). ``bars``: check the configuration's bars, one gate
    check each (``judge.pipeline.bars.bars_asked`` says whether)."""
    golden = measured.golden
    verdicts = [judged.verdicts[q.id] for q in golden.questions if q.id in judged.verdicts]
    counts: dict[str, int] = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    manifest = _manifest(config, measured, judged, counts, folder_name, started_at, finished_at)
    failed = measured.run.meta.failed
    correctness = judged.correctness
    table = judge_table(
        config, golden, measured.scores, verdicts, failed=failed, correctness=correctness
    )
    splits = sorted({q.split for q in golden.questions if q.split})
    split_tables: dict[str, TypeTable] = {
        split: judge_table(
            config, golden, measured.scores, verdicts, split, failed=failed, correctness=correctness
        )
        for split in splits
    }
    entry = _entry(manifest, measured, judged, table, counts)
    history = earlier.history
    # Only runs before this one count (a re-rendered report must not compare with later runs).
    names = [e.folder for e in history]
    if folder_name in names:
        history = history[: names.index(folder_name)]
    items = _item_records(config, measured, labels, judged)
    item_map = {item.question_id: item for item in items}
    # Question by question: this run's values from its records, an earlier run's from its record.
    values = question_values(items, judged.verdicts, correctness)
    rule = GateRule.from_config(config.reports)
    types = config.data.question_types

    earlier_values = earlier.values
    comparisons = compare_with_history(entry, history, values, earlier_values, rule, types)
    pinned = earlier.baseline
    baseline = compare_with_baseline(entry, pinned, values, rule, types) if pinned else []
    # One night's paired checks are one family (last run and baseline together).
    decided = decide([*comparisons, *baseline], rule)
    comparisons, baseline = decided[: len(comparisons)], decided[len(comparisons) :]
    season = _season(entry, history, values, earlier_values, rule, types)
    audit = (
        audit_items(
            folder_name,
            item_map,
            judged.verdicts,
            labels,
            config.data.question_types,
            correctness,
        )
        if labels
        else None
    )
    if audit is not None and audit.judge.n == 0:
        audit = None  # labels exist, but none for these exact answers
    predecessor = prompt_only_predecessor(entry, history)
    previous = None if predecessor is None else earlier.record(predecessor.folder)
    prompt_edit = None if previous is None else _prompt_edit(previous, judged, item_map, labels)
    failures = {q.id: failed[q.id] for q in golden.questions if q.id in failed}
    comparisons_all = [*comparisons, *baseline, *season]
    note = compared_settings_note(entry, history, comparisons)
    # Answers that changed although their question and chunks did not: the RAG system's own
    # noise (judge.results.reproducibility), against the last compatible judge comparison; not
    # said when run_meta names another generator (the settings note above says that already).
    last = next((c.baseline for c in comparisons if c.section == "judge" and c.baseline), None)
    # The same run content (run_hash) means the same answers: nothing to read or say.
    same = any(e.folder == last and e.run_hash == entry.run_hash for e in history)
    last_record = None if last is None or same else earlier.record(last)
    steady = None
    generator = measured.run.meta.generator_model
    if last_record is not None and last_record.manifest.run.meta.generator_model == generator:
        before = [row.item for row in last_record.questions if row.item is not None]
        steady = steady_note(steady_inputs(before, items))
    checked = gate(
        comparisons_all,
        failed=list(failures),
        total=len(golden.questions),
        unjudged=[v.question_id for v in verdicts if v.status != "ok"],
        judged=len(verdicts),
        notes=[n for n in (note, steady) if n],
    )
    if bars:
        results = check_bars(config.bars, table, measured.retrieval)
        checked = checked._replace(checks=[*checked.checks, *bar_checks(results)])
    return Record(
        manifest=manifest,
        entry=entry,
        chunks=_chunk_summary(config, golden, judged),
        questions=_question_rows(config, measured, item_map, judged, failures),
        tables=Tables(judge=table, retrieval=measured.retrieval, splits=split_tables),
        rule=rule,
        comparisons=comparisons,
        baseline=baseline,
        season=season,
        gate=checked,
        prompt_edit=prompt_edit,
        audit=None if audit is None else audit.figures(),
    )


def _season(
    entry: HistoryEntry,
    history: list[HistoryEntry],
    values: QuestionValues,
    earlier_values: Callable[[str], QuestionValues | None],
    rule: GateRule,
    types: Sequence[str],
) -> list[SectionComparison]:
    """Each section against the season of earlier compatible runs (``judge.results.season``):
    runs of the same golden set measured the same way, consecutive runs of the same content
    counted once (and those of tonight's content left out: tonight stands for them), the
    latest ``WINDOW + RECENT - 1`` of them whose folders can still be read."""
    out = []
    for section in SECTIONS:
        fingerprint = entry.fingerprint(section)
        runs: list[HistoryEntry] = []
        for e in history:
            if e.folder == entry.folder or e.golden_hash != entry.golden_hash:
                continue
            if e.fingerprint(section) != fingerprint:
                continue
            if runs and runs[-1].run_hash == e.run_hash:
                runs[-1] = e
            else:
                runs.append(e)
        while runs and runs[-1].run_hash == entry.run_hash:
            runs.pop()
        found = [earlier_values(e.folder) for e in runs[-(WINDOW + RECENT - 1) :]]
        comparison = season_comparison(
            section, [v for v in found if v is not None], values, rule, types
        )
        if comparison is not None:
            out.append(comparison)
    return out


def _chunk_summary(config: Config, golden: GoldenSet, judged: Judged) -> ChunkSummary | None:
    """The chunk grades summarised for the record (None when no chunk was graded): judged
    retrieval, possible missing labels, agreement with the golden labels, corrected recall."""
    if not judged.chunk_grades:
        return None
    graded = [
        GradedChunk(
            g.question_id, g.chunk_id, g.rank, g.grade if g.status == "ok" else None, g.reason
        )
        for q in golden.questions
        for g in judged.chunk_grades.get(q.id, ())
    ]
    depth = depth_of(config)
    types = config.data.question_types
    questions = golden.questions
    tables = judged_tables(questions, graded, config.retrieval.ks, types, depth=depth)
    k = min(config.retrieval.context_k, depth)
    return ChunkSummary(
        depth=depth,
        relevant_grade=RELEVANT_GRADE,
        graded=len(graded),
        not_ok=sum(g.grade is None for g in graded),
        judged=tables.every,
        judged_unlabelled=tables.unlabelled,
        missing=missing_labels(questions, graded),
        agreement=chunk_agreement(questions, graded, types),
        corrected_k=k,
        corrected=corrected_recall(questions, graded, k, types, depth=depth),
    )


def _task_fields(tasks: Mapping[str, TaskResults], question_id: str) -> dict[str, Any]:
    """A question's results of the further judgements, as the row's fields: each in its own
    field (``chunk_grades``, ``correctness``), or by task in ``judgements``."""
    fields: dict[str, Any] = {}
    generic: dict[str, Any] = {}
    for name, done in tasks.items():
        value = done.per_question.get(question_id)
        if done.row_field != "judgements":
            fields[done.row_field] = value
        elif value is not None:
            generic[name] = value
    return fields | ({"judgements": generic} if generic else {})


def _question_rows(
    config: Config,
    measured: Measured,
    items: dict[str, ItemRecord],
    judged: Judged,
    failures: dict[str, str],
) -> list[QuestionRow]:
    """One row per golden question, in golden-set order, with its review triage and its
    diagnosis (``judge.results.diagnosis``: computed here once; every view reads the row's)."""
    verdicts = judged.verdicts
    out_of_scope = set(config.data.out_of_scope_types)
    refusal_phrases = config.judge.lexical.refusal_phrases or REFUSAL_MARKERS
    # Run-level: a judge citing one sentence number for most items (``judge.results.review``).
    bias = position_bias(verdicts[q.id] for q in measured.golden.questions if q.id in verdicts)
    rows = []
    for q in measured.golden.questions:
        item, verdict = items.get(q.id), verdicts.get(q.id)
        status: str = verdict.status if verdict is not None else "not_judged"
        if verdict is None and q.id in failures:
            status = "adapter_failed"
        rows.append(
            QuestionRow(
                question_id=q.id,
                type=q.type,
                split=q.split or "",
                question=q.question,
                status=status,
                item=item,
                verdict=verdict,
                failure=failures.get(q.id),
                triage=triage(item, verdict, bias)
                if item is not None and verdict is not None
                else NO_TRIAGE,
                diagnosis=diagnose(
                    item,
                    verdict,
                    out_of_scope=q.type in out_of_scope,
                    refusal_phrases=refusal_phrases,
                    correctness=judged.correctness.get(q.id),
                ),
                **_task_fields(judged.tasks, q.id),
            )
        )
    return rows


def _item_records(
    config: Config, measured: Measured, labels: list[HumanLabel], judged: Judged
) -> list[ItemRecord]:
    """What the judge saw for each judged question, with its retrieval scores and labels."""
    verdicts, shown = judged.verdicts, judged.shown
    grouped = labels_by_answer(labels)
    scores = measured.scores
    by_question = {
        qid: {m: values[i] for m, values in scores.values.items()}
        for i, qid in enumerate(scores.question_ids)
    }
    items = []
    for q in measured.golden.questions:
        record = measured.run.records.get(q.id)
        if record is None or q.id not in verdicts:
            continue
        items.append(
            ItemRecord(
                question_id=q.id,
                type=q.type,
                split=q.split or "",
                question=q.question,
                answer=record.answer,
                reference_answer=q.reference_answer,
                context=list(
                    shown[q.id]
                    if q.id in shown
                    else context_for(record, measured.golden.corpus, config.retrieval.context_k)
                ),
                relevant_chunks=None if q.relevant_chunks is None else list(q.relevant_chunks),
                retrieval=by_question.get(q.id, {}),
                labels=[
                    label.scores() for label in grouped.get((q.id, text_sha256(record.answer)), [])
                ],
            )
        )
    return items
