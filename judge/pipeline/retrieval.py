"""``judge retrieval`` (of a run, or of a TREC run with ``--trec-run``) and ``judge trec
export``: retrieval without the judge, and the files trec_eval reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.inputs.adapter import AdapterProgress
from judge.inputs.golden import load_golden
from judge.inputs.trec import read_qrels, read_trec_run, with_qrels, write_qrels, write_trec_run
from judge.io.write import write_atomic
from judge.pipeline.inputs import Inputs, _ignore, load_inputs, measure_retrieval
from judge.record.stages import Measured


class RetrievalResult(NamedTuple):
    """Retrieval measured on a run, and the JSON file its table was written to."""

    measured: Measured
    out: Path


def retrieval(
    config: Config,
    run_path: Path | None = None,
    *,
    fresh_answers: bool = False,
    trec_run: str | Path | None = None,
    trec_qrels: Path | None = None,
    out: Path | None = None,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> RetrievalResult:
    """Score retrieval per question and type and write the table as JSON (``out``, by default
    ``reports/retrieval.json``).

    With ``trec_run`` the run is a TREC run file scored against the golden set (or against
    ``trec_qrels``'s relevant chunks); no adapter is asked and no labels are read. Otherwise
    the run is ``load_inputs``'s (``on_inputs`` sees the inputs once loaded).
    """
    if trec_run is not None:
        golden = load_golden(config.data)
        if trec_qrels is not None:
            golden = with_qrels(golden, read_qrels(trec_qrels), trec_qrels)
        # The source is named as it was given (a Path would drop a leading './').
        measured = measure_retrieval(
            config, golden, read_trec_run(Path(trec_run), golden), str(trec_run)
        )
    else:
        inputs = load_inputs(
            config,
            run_path,
            fresh_answers=fresh_answers,
            on_adapter=on_adapter,
            with_labels=False,
        )
        on_inputs(inputs)
        measured = measure_retrieval(config, inputs.golden, inputs.run, inputs.run_source)
    path = out if out is not None else config.reports.dir / "retrieval.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "run": measured.run_source,
        "context_k": config.retrieval.context_k,
        "golden_hash": measured.golden.questions_hash,
        "corpus_hash": measured.golden.corpus_hash,
        "table": measured.retrieval.to_json(),
        "excluded": measured.scores.excluded,
    }
    write_atomic(path, json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    return RetrievalResult(measured, path)


class TrecExport(NamedTuple):
    """The qrels and TREC run files written, with their line counts."""

    qrels: Path
    qrels_lines: int
    run: Path
    run_lines: int


def export_trec(
    config: Config,
    run_path: Path | None = None,
    *,
    fresh_answers: bool = False,
    qrels: Path | None = None,
    trec_out: Path | None = None,
    on_adapter: Callable[[AdapterProgress], None] = _ignore,
    on_inputs: Callable[[Inputs], None] = _ignore,
) -> TrecExport:
    """Write the golden set's qrels and the run as a TREC run (by default
    ``reports/trec/qrels.txt`` and ``reports/trec/run.txt``), for trec_eval to score."""
    inputs = load_inputs(
        config, run_path, fresh_answers=fresh_answers, on_adapter=on_adapter, with_labels=False
    )
    on_inputs(inputs)
    default_dir = config.reports.dir / "trec"
    qrels_path = qrels if qrels is not None else default_dir / "qrels.txt"
    run_out = trec_out if trec_out is not None else default_dir / "run.txt"
    for path in (qrels_path, run_out):
        path.parent.mkdir(parents=True, exist_ok=True)
    qrels_lines = write_qrels(inputs.golden, qrels_path)
    return TrecExport(qrels_path, qrels_lines, run_out, write_trec_run(inputs.run, run_out))
