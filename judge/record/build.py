"""Assemble the record of one judged run: tables, comparisons, audit, gate, and the parts
``judge.record.manifest_build`` and ``judge.record.rows`` make.

``build_record`` reads nothing and writes nothing: the history, the pinned baseline and the
earlier runs' records come from the wiring (``Earlier``), and so do the clock, the git commit
and the package versions (``Provenance``, read by ``judge.pipeline.build``); the files are
rendered from its ``Record`` (``judge.report.files``) and written by ``judge.record.store``.
A live run and a re-rendered folder both come here with a ``Judged``: the verdicts and which
judge gave them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from judge.audit.agreement import agreement, audit_items, judge_scores
from judge.audit.align import AdoptedPrompt
from judge.audit.panel_agreement import PanelSummary
from judge.audit.types import AuditResult
from judge.config import Config
from judge.inputs.labels import HumanLabel
from judge.judging.types import STATUSES, CorrectnessVerdict, Verdict
from judge.record.manifest_build import Provenance, build_manifest, run_entry
from judge.record.model import PromptEdit, Record, Tables
from judge.record.rows import chunk_summary, item_records, question_rows
from judge.record.stages import Earlier, Judged, Measured
from judge.results.bars import check_bars
from judge.results.baseline import Baseline, compare_with_baseline
from judge.results.compare import (
    SECTIONS,
    GateRule,
    QuestionValues,
    SectionComparison,
    decide,
)
from judge.results.flips import changed_verdicts
from judge.results.gate import Gate, bar_checks, gate
from judge.results.history import (
    HistoryEntry,
    compare_with_history,
    compared_settings_note,
    prompt_only_predecessor,
)
from judge.results.item_record import ItemRecord
from judge.results.lasting import Lasting, ended_notes, lasting_falls, lasting_nights
from judge.results.reproducibility import steady_inputs, steady_note
from judge.results.season import RECENT, WINDOW, season_comparison
from judge.results.tables import TypeTable, judge_table
from judge.results.values import question_values


class JudgeViews(NamedTuple):
    """What the wiring read of the judge itself for a run's views: the prompt ``judge align``
    adopted, the newest ``judge panel`` of the run's answers, and the answers it disputed."""

    adopted: AdoptedPrompt | None = None
    panel: PanelSummary | None = None

    def fields(self) -> dict[str, Any]:
        """The record's fields of these views."""
        return {"adopted_prompt": self.adopted, "panel": self.panel}

    @property
    def disputed(self) -> Mapping[str, Sequence[str]]:
        return {} if self.panel is None else self.panel.disputed


#: A run with no adopted prompt and no panel.
NO_VIEWS = JudgeViews()


class _Compared(NamedTuple):
    """The run's paired comparisons: with the last compatible run, the pinned baseline (one
    family, decided together) and the season."""

    comparisons: list[SectionComparison]
    baseline: list[SectionComparison]
    season: list[SectionComparison]


