from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.inputs.trec import read_qrels, read_trec_run, write_qrels, write_trec_run
from judge.retrieval import score_run

Tiny = Callable[..., Config]


def test_export_then_import_gives_the_same_scores(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    run = load_run(config.data.run, golden)
    assert write_qrels(golden, tmp_path / "q.qrels") == 4
    assert write_trec_run(run, tmp_path / "r.run") == 8
    assert (tmp_path / "r.run").read_text().splitlines()[0] == "q1 Q0 pricing/plans 1 2 judge"
    assert read_qrels(tmp_path / "q.qrels")["q2"] == {"backup/restore": 1, "backup/auto": 1}
    imported = read_trec_run(tmp_path / "r.run", golden)
    assert score_run(golden, imported, [5, 1]).values == score_run(golden, run, [5, 1]).values


def test_import_orders_by_score_like_trec_eval(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    (tmp_path / "r.run").write_text(
        "q1 Q0 pricing/trial 1 0.2 x\nq1 Q0 pricing/plans 2 0.9 x\nq1 Q0 backup/auto 3 0.2 x\n",
        encoding="utf-8",
    )
    run = read_trec_run(tmp_path / "r.run", golden)
    # Score descending; the 0.2 tie is broken by docid descending, as trec_eval does.
    assert [c.chunk_id for c in run.records["q1"].retrieved] == [
        "pricing/plans",
        "pricing/trial",
        "backup/auto",
    ]
    # Questions the file does not mention retrieved nothing.
    assert run.records["q2"].retrieved == ()


def test_bad_trec_lines_are_all_reported(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    (tmp_path / "r.run").write_text(
        "q1 Q0 a 1 high x\nq1 Q0 b 2\nq1 Q0 c 3 0.1 x\nq1 Q0 c 4 0.05 x\nzz Q0 a 1 1 x\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_trec_run(tmp_path / "r.run", golden)
    assert caught.value.problems == [
        f"{tmp_path / 'r.run'}:1: score 'high' is not a number",
        f"{tmp_path / 'r.run'}:2: a run line has 6 fields, found 4",
        f"{tmp_path / 'r.run'}:4: 'c' appears twice for question 'q1'",
        f"{tmp_path / 'r.run'}:5: question 'zz' is not in the golden set",
    ]


def test_scoring_a_trec_run_against_imported_qrels(tiny: Tiny, tmp_path: Path) -> None:
    from judge.cli import main

    config = tiny()
    assert config.source is not None
    (tmp_path / "q.qrels").write_text(
        "q1 0 pricing/trial 1\nq1 0 pricing/plans 0\n", encoding="utf-8"
    )
    (tmp_path / "r.run").write_text(
        "q1 Q0 pricing/plans 1 2 x\nq1 Q0 pricing/trial 2 1 x\n", encoding="utf-8"
    )
    out = tmp_path / "r.json"
    args = [
        "--config",
        str(config.source),
        "retrieval",
        "--trec-run",
        str(tmp_path / "r.run"),
        "--trec-qrels",
        str(tmp_path / "q.qrels"),
        "--json",
        str(out),
    ]
    assert main(args) == 0
    import json

    rows = {r["type"]: r for r in json.loads(out.read_text(encoding="utf-8"))["table"]["rows"]}
    # Only q1 has qrels: its relevant chunk (grade 1) is at rank 2 -> mrr 0.5; the others
    # have no relevant chunks under these qrels: the answerable ones (q2, q3) are not labelled
    # there, the out-of-scope one (q4) stays excluded.
    assert rows["factual"]["mrr"] == 0.5 and rows["all"]["n"] == 1
    assert rows["all"]["unlabelled"] == 2 and rows["all"]["excluded"] == 1
    assert rows["procedural"]["unlabelled"] == 1 and rows["out_of_scope"]["excluded"] == 1
    (tmp_path / "bad.qrels").write_text("zz 0 a 1\n", encoding="utf-8")
    args[args.index(str(tmp_path / "q.qrels"))] = str(tmp_path / "bad.qrels")
    assert main(args) == 2


def test_trec_scores_must_be_finite_and_ids_printable(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    path = tmp_path / "r.run"
    path.write_text(
        "q1 Q0 pricing/plans 1 nan x\nq1 Q0 pricing/trial 2 inf x\nq2 Q0 backup/\x00auto 1 1 x\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_trec_run(path, golden)
    assert caught.value.problems == [
        f"{path}:1: score 'nan' is not a finite number",
        f"{path}:2: score 'inf' is not a finite number",
        f"{path}:3: chunk id 'backup/\\x00auto': contains U+0000 (a control character) at "
        "character 8; ids may not contain whitespace, control or invisible characters (they "
        "break the TREC export): see golden/README.md",
    ]
