"""Like with like: the judge and the lexical baseline on the same labels, coverage, the
trivial baselines beside kappa, and a disagreement list that stops at --limit."""

import csv
import io
import json
from pathlib import Path

import pytest

from judge.audit.agreement import as_json, audit_items, axis_stats, lexical_scores
from judge.audit.disagreements import DISAGREEMENTS_FILE, write_disagreements
from judge.audit.stats import exact_agreement
from judge.audit.types import AuditResult
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.types import ContextChunk, Verdict
from judge.report.audit_text import render_audit
from judge.results.item_record import ItemRecord

# question id → (type, human F/R, judge F/R or a non-ok status)
CASES: dict[str, tuple[str, tuple[int, int], tuple[int, int] | str]] = {
    "q0": ("a", (2, 2), (2, 2)),
    "q1": ("a", (2, 2), (2, 1)),  # gap 1
    "q2": ("a", (1, 2), (1, 2)),
    "q3": ("a", (0, 2), (2, 2)),  # gap 2
    "q4": ("a", (2, 2), (2, 2)),
    "q5": ("b", (2, 1), (0, 0)),  # gap 3
    "q6": ("b", (1, 2), (1, 2)),
    "q7": ("b", (2, 2), "parse_error"),
    "q8": ("b", (0, 0), "backend_error"),
    "q9": ("b", (2, 2), "truncated"),
}
OK = ["q0", "q1", "q2", "q3", "q4", "q5", "q6"]


def _item(qid: str, kind: str) -> ItemRecord:
    question = "=HYPERLINK(1)" if qid == "q5" else f"質問 {qid}：年額プランはいくらですか？"
    return ItemRecord(
        question_id=qid,
        type=kind,
        split="dev",
        question=question,
        answer=f"年額プランは3,800円です（{qid}）。",
        context=[
            ContextChunk(1, "pricing/plans", "プレミアムプランは月額400円、年額3,800円です。")
        ],
        retrieval={},
        labels=[],
    )


def _setup() -> tuple[dict[str, ItemRecord], dict[str, Verdict], list[HumanLabel]]:
    items, verdicts, labels = {}, {}, []
    for qid, (kind, (hf, hr), judged) in CASES.items():
        item = items[qid] = _item(qid, kind)
        if isinstance(judged, str):
            verdicts[qid] = Verdict(question_id=qid, item_key="k", status=judged)  # type: ignore[arg-type]
        else:
            verdicts[qid] = Verdict(
                question_id=qid,
                item_key="k",
                status="ok",
                faithfulness=judged[0],
                relevance=judged[1],
                evidence="年額3,800円です。",
                note="quoted",
            )
        labels.append(
            HumanLabel(
                question_id=qid,
                faithfulness=hf,
                relevance=hr,
                labeller="ana",
                answer_sha256=text_sha256(item.answer),
            )
        )
    return items, verdicts, labels


@pytest.fixture
def result() -> AuditResult:
    items, verdicts, labels = _setup()
    return audit_items("run-1", items, verdicts, labels)


def test_coverage_and_the_two_headline_figures(result: AuditResult) -> None:
    judge = result.judge
    assert (judge.n, judge.labelled) == (7, 10)
    assert judge.coverage == pytest.approx(0.7)
    assert judge.both_exact == pytest.approx(4 / 7)  # q0, q2, q4, q6 of the 7 judged ok
    assert judge.both_exact_all == pytest.approx(4 / 10)  # the 3 non-ok counted as wrong
    assert dict(judge.not_ok) == {"backend_error": 1, "parse_error": 1, "truncated": 1}


def test_the_lexical_baseline_is_scored_on_the_judges_items(result: AuditResult) -> None:
    items, _, labels = _setup()
    lexical = result.lexical
    assert lexical.n == result.judge.n == 7
    assert lexical.labelled == 10 and lexical.not_ok == ()
    human = {label.question_id: (label.faithfulness, label.relevance) for label in labels}
    scores = {qid: lexical_scores(item) for qid, item in items.items()}
    both_ok = [(1, int(human[q] == scores[q])) for q in OK]
    assert lexical.both_exact == exact_agreement(both_ok)
    # Over every label it has no non-ok: all 10 scored.
    assert lexical.both_exact_all == pytest.approx(sum(human[q] == scores[q] for q in CASES) / 10)
    for index, axis in enumerate(("faithfulness", "relevance")):
        pairs = [(human[q][index], scores[q][index]) for q in OK]
        assert lexical.per_axis[axis]["all"] == axis_stats(pairs)  # type: ignore[index]