def build_record(
    config: Config,
    measured: Measured,
    judged: Judged,
    labels: list[HumanLabel],
    started_at: datetime,
    folder_name: str,
    earlier: Earlier,
    provenance: Provenance,
    *,
    bars: bool = False,
    views: JudgeViews = NO_VIEWS,
) -> Record:
    """Assemble the record of one judged run; it reads and writes nothing (what the run is
    compared with comes in ``earlier``, ``views``, where and when it was made in
    ``provenance``). ``bars``: check the configuration's bars (``bars_asked`` says whether)."""
    golden = measured.golden
    verdicts = [judged.verdicts[q.id] for q in golden.questions if q.id in judged.verdicts]
    counts: dict[str, int] = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    manifest = build_manifest(config, measured, judged, counts, folder_name, started_at, provenance)
    table, split_tables = _tables(config, measured, verdicts, judged.correctness)
    entry = run_entry(manifest, measured, judged, table, counts)
    history = _runs_before(earlier.history, folder_name)
    items = item_records(config, measured, labels, judged)
    item_map = {item.question_id: item for item in items}
    # Question by question: this run's values from its records, an earlier run's from its record.
    values = question_values(items, judged.verdicts, judged.correctness)
    rule = GateRule.from_config(config.reports)
    compared = _compare(config, entry, history, values, earlier, rule)
    audit = _audit(config, folder_name, item_map, judged, labels)
    predecessor = prompt_only_predecessor(entry, history)
    previous = None if predecessor is None else earlier.record(predecessor.folder)
    prompt_edit = None if previous is None else _prompt_edit(previous, judged, item_map, labels)
    failed = measured.run.meta.failed
    failures = {q.id: failed[q.id] for q in golden.questions if q.id in failed}
    checked = _gate(
        measured, entry, history, earlier, compared, (items, values), verdicts, failures
    )
    if bars:
        results = check_bars(config.bars, table, measured.retrieval)
        checked = checked._replace(checks=[*checked.checks, *bar_checks(results)])
    record = Record(
        manifest=manifest,
        entry=entry,
        chunks=chunk_summary(config, golden, judged),
        questions=question_rows(config, measured, item_map, judged, failures, views.disputed),
        tables=Tables(judge=table, retrieval=measured.retrieval, splits=split_tables),
        rule=rule,
        comparisons=compared.comparisons,
        baseline=compared.baseline,
        season=compared.season,
        gate=checked,
        prompt_edit=prompt_edit,
        audit=None if audit is None else audit.figures(),
        **views.fields(),
    )
    record.remember_values(values)
    return record


def _runs_before(history: list[HistoryEntry], folder_name: str) -> list[HistoryEntry]:
    """Only runs before this one count (a re-rendered report must not compare with later
    runs)."""
    names = [e.folder for e in history]
    return history[: names.index(folder_name)] if folder_name in names else history


def _tables(
    config: Config,
    measured: Measured,
    verdicts: list[Verdict],
    correctness: Mapping[str, CorrectnessVerdict],
) -> tuple[TypeTable, dict[str, TypeTable]]:
    """The judge table over the whole golden set, and one per split (tune, holdout)."""
    golden, scores, failed = measured.golden, measured.scores, measured.run.meta.failed
    table = judge_table(config, golden, scores, verdicts, failed=failed, correctness=correctness)
    splits = sorted({q.split for q in golden.questions if q.split})
    return table, {
        split: judge_table(
            config, golden, scores, verdicts, split, failed=failed, correctness=correctness
        )
        for split in splits
    }


def _compare(
    config: Config,
    entry: HistoryEntry,
    history: list[HistoryEntry],
    values: QuestionValues,
    earlier: Earlier,
    rule: GateRule,
) -> _Compared:
    """The run against the last compatible run, the pinned baseline and the season."""
    types = config.data.question_types
    comparisons = compare_with_history(entry, history, values, earlier.values, rule, types)
    pinned = earlier.baseline
    baseline = compare_with_baseline(entry, pinned, values, rule, types) if pinned else []
    # One night's paired checks are one family (last run and baseline together).
    decided = decide([*comparisons, *baseline], rule)
    comparisons, baseline = decided[: len(comparisons)], decided[len(comparisons) :]
    season = _season(entry, history, values, earlier.values, rule, types, pinned)
    return _Compared(comparisons, baseline, season)


def _audit(
    config: Config,
    folder_name: str,
    items: dict[str, ItemRecord],
    judged: Judged,
    labels: list[HumanLabel],
) -> AuditResult | None:
    """The agreement with the human labels of these answers (None: no labels, or none for
    these exact answers)."""
    if not labels:
        return None
    types = config.data.question_types
    audit = audit_items(folder_name, items, judged.verdicts, labels, types, judged.correctness)
    return None if audit.judge.n == 0 else audit


