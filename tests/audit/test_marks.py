"""Review marks (review.html's export) imported as human labels (judge.audit.marks): validated
whole, idempotent."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.audit.marks import import_labels_file, import_marks, is_marks_file, parse_marks
from judge.audit.types import COMMENT_MAX_CHARS
from judge.cli import main
from judge.config import Config
from judge.errors import InputError
from judge.hashing import text_sha256
from judge.inputs.golden import GoldenQuestion
from judge.inputs.labels import HumanLabel, load_labels
from judge.io.jsonl import write_jsonl
from tests.audit.test_correctness_audit import TEXTS
from tests.conftest import QUESTIONS, RUN

GOLDEN = {q["id"]: GoldenQuestion.model_validate(q) for q in QUESTIONS}
ANSWERS = {r["id"]: r["answer"] for r in RUN[1:]}
FINGERPRINT = "judge:0123456789abcdef"


def _mark(qid: str, **changes: Any) -> dict[str, Any]:
    """A corrected-score mark as review.html exports it (judge F2 R2, reviewer F1 R2)."""
    mark = {
        "question_id": qid,
        "answer_sha256": text_sha256(ANSWERS.get(qid, "")),
        "judge_fingerprint": FINGERPRINT,
        "agree": False,
        "judge_faithfulness": 2,
        "judge_relevance": 2,
        "faithfulness": 1,
        "relevance": 2,
        "comment": "",
        "marked_at": "2026-11-29T10:00:00.000Z",
    }
    return mark | changes


def _file(tmp_path: Path, marks: list[Any], name: str = "marks.json", **changes: Any) -> Path:
    payload = {
        "format": "judge-review-marks",
        "version": 1,
        "reviewer": "ana",
        "folder": "20261129T100000Z-01234567",
        "judge_fingerprint": FINGERPRINT,
        "exported_at": "2026-11-29T10:05:00.000Z",
        "marks": marks,
    } | changes
    path = tmp_path / name
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def _labels(path: Path) -> list[HumanLabel]:
    return load_labels(path, GOLDEN).current


def test_marks_become_labels_of_the_exact_answer(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    marks = [
        _mark("q1", comment="  the 2-month saving is not in the chunk  "),
        _mark("q2", faithfulness=0, relevance=1, comment="wrong order"),
        # "agree" is the judge's scores at the time of the mark.
        _mark(
            "q3", agree=True, judge_faithfulness=0, judge_relevance=1, faithfulness=0, relevance=1
        ),
    ]
    result = import_marks(_file(tmp_path, marks), labels_path, GOLDEN, None, replace=False)
    assert (result.added, result.replaced, result.unchanged) == (3, 0, 0)
    got = {label.question_id: label for label in _labels(labels_path)}
    assert {q: (lab.faithfulness, lab.relevance) for q, lab in got.items()} == {
        "q1": (1, 2),
        "q2": (0, 1),
        "q3": (0, 1),
    }
    assert {lab.labeller for lab in got.values()} == {"ana"}
    # Marked as chosen by a reviewer: corrected estimates leave such labels out.
    assert {lab.source for lab in got.values()} == {"review"}
    assert got["q1"].note == "the 2-month saving is not in the chunk"
    assert got["q1"].answer_sha256 == text_sha256(ANSWERS["q1"])
    assert got["q1"].labelled_at is not None and got["q1"].labelled_at.isoformat().startswith(
        "2026-11-29T10:00:00"
    )


def test_agree_without_scores_in_the_mark_takes_the_judges(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    mark = _mark("q1", agree=True, judge_faithfulness=1, judge_relevance=0)
    del mark["faithfulness"], mark["relevance"]
    import_marks(_file(tmp_path, [mark]), labels_path, GOLDEN, None, replace=False)
    [label] = _labels(labels_path)
    assert (label.faithfulness, label.relevance) == (1, 0)


def test_every_bad_mark_is_reported_at_once_and_nothing_is_imported(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    good = _mark("q1")
    marks = [
        good,
        _mark("q9"),  # 2: not golden
        _mark("q2", faithfulness=3),  # 3
        _mark("q3", relevance="2"),  # 4
        _mark("q4", faithfulness=2.0),  # 5
        _mark("q2", relevance=True, answer_sha256="x" * 64),  # 6: two problems
        _mark("q3", agree=True, judge_faithfulness=None, judge_relevance=None),  # 7
        _mark("q4", agree=True, faithfulness=0),  # 8: agree, yet other scores
        _mark("q3", faithfulness=None),  # 9: neither agree nor both scores
        dict(good),  # 10: the same answer twice
        _mark("q4", comment="x" * (COMMENT_MAX_CHARS + 1)),  # 11
        {k: v for k, v in _mark("q2").items() if k != "marked_at"},  # 12
        "not a mark",  # 13
    ]
    with pytest.raises(InputError) as caught:
        import_marks(_file(tmp_path, marks), labels_path, GOLDEN, None, replace=False)
    problems = caught.value.problems
    text = "\n".join(problems)
    assert "mark 1 " not in text
    expected = {
        2: ("(q9)", "question_id 'q9' is not a golden id"),
        3: ("(q2)", "faithfulness: must be 0, 1 or 2, not 3"),
        4: ("(q3)", 'relevance: must be an integer such as 2, not "2" (remove the quotes)'),
        5: ("(q4)", "faithfulness: must be an integer such as 2, not 2.0"),
        6: ("(q2)", "answer_sha256: is damaged"),
        7: ("(q3)", "'agree' but the judge gave no scores"),
        8: ("(q4)", "set agree to false or make them equal"),
        9: ("(q3)", "nothing to import"),
        10: ("(q1)", "a second mark for the same answer (mark 1); keep one"),
        11: ("(q4)", "comment"),
        12: ("(q2)", "field 'marked_at' missing"),
        13: ("(?)", "must be an object"),
    }
    for index, (where, what) in expected.items():
        lines = [p for p in problems if f"marks.json: mark {index} {where}: " in p]
        assert any(what in line for line in lines), (index, lines)
    assert any("relevance" in p for p in problems if "mark 6 " in p)
    assert problems[-1].startswith("nothing was imported")
    assert not labels_path.exists()


def test_import_is_idempotent_and_a_changed_mark_needs_replace(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    first = _file(tmp_path, [_mark("q1", comment="c"), _mark("q2")])
    assert import_marks(first, labels_path, GOLDEN, None, replace=False)[:3] == (2, 0, 0)
    before = labels_path.read_bytes()
    assert import_marks(first, labels_path, GOLDEN, None, replace=False)[:3] == (0, 0, 2)
    assert labels_path.read_bytes() == before  # nothing new: the file is not rewritten

    second = _file(tmp_path, [_mark("q1", faithfulness=2, comment="c")], name="second.json")
    with pytest.raises(InputError) as caught:
        import_marks(second, labels_path, GOLDEN, None, replace=False)
    assert "q1: ana already labelled this answer F1 R2, the file says F2 R2" in str(caught.value)
    assert "--replace" in str(caught.value)
    assert labels_path.read_bytes() == before
    assert import_marks(second, labels_path, GOLDEN, None, replace=True)[:3] == (0, 1, 0)
    scores = {lab.question_id: (lab.faithfulness, lab.relevance) for lab in _labels(labels_path)}
    assert scores == {"q1": (2, 2), "q2": (1, 2)}


def test_other_labellers_and_retired_labels_are_kept(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    bob = {
        "question_id": "q1",
        "answer_sha256": text_sha256(ANSWERS["q1"]),
        "faithfulness": 2,
        "relevance": 2,
        "labeller": "bob",
    }
    retired = bob | {"question_id": "gone"}
    write_jsonl(labels_path, [bob, retired])
    result = import_marks(_file(tmp_path, [_mark("q1")]), labels_path, GOLDEN, None, False)
    assert (result.added, result.retired) == (1, 1)
    lines = [json.loads(line) for line in labels_path.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["question_id"], r["labeller"]) for r in lines) == [
        ("gone", "bob"),
        ("q1", "ana"),
        ("q1", "bob"),
    ]


def test_the_labeller_is_the_files_reviewer_or_labeller_option(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    nameless = _file(tmp_path, [_mark("q1")], reviewer=None)
    with pytest.raises(InputError) as caught:
        import_marks(nameless, labels_path, GOLDEN, None, replace=False)
    assert caught.value.problems == [
        f"{nameless}: the file names no reviewer; pass --labeller NAME (or fill the reviewer "
        "field in review.html before exporting)"
    ]
    import_marks(nameless, labels_path, GOLDEN, "carol", replace=False)
    assert [lab.labeller for lab in _labels(labels_path)] == ["carol"]
    # The same name twice is fine; two different names are a mistake to stop at.
    named = _file(tmp_path, [_mark("q2")], name="named.json", reviewer="ana")
    import_marks(named, labels_path, GOLDEN, "ana", replace=False)
    with pytest.raises(InputError) as caught:
        import_marks(named, labels_path, GOLDEN, "bob", replace=False)
    assert "the file's reviewer is 'ana' but --labeller says 'bob'" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"format": "judge-review-marks", "marks": [', "marks.json:1: not JSON"),
        ("[1, 2]", 'not a review-marks file (its format is "list"'),
        ('{"folder": "x", "checked": []}', "not a review-marks file (its format is null"),
        ('{"format": "judge-review-marks", "version": 2, "marks": []}', "version 2 is newer"),
        ('{"format": "judge-review-marks", "version": "1", "marks": []}', "version: must be"),
        ('{"format": "judge-review-marks", "version": 1, "marks": {}}', "marks: must be a list"),
    ],
)
def test_a_file_that_is_not_a_marks_file_gets_one_line(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "marks.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_marks(path, tmp_path / "labels.jsonl", GOLDEN, "ana", replace=False)
    assert len(caught.value.problems) == 1
    assert says in caught.value.problems[0]
    assert not (tmp_path / "labels.jsonl").exists()


def test_audit_import_takes_a_marks_file_or_a_sheet_by_content(tmp_path: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    # A marks file, whatever its name says.
    marks = _file(tmp_path, [_mark("q1")], name="marks.csv")
    assert is_marks_file(marks)
    assert import_labels_file(marks, labels_path, GOLDEN, None, replace=False).added == 1
    # A filled CSV sheet (UTF-8 with BOM, as Excel saves it), even named .json.
    sheet = tmp_path / "sheet.json"
    rows = [
        "question_id,answer_sha256,faithfulness,relevance,labeller,note",
        f"q2,{text_sha256(ANSWERS['q2'])},2,1,bob,",
    ]
    sheet.write_text("\ufeff" + "\r\n".join(rows) + "\r\n", encoding="utf-8")
    assert not is_marks_file(sheet)
    assert import_labels_file(sheet, labels_path, GOLDEN, None, replace=False).added == 1
    assert sorted((lab.question_id, lab.labeller) for lab in _labels(labels_path)) == [
        ("q1", "ana"),
        ("q2", "bob"),
    ]
    # A marks file with a BOM and leading whitespace is still one.
    bom = tmp_path / "bom.json"
    bom.write_text("\ufeff\n  " + marks.read_text(encoding="utf-8"), encoding="utf-8")
    assert is_marks_file(bom)
    # Neither JSON nor a sheet, named .json: refused as a marks file, not for sheet columns.
    broken = tmp_path / "broken.json"
    broken.write_text("nope", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.json:1: not JSON"):
        import_labels_file(broken, labels_path, GOLDEN, None, replace=False)
    with pytest.raises(InputError, match="file not found"):
        import_labels_file(tmp_path / "missing.json", labels_path, GOLDEN, None, replace=False)


def test_judge_audit_import_reads_a_marks_file(
    tiny: Callable[..., Config], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The command a reviewer runs: the marks file goes through `judge audit import` like a
    # sheet, and importing it again changes nothing.
    config = tiny(extra_toml='labels = "labels.jsonl"\n')
    (tmp_path / "labels.jsonl").write_text("", encoding="utf-8")
    marks = _file(
        tmp_path, [_mark("q1", comment="not in the chunk"), _mark("q2", agree=True, faithfulness=2)]
    )
    toml = str(config.source)
    assert main(["--config", toml, "audit", "import", str(marks)]) == 0
    assert capsys.readouterr().out.strip().endswith("2 added, 0 replaced, 0 already there")
    assert main(["--config", toml, "audit", "import", str(marks)]) == 0
    assert capsys.readouterr().out.strip().endswith("0 added, 0 replaced, 2 already there")
    got = {lab.question_id: lab for lab in _labels(tmp_path / "labels.jsonl")}
    assert (got["q1"].faithfulness, got["q1"].note) == (1, "not in the chunk")
    assert (got["q2"].faithfulness, got["q2"].relevance) == (2, 2)  # "agree": the judge's


def test_review_marks_keep_a_correctness_when_present(tmp_path: Path) -> None:
    def mark(qid: str, **scores: object) -> dict[str, object]:
        return {
            "question_id": qid,
            "answer_sha256": text_sha256(TEXTS[qid][2]),
            "judge_fingerprint": "fp",
            "judge_faithfulness": 2,
            "judge_relevance": 2,
            "marked_at": "2026-12-01T00:00:00+00:00",
            **scores,
        }

    marks = {
        "format": "judge-review-marks",
        "version": 1,
        "reviewer": "ana",
        "marks": [
            mark("f1", agree=False, faithfulness=2, relevance=2, correctness=0),
            mark("f2", agree=True, judge_correctness=1),
            mark("p1", agree=True),  # a page of a run without correctness
        ],
    }
    path = tmp_path / "marks.json"
    path.write_text(json.dumps(marks, ensure_ascii=False), encoding="utf-8")
    questions = {
        qid: GoldenQuestion(id=qid, type=t, question=q, relevant_chunks=["c1"], answerable=True)
        for qid, (t, q, _, _) in TEXTS.items()
    }
    labels = parse_marks(path, questions, None)
    assert {lab.question_id: lab.correctness for lab in labels} == {
        "f1": 0,
        "f2": 1,
        "p1": None,
    }
    marks["marks"] = [mark("f1", agree=False, faithfulness=2, relevance=2, correctness=3)]
    path.write_text(json.dumps(marks), encoding="utf-8")
    with pytest.raises(InputError):
        parse_marks(path, questions, None)
