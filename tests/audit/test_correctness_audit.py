"""The correctness axis in the audit: labels may carry it, ``audit_items`` scores the judge's
correctness against the labels that do (per type, with the corrected estimate), the sheet and
the terminal ask for it where the run judged it; old labels files still read."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judge.audit.agreement import as_json, audit_items
from judge.audit.agreement import gate as audit_gate
from judge.audit.sheet import merge_labels, parse_sheet, write_sheet
from judge.audit.terminal import label_in_terminal
from judge.errors import InputError
from judge.hashing import text_sha256
from judge.inputs.golden import GoldenQuestion
from judge.inputs.labels import HumanLabel, load_labels
from judge.judging.types import ContextChunk, CorrectnessVerdict, Verdict
from judge.report.audit_text import audit_lines, render_audit
from judge.report.corrected_text import corrected_markdown_lines
from judge.results.item_record import ItemRecord

#: Japanese and English questions, two types.
TEXTS = {
    "f1": ("factual", "年額プランはいくらですか？", "年額3,800円です。", "3,800円"),
    "f2": ("factual", "How much is the annual plan?", "It is 400 yen a year.", "3,800 yen"),
    "f3": ("factual", "無料体験は何日ですか？", "7日間です。", "7日間"),
    "p1": (
        "procedural",
        "バックアップから戻す手順は？",
        "設定を開きます。",
        "設定、バックアップ、復元",
    ),
    "p2": ("procedural", "How do I restore a backup?", "Open settings.", "Settings, then restore"),
}


def _items() -> dict[str, ItemRecord]:
    return {
        qid: ItemRecord(
            question_id=qid,
            type=qtype,
            split="",
            question=question,
            answer=answer,
            reference_answer=reference,
            context=[ContextChunk(1, "c1", reference)],
            relevant_chunks=["c1"],
            retrieval={},
            labels=[],
        )
        for qid, (qtype, question, answer, reference) in TEXTS.items()
    }


def _label(qid: str, f: int = 2, r: int = 2, c: int | None = None, who: str = "ana") -> HumanLabel:
    return HumanLabel(
        question_id=qid,
        answer_sha256=text_sha256(TEXTS[qid][2]),
        faithfulness=f,
        relevance=r,
        correctness=c,
        labeller=who,
        source="sheet",
    )


def _verdicts() -> dict[str, Verdict]:
    return {
        qid: Verdict(question_id=qid, item_key=qid, status="ok", faithfulness=2, relevance=2)
        for qid in TEXTS
    }


def _correctness(scores: dict[str, int | None]) -> dict[str, CorrectnessVerdict]:
    return {
        qid: CorrectnessVerdict(
            question_id=qid,
            item_key=f"c-{qid}",
            status="ok" if score is not None else "parse_error",
            correctness=score,
        )
        for qid, score in scores.items()
    }


JUDGE_CORRECTNESS = {"f1": 2, "f2": 2, "f3": 2, "p1": 1, "p2": None}


def test_the_audit_scores_correctness_per_type_against_the_labels_that_carry_it() -> None:
    labels = [
        _label("f1", c=2),
        _label("f2", c=0),  # the judge said 2: a disagreement on correctness only
        _label("f3"),  # carries no correctness: a label of the two axes only
        _label("p1", c=1),
        _label("p2", c=2),  # the judge's correctness verdict failed: no pair
    ]
    result = audit_items(
        "run",
        _items(),
        _verdicts(),
        labels,
        ("factual", "procedural"),
        _correctness(JUDGE_CORRECTNESS),
    )
    per_axis = result.judge.per_axis
    assert list(per_axis) == ["faithfulness", "relevance", "correctness"]
    correctness = per_axis["correctness"]
    assert correctness["factual"].n == 2  # f1 and f2 (f3's label carries none)
    assert correctness["factual"].exact == 0.5
    assert correctness["procedural"].n == 1 and correctness["procedural"].exact == 1.0
    assert correctness["all"].n == 3
    # confusion rows human, columns judge: f1 (2, 2), f2 (0, 2), p1 (1, 1)
    assert correctness["all"].confusion == [[0, 0, 1], [0, 1, 0], [0, 0, 1]]
    assert correctness["all"].majority_exact == pytest.approx(1 / 3)
    # The two axes are as they were: every label counts there.
    assert per_axis["faithfulness"]["all"].n == 5
    assert result.judge.both_exact == 1.0
    # The lexical baseline has no correctness counterpart (yet): two axes.
    assert list(result.lexical.per_axis) == ["faithfulness", "relevance"]
    # The corrected estimate: over the items asked, from the labels that carry it.
    cells = result.corrected["correctness"]
    assert cells["factual"].judged == 3 and cells["factual"].labelled == 2
    assert cells["procedural"].judged == 1 and cells["procedural"].unused_labels == 1
    assert result.corrected["faithfulness"]["factual"].labelled == 3
    assert result.pooled is not None and "correctness" in result.pooled
    data = as_json(result)
    assert data["judge"]["per_axis"]["correctness"]["all"]["n"] == 3
    assert "correctness" in data["corrected"]["per_axis"]
    json.dumps(data)  # report.json can hold it


def test_the_audit_is_unchanged_without_correctness() -> None:
    labels = [_label("f1", c=2), _label("p1", c=1)]
    off = audit_items("run", _items(), _verdicts(), labels, ("factual",))
    assert list(off.judge.per_axis) == ["faithfulness", "relevance"]
    assert list(off.corrected) == ["faithfulness", "relevance"]
    assert list(off.humans) == ["faithfulness", "relevance"]
    text = render_audit(off, "fake · fake-1")
    assert "correctness" not in text
    # On, but no label carries correctness: nothing to score, so no axis either.
    plain = [_label("f1"), _label("p1")]
    none = audit_items("run", _items(), _verdicts(), plain, (), _correctness(JUDGE_CORRECTNESS))
    assert list(none.judge.per_axis) == ["faithfulness", "relevance"]


def test_the_audit_prints_correctness_as_a_third_axis() -> None:
    labels = [_label("f1", c=2), _label("f2", c=0), _label("p1", c=1)]
    result = audit_items(
        "run",
        _items(),
        _verdicts(),
        labels,
        ("factual", "procedural"),
        _correctness(JUDGE_CORRECTNESS),
    )
    text = render_audit(result, "fake · fake-1")
    assert "  correctness (against the reference answer; the labels that carry it)" in text
    assert "humans among themselves, correctness" in text
    md = "\n".join(audit_lines(result))
    assert "Correctness (against the reference answer), over the 3 labels" in md
    table = corrected_markdown_lines(result)
    header = next(line for line in table if line.startswith("| type"))
    assert "correctness: corrected" in header
    row = next(line for line in table if line.startswith("| factual"))
    assert row.count("|") == header.count("|")
    # The audit gate holds correctness to the bar too, where it is audited.
    assert any(f.startswith("correctness kappa") for f in audit_gate(result, 0.99, None))


def test_labels_with_and_without_correctness_read(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    old = _label("f1").model_dump(mode="json", exclude_none=True)
    assert "correctness" not in old  # what a labels file written before the axis holds
    new = _label("p1", c=1).model_dump(mode="json", exclude_none=True)
    path.write_text(
        "\n".join(json.dumps(x, ensure_ascii=False) for x in (old, new)) + "\n", encoding="utf-8"
    )
    questions = {
        qid: GoldenQuestion(id=qid, type=t, question=q, relevant_chunks=["c1"], answerable=True)
        for qid, (t, q, _, _) in TEXTS.items()
    }
    labels = load_labels(path, questions).current
    assert [(lab.question_id, lab.correctness) for lab in labels] == [("f1", None), ("p1", 1)]
    for bad in ('"2"', "2.0", "3", "true"):
        line = dict(new, correctness="PLACEHOLDER")
        text = json.dumps(line).replace('"PLACEHOLDER"', bad)
        path.write_text(text + "\n", encoding="utf-8")
        with pytest.raises(InputError):
            load_labels(path, questions)


def test_the_sheet_has_a_correctness_column_where_the_run_judged_it(tmp_path: Path) -> None:
    items = list(_items().values())
    plain = tmp_path / "plain.csv"
    write_sheet(plain, items)
    assert "correctness" not in plain.read_text(encoding="utf-8-sig").splitlines()[0]
    sheet = tmp_path / "sheet.csv"
    write_sheet(sheet, items, {"f1", "f2", "p1"})
    rows = list(csv.DictReader(sheet.read_text(encoding="utf-8-sig").splitlines(True)))
    header = list(rows[0])
    assert header.index("relevance") + 1 == header.index("correctness")
    assert "reference_answer" in header
    by_id = {row["question_id"]: row for row in rows}
    assert by_id["f1"]["reference_answer"] == "3,800円"
    assert by_id["p2"]["reference_answer"].startswith("(no reference answer")
    assert all(row["correctness"] == "" for row in rows)  # blind and empty
    # Filled: f1 with correctness, p2 without it, f2 with a bad value reported.
    for row in rows:
        row["labeller"] = "ana"
        row["faithfulness"] = row["relevance"] = "2"
    by_id["f1"]["correctness"] = "0"
    by_id["f2"]["correctness"] = "3"
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(rows)
    questions = {
        qid: GoldenQuestion(id=qid, type=t, question=q, relevant_chunks=["c1"], answerable=True)
        for qid, (t, q, _, _) in TEXTS.items()
    }
    with pytest.raises(InputError) as error:
        parse_sheet(sheet, questions, None)
    assert "correctness must be 0, 1 or 2 (or empty), got '3'" in str(error.value)
    by_id["f2"]["correctness"] = ""
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(rows)
    labels, blank = parse_sheet(sheet, questions, None)
    assert blank == 0
    assert {lab.question_id: lab.correctness for lab in labels} == {
        "f1": 0,
        "f2": None,
        "f3": None,
        "p1": None,
        "p2": None,
    }


def test_adding_correctness_to_an_earlier_label_is_an_update_not_a_conflict() -> None:
    before = _label("f1")
    merged, result, conflicts = merge_labels([before], [_label("f1", c=1)], replace=False)
    assert not conflicts and result.replaced == 1 and merged[0].correctness == 1
    # The same label again: already there; a different correctness: a conflict.
    _, again, _ = merge_labels(merged, [_label("f1", c=1)], replace=False)
    assert again.unchanged == 1
    _, _, conflicts = merge_labels(merged, [_label("f1", c=2)], replace=False)
    assert conflicts and "F2 R2 C1" in conflicts[0] and "F2 R2 C2" in conflicts[0]


def test_the_terminal_asks_for_correctness_where_the_run_judged_it(tmp_path: Path) -> None:
    items = [_items()["f1"], _items()["f2"]]
    path = tmp_path / "labels.jsonl"
    path.write_text("", encoding="utf-8")
    questions = {
        qid: GoldenQuestion(id=qid, type=t, question=q, relevant_chunks=["c1"], answerable=True)
        for qid, (t, q, _, _) in TEXTS.items()
    }
    replies = iter(["2", "2", "1", "", "2", "1", ""])  # f1: F R C note; f2: F R note
    shown: list[str] = []
    saved = label_in_terminal(
        items, path, questions, "bo", lambda _: next(replies), shown.append, correctness={"f1"}
    )
    assert saved == 2
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(x["question_id"], x.get("correctness")) for x in lines] == [("f1", 1), ("f2", None)]
    assert any(s.startswith("reference answer: 3,800円") for s in shown)