def _gate(
    measured: Measured,
    entry: HistoryEntry,
    history: list[HistoryEntry],
    earlier: Earlier,
    compared: _Compared,
    run: tuple[list[ItemRecord], QuestionValues],
    verdicts: list[Verdict],
    failures: dict[str, str],
) -> Gate:
    """The gate's checks of the comparisons, with its notes: the settings compared and, when
    the answers changed although their question and chunks did not, the RAG system's noise;
    the answers below since a date, and the falls of the run before that ended (``run``: the
    run's items and values)."""
    items, values = run
    comparisons = compared.comparisons
    note = compared_settings_note(entry, history, comparisons)
    steady = _steady(measured, entry, history, earlier, comparisons, items)
    every = [*comparisons, *compared.baseline, *compared.season]
    below, ended = _lasting(entry, history, earlier, every, values)
    return gate(
        every,
        failed=list(failures),
        total=len(measured.golden.questions),
        unjudged=[v.question_id for v in verdicts if v.status != "ok"],
        judged=len(verdicts),
        notes=[n for n in (note, steady, *ended) if n],
        lasting=below,
    )


def _lasting(
    entry: HistoryEntry,
    history: list[HistoryEntry],
    earlier: Earlier,
    comparisons: list[SectionComparison],
    values: QuestionValues,
) -> tuple[list[Lasting], list[str]]:
    """The answers below the baseline or the season since a date (``judge.results.lasting``),
    and what of the last compatible run's falls ended tonight."""
    nights = lasting_nights(entry, history, values, earlier.values, WINDOW + RECENT - 1)
    pinned = earlier.baseline
    usable = pinned is not None and pinned.golden_hash == entry.golden_hash
    reference = pinned.question_values() if pinned is not None and usable else None
    below = lasting_falls(nights, reference)
    last = next((c.baseline for c in comparisons if c.section == "judge" and c.baseline), None)
    before = next((e for e in reversed(history) if e.folder == last), None)
    was = _earlier_gate(earlier, last) if last is not None and before is not None else None
    regressions = [c for comp in comparisons for c in comp.regressions]
    since = before.started_at[:10] if before is not None else ""
    previous = (was.regressions, was.lasting) if was is not None else None
    ended = ended_notes(previous, since, regressions, below)
    return below, ended


def _earlier_gate(earlier: Earlier, folder: str) -> Gate | None:
    """An earlier run's gate: read alone where the wiring can (``Earlier.gate``), else its
    record's."""
    if earlier.gate is not None:
        return earlier.gate(folder)
    record = earlier.record(folder)
    return None if record is None else record.gate


def _steady(
    measured: Measured,
    entry: HistoryEntry,
    history: list[HistoryEntry],
    earlier: Earlier,
    comparisons: list[SectionComparison],
    items: list[ItemRecord],
) -> str | None:
    """Answers that changed although their question and chunks did not: the RAG system's own
    noise (``judge.results.reproducibility``), against the last compatible judge comparison;
    not said when run_meta names another generator (the settings note says that already)."""
    last = next((c.baseline for c in comparisons if c.section == "judge" and c.baseline), None)
    # The same run content (run_hash) means the same answers: nothing to read or say.
    same = any(e.folder == last and e.run_hash == entry.run_hash for e in history)
    last_record = None if last is None or same else earlier.record(last)
    generator = measured.run.meta.generator_model
    if last_record is None or last_record.manifest.run.meta.generator_model != generator:
        return None
    before = [row.item for row in last_record.questions if row.item is not None]
    return steady_note(steady_inputs(before, items))


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


def _season(
    entry: HistoryEntry,
    history: list[HistoryEntry],
    values: QuestionValues,
    earlier_values: Callable[[str], QuestionValues | None],
    rule: GateRule,
    types: Sequence[str],
    pinned: Baseline | None = None,
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
        same = (
            pinned.question_values()
            if pinned is not None
            and pinned.golden_hash == entry.golden_hash
            and pinned.fingerprint(section) == fingerprint
            else None
        )
        comparison = season_comparison(
            section, [v for v in found if v is not None], values, rule, types, same
        )
        if comparison is not None:
            out.append(comparison)
    return out