def test_majority_class_and_balanced_accuracy_by_hand(result: AuditResult) -> None:
    f = result.judge.per_axis["faithfulness"]["all"]
    # human F on the 7: 2 2 1 0 2 2 1 → majority 2 (4 of 7); judge F: 2 2 1 2 2 0 1
    assert f.majority_class == 2 and f.majority_exact == pytest.approx(4 / 7)
    # recall: human 0 → 0/1, human 1 → 2/2, human 2 → 3/4 (q5 judged 0)
    assert f.balanced_accuracy == pytest.approx((0 + 1 + 0.75) / 3)
    assert f.exact == pytest.approx(5 / 7)
    r = result.judge.per_axis["relevance"]["all"]
    # human R: 2 2 2 2 2 1 2 → always answering 2 gets 6/7, more than the judge's 5/7
    assert r.majority_class == 2 and r.majority_exact == pytest.approx(6 / 7)
    assert r.exact == pytest.approx(5 / 7)
    assert r.balanced_accuracy == pytest.approx((0 + 5 / 6) / 2)
    # Per type: type a's relevance labels are all 2.
    ra = result.judge.per_axis["relevance"]["a"]
    assert (ra.majority_class, ra.majority_exact, ra.balanced_accuracy) == (2, 1.0, 0.8)
    # The baseline is judged against the same humans, so its majority line is the same.
    assert result.lexical.per_axis["relevance"]["all"].majority_exact == r.majority_exact


def test_no_ok_verdict_gives_dashes_not_nan() -> None:
    items, verdicts, labels = _setup()
    broken = {q: v.model_copy(update={"status": "parse_error"}) for q, v in verdicts.items()}
    result = audit_items("run-1", items, broken, labels)
    assert (result.judge.n, result.judge.labelled, result.judge.coverage) == (0, 10, 0.0)
    assert result.judge.both_exact is None and result.judge.both_exact_all == 0.0
    assert result.lexical.n == 0 and result.lexical.both_exact is None
    assert result.judge.per_axis == {"faithfulness": {}, "relevance": {}}
    json.dumps(as_json(result), allow_nan=False)
    text = render_audit(result, "lexical")
    assert "coverage: 0 of 10 labelled items judged ok (0.0%)" in text
    assert "nan" not in text.lower()
    none = audit_items("run-1", items, verdicts, [])
    assert none.judge.coverage is None and none.judge.both_exact_all is None


def test_render_shows_coverage_both_figures_and_the_trivial_baselines(
    result: AuditResult,
) -> None:
    text = render_audit(result, "qwen")
    assert "coverage: 7 of 10 labelled items judged ok (70.0%)" in text
    assert "not ok: backend_error 1, parse_error 1, truncated 1" in text
    assert "judge: both scores exact 57.1%" in text
    assert "of 7 judged; 40.0% of 10 labelled (non-ok counted as wrong)" in text
    assert "lexical baseline: both scores exact" in text
    assert "85.7% (always 2)" in text  # relevance majority line
    assert "bal. acc." in text


def test_disagreements_largest_gap_first_limited_and_written_in_full(
    result: AuditResult, tmp_path: Path
) -> None:
    assert [d.item.question_id for d in result.judge.disagreements] == ["q5", "q3", "q1"]
    path = write_disagreements(result.judge.disagreements, tmp_path)
    assert path == tmp_path / DISAGREEMENTS_FILE
    text = render_audit(result, "qwen", limit=1, full_list_path=path)
    assert "disagreements (3), largest score gap first; the first 1" in text
    assert "- q5 (b)" in text and "- q3 (a)" not in text and "- q1 (a)" not in text
    assert f"… 2 more; all 3 in {path}" in text
    for everything in (
        render_audit(result, "qwen", limit=None),
        render_audit(result, "qwen", limit=0),
    ):
        assert all(f"- {q} " in everything for q in ("q5", "q3", "q1"))
        assert "more" not in everything.split("disagreements (3)")[1]
    assert "… 1 more (--limit 0 shows all)" in render_audit(result, "qwen", limit=2)
    assert "the first" not in render_audit(result, "qwen", limit=20)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [r["question_id"] for r in rows] == ["q5", "q3", "q1"]
    assert [r["gap"] for r in rows] == ["3", "2", "1"]
    assert rows[0]["question"] == "'=HYPERLINK(1)"  # formula-safe
    assert rows[1]["human_faithfulness"] == "0" and rows[1]["judge_faithfulness"] == "2"


def test_as_json_carries_the_new_fields(result: AuditResult) -> None:
    data = json.loads(json.dumps(as_json(result), allow_nan=False))
    judge = data["judge"]
    assert (judge["n"], judge["labelled"], judge["coverage"]) == (7, 10, 0.7)
    assert judge["both_exact_all"] == pytest.approx(0.4)
    assert judge["not_ok"] == {"backend_error": 1, "parse_error": 1, "truncated": 1}
    f = judge["per_axis"]["faithfulness"]["all"]
    assert f["majority_class"] == 2 and f["majority_exact"] == pytest.approx(4 / 7)
    assert f["balanced_accuracy"] == pytest.approx(1.75 / 3)
    assert data["lexical"]["n"] == 7 and data["lexical"]["not_ok"] == {}
