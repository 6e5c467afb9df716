"""What the commands that write files or count things print: pure functions of a command's
result, each returning its lines (the CLI prints each line with its data escaped, one line).

Each reads its result through a protocol that names only what it reads: the results are the
wiring's (``judge.pipeline``), which the views never import. Commands: ``trec export``,
``baseline pin | ratchet``, ``audit sample | import``,
``cache stats | prune``, ``batch export | import``, ``import``, ``golden accept``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from pathlib import Path
from typing import Any, Protocol


class _Line(Protocol):
    def line(self) -> str: ...


class _Described(Protocol):
    @property
    def section(self) -> str: ...
    def describe(self) -> str: ...


class _TrecExport(Protocol):
    @property
    def qrels(self) -> Path: ...
    @property
    def qrels_lines(self) -> int: ...
    @property
    def run(self) -> Path: ...
    @property
    def run_lines(self) -> int: ...


def trec_export_lines(exported: _TrecExport) -> list[str]:
    """The two files written, and the trec_eval line that scores them."""
    qrels, trec_out = exported.qrels, exported.run
    return [
        f"wrote {exported.qrels_lines} qrels lines to {qrels}",
        f"wrote {exported.run_lines} run lines to {trec_out}",
        f"score them with: trec_eval -m recall.5 -m ndcg_cut.5 {qrels} {trec_out}",
    ]


class _Pinned(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def folder(self) -> str: ...
    @property
    def questions(self) -> int: ...


def pinned_lines(pinned: _Pinned) -> list[str]:
    return [f"pinned {pinned.path} from {pinned.folder} ({pinned.questions} questions)"]


class _Ratcheted(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def folder(self) -> str: ...
    @property
    def raised(self) -> Sequence[_Described]: ...


def ratcheted_lines(ratcheted: _Ratcheted) -> list[str]:
    """How many per-type metrics the ratchet raised, then each one."""
    return [
        f"ratcheted {ratcheted.path} with {ratcheted.folder}: {len(ratcheted.raised)} per-type "
        "metric(s) raised where the run is shown better question by question, none lowered",
        *(f"  {c.section} {c.describe()}" for c in ratcheted.raised),
    ]


class _Sampled(Protocol):
    @property
    def sheet(self) -> Path: ...
    @property
    def folder(self) -> str: ...
    @property
    def per_type(self) -> Mapping[str, int]: ...
    @property
    def items(self) -> int: ...


def sampled_lines(sampled: _Sampled, asked: int) -> list[str]:
    """The sheet written (``asked`` items were asked for), and what to do with it."""
    out = sampled.sheet
    per_type = ", ".join(f"{n} {t}" for t, n in sampled.per_type.items())
    lines = [
        f"wrote {out}: {sampled.items} item(s) from {sampled.folder} ({per_type}); "
        "no judge scores in it"
    ]
    if sampled.items < asked:
        lines.append(f"only {sampled.items} unlabelled item(s) were left to sample")
    lines.append(f"fill faithfulness, relevance (0-2) and labeller, then: judge audit import {out}")
    return lines


class _LabelsImport(Protocol):
    @property
    def added(self) -> int: ...
    @property
    def replaced(self) -> int: ...
    @property
    def unchanged(self) -> int: ...
    @property
    def blank(self) -> int: ...
    @property
    def retired(self) -> int: ...


class _LabelsImported(Protocol):
    @property
    def labels(self) -> Path: ...
    @property
    def result(self) -> _LabelsImport: ...


def labels_imported_warnings(imported: _LabelsImported) -> list[str]:
    """``audit import``: labels of questions no longer golden, kept as they are."""
    if not imported.result.retired:
        return []
    return [
        f"{imported.labels}: {imported.result.retired} label(s) of questions no longer in the "
        "golden set were kept as they are ('judge check' lists them)"
    ]


def labels_imported_lines(imported: _LabelsImported) -> list[str]:
    """``audit import``: labels added, replaced, already there, rows left blank."""
    result = imported.result
    blank = f"; {result.blank} row(s) left blank were skipped" if result.blank else ""
    return [
        f"{imported.labels}: {result.added} added, {result.replaced} replaced, "
        f"{result.unchanged} already there{blank}"
    ]


class _CacheEntry(Protocol):
    @property
    def fingerprint(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def parts(self) -> Mapping[str, Any]: ...
    @property
    def replies(self) -> int: ...
    @property
    def last_used_at(self) -> str: ...


class _CacheStats(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def entries(self) -> Sequence[_CacheEntry]: ...


def cache_stats_lines(stats: _CacheStats) -> list[str]:
    """Each judge configuration in the cache: its fingerprint, replies, last use and parts (the
    schema left out)."""
    import json

    lines = [f"cache: {stats.path} · {len(stats.entries)} judge configuration(s)"]
    for entry in stats.entries:
        lines += [
            "",
            f"{entry.fingerprint}  {entry.replies} replies  last used {entry.last_used_at}",
        ]
        lines.append(f"  {entry.label}")
        lines += [
            f"  {key}: {json.dumps(value, ensure_ascii=False)}"
            for key, value in entry.parts.items()
            if key != "schema"
        ]
    return lines


class _Pruned(Protocol):
    @property
    def fingerprints(self) -> int: ...
    @property
    def replies(self) -> int: ...


def pruned_lines(pruned: _Pruned, days: float, *, dry_run: bool) -> list[str]:
    verb = "would remove" if dry_run else "removed"
    return [
        f"{verb} {pruned.fingerprints} judge configuration(s) unused for {days:g} days "
        f"({pruned.replies} replies)"
    ]


class _BatchFile(Protocol):
    @property
    def bytes(self) -> int: ...


class _BatchExport(Protocol):
    @property
    def out_dir(self) -> Path: ...
    @property
    def manifest(self) -> Path | None: ...
    @property
    def files(self) -> Sequence[_BatchFile]: ...
    @property
    def pending(self) -> int: ...
    @property
    def cached(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def estimate(self) -> _Line | None: ...


def batch_export_lines(result: _BatchExport, model: str) -> list[str]:
    """The estimate, then what was written and how to run it with a batch engine serving
    ``model`` (or that nothing was pending)."""
    lines = [] if result.estimate is None else [result.estimate.line()]
    if result.manifest is None:
        return [
            *lines,
            f"nothing to export: all {result.total} item(s) are in the cache for judge "
            f"configuration {result.fingerprint} (judge.openai: {model})",
        ]
    size = sum(f.bytes for f in result.files) / 1024 / 1024
    return [
        *lines,
        f"wrote {result.pending} pending item(s) in {len(result.files)} file(s) ({size:.1f} MB) "
        f"to {result.out_dir}; {result.cached} of {result.total} already in the cache; "
        f"manifest {result.manifest}",
        f"run them with a batch engine serving '{model}' (docs/batch.md), "
        f"then: judge batch import {result.out_dir}/results-*.jsonl",
    ]


class _BatchImport(Protocol):
    @property
    def lines(self) -> int: ...
    @property
    def imported(self) -> int: ...
    @property
    def already(self) -> int: ...
    @property
    def not_judged(self) -> Sized: ...
    @property
    def problems(self) -> Sized: ...
    @property
    def still_pending(self) -> int: ...


def batch_import_lines(result: _BatchImport, cache: Path) -> list[str]:
    """The replies imported into ``cache``, and whether every item of the export has one."""
    lines = [
        f"imported {result.imported} replies into {cache} from {result.lines} lines, "
        f"{result.already} already there; {len(result.not_judged)} not judged by the engine; "
        f"{len(result.problems)} problems; {result.still_pending} items of the export still "
        "without a reply"
    ]
    if result.still_pending == 0 and not len(result.problems):
        lines.append(
            "every item is in the cache: 'judge run --backend openai' judges nothing again"
        )
    return lines


class _ForeignImport(Protocol):
    @property
    def questions(self) -> Path: ...
    @property
    def per_type(self) -> Mapping[str, int]: ...
    @property
    def chunks(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def unlabelled(self) -> int: ...
    @property
    def data_lines(self) -> Sequence[str]: ...


def foreign_import_lines(result: _ForeignImport, source: str, config: str) -> list[str]:
    """``judge import``: what was read from ``source``, then the ``[data]`` table to put in
    ``config`` (the configuration file's name)."""
    total = sum(result.per_type.values())
    counts = ", ".join(f"{n} {qtype}" for qtype, n in result.per_type.items() if n)
    lines = [
        f"imported {total} question(s) ({counts}), {result.chunks} chunk(s) and "
        f"{total - result.failed} answer(s) from {source} into {result.questions.parent}"
    ]
    if result.failed:
        lines.append(f"{result.failed} question(s) failed in the source: reported, not scored")
    if result.unlabelled:
        lines.append(
            f"{result.unlabelled} answerable question(s) without relevant chunks: judged, "
            "their retrieval not scored (relevant_chunks: null)"
        )
    return [
        *lines,
        "",
        f"use it: put this [data] table in {config} (replacing its own), then 'judge check':",
        "",
        *result.data_lines,
    ]


class _LabelEdit(Protocol):
    @property
    def added(self) -> Sequence[tuple[str, str]]: ...
    @property
    def already(self) -> int: ...
    @property
    def marked_no(self) -> int: ...
    @property
    def undecided(self) -> int: ...
    @property
    def lines(self) -> Sequence[int]: ...


class _Accepted(Protocol):
    @property
    def questions(self) -> Path: ...
    @property
    def edit(self) -> _LabelEdit: ...
    @property
    def written(self) -> bool: ...


def accepted_lines(accepted: _Accepted, *, dry_run: bool, shown: int = 10) -> list[str]:
    """``golden accept``: the labels added (the first ``shown`` named), those already listed,
    marked no or not decided; then what a dry run would change, or what the change means."""
    edit = accepted.edit
    listed = ", ".join(f"{qid} + {chunk}" for qid, chunk in edit.added[:shown])
    more = f", … {len(edit.added) - shown} more" if len(edit.added) > shown else ""
    n = len(edit.added)
    labels = f"{n} label{'' if n == 1 else 's'}"
    if not edit.added:
        head = f"no labels to add to {accepted.questions}"
    elif dry_run:
        head = f"would add {labels} to {accepted.questions} ({listed}{more})"
    else:
        head = f"added {labels} to {accepted.questions} ({listed}{more})"
    parts = [head, f"{edit.already} already listed", f"{edit.marked_no} marked no"]
    if edit.undecided:
        parts.append(f"{edit.undecided} not decided (confirmed left empty), skipped")
    lines = ["; ".join(parts)]
    if edit.added and dry_run:
        changed = ", ".join(str(line) for line in edit.lines)
        lines.append(f"nothing written (--dry-run); line(s) {changed} would change")
    elif accepted.written:
        lines.append(
            "the golden set changed: the next run is not compared with runs on the old one "
            "(pin a new baseline after it), and an adapter is asked again"
        )
    return lines
