"""The statistics of the judge's chunk grades (judge.results.chunk_grades): hand-computed values,
Japanese and English ids, ungraded chunks, unlabelled and unanswerable questions, k deeper than
the grades, the cluster bootstrap and the missing-labels CSV (the agreement with the golden
labels and the corrected recall: tests/audit/test_chunk_agreement.py)."""

from __future__ import annotations

import csv
import io
import math

import pytest

from judge.audit.stats import bootstrap_ci, cluster_bootstrap_ci, exact_agreement
from judge.formatting import from_spreadsheet_text
from judge.inputs.golden import GoldenQuestion
from judge.results.chunk_grades import (
    EXCLUDED,
    GRADED,
    MISSING_LABELS_COLUMNS,
    NO_JUDGED_RELEVANT,
    RELEVANT_GRADE,
    UNGRADED_CHUNK,
    GradedChunk,
    MissingLabel,
    judged_metric_names,
    judged_tables,
    judged_values,
    missing_labels,
    missing_labels_csv,
)
from tests.results.helpers import TYPES, pool, question


def log2(x: float) -> float:
    return math.log2(x)


# --- judged values ----------------------------------------------------------------------------


def test_the_relevant_grade_is_two() -> None:
    assert RELEVANT_GRADE == 2


def test_judged_values_by_hand() -> None:
    q = question("q-en-1", ("doc/a",))
    graded = pool("q-en-1", [("doc/b", 1), ("doc/a", 3), ("doc/c", 2), ("doc/d", 0), ("doc/e", 0)])
    values = judged_values(q, graded, [3, 1, 10])
    # J = {a, c} (grade >= 2), at ranks 2 and 3; depth 5, so k = 10 is not reported.
    assert list(values) == [
        "judged_precision@3",
        "judged_precision@1",
        "judged_recall@3",
        "judged_hit@3",
        "judged_mrr",
        "judged_ndcg@3",
        "judged_recall@1",
        "judged_hit@1",
        "judged_ndcg@1",
    ]
    assert values["judged_recall@3"] == 1.0  # 2 of 2
    assert values["judged_precision@3"] == pytest.approx(2 / 3)
    assert values["judged_precision@1"] == 0.0
    assert values["judged_hit@3"] == 1.0
    assert values["judged_mrr"] == 0.5  # first judged-relevant at rank 2
    assert values["judged_recall@1"] == 0.0
    assert values["judged_hit@1"] == 0.0
    # gains 1, 3, 2, 0, 0; ideal 3, 2, 1, 0, 0.
    dcg3 = 1 / log2(2) + 3 / log2(3) + 2 / log2(4)
    ideal3 = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)
    assert values["judged_ndcg@3"] == pytest.approx(dcg3 / ideal3)  # 0.8175
    assert values["judged_ndcg@3"] == pytest.approx(0.81749, abs=1e-5)
    assert values["judged_ndcg@1"] == pytest.approx(1 / 3)


def test_judged_values_ignore_the_human_labels() -> None:
    # The same grades with other (or no) labels give the same judged values.
    graded = pool("q", [("x", 2), ("y", 0)])
    a = judged_values(question("q", ("y",)), graded, [1, 2])
    b = judged_values(question("q", None), graded, [1, 2])
    assert a == b
    assert a["judged_recall@1"] == 1.0
    assert a["judged_ndcg@2"] == 1.0  # the ideal ranking


def test_judged_values_with_japanese_ids() -> None:
    q = question("質問-1", None, text="有給休暇は何日ですか？")
    graded = pool("質問-1", [("規程/第3条", 0), ("規程/第5条", 3), ("規程/付則", 2)])
    values = judged_values(q, graded, [1, 2])
    # J = {第5条, 付則}, ranks 2 and 3.
    assert values["judged_recall@2"] == 0.5
    assert values["judged_hit@1"] == 0.0
    assert values["judged_mrr"] == 0.5
    # gains 0, 3, 2 against the ideal 3, 2, 0 at k = 2.
    assert values["judged_ndcg@2"] == pytest.approx((3 / log2(3)) / (3 + 2 / log2(3)))


def test_no_judged_relevant_chunk_leaves_recall_and_ndcg_undefined() -> None:
    q = question("q", ("a",))
    values = judged_values(q, pool("q", [("a", 1), ("b", 0), ("c", 1)]), [1, 3])
    # Precision, hit and MRR are 0 (that is what they mean); recall and nDCG are 0/0: absent,
    # never 0. (Recall@3 at the pool's own depth is never reported: 1 by construction.)
    assert values == {
        "judged_precision@1": 0.0,
        "judged_precision@3": 0.0,
        "judged_hit@1": 0.0,
        "judged_mrr": 0.0,
        "judged_hit@3": 0.0,
    }


def test_an_ungraded_chunk_leaves_every_value_absent() -> None:
    q = question("q", None)
    assert judged_values(q, pool("q", [("a", 3), ("b", None)]), [1, 2]) == {}


def test_k_above_the_depth_is_not_reported() -> None:
    q = question("q", None)
    graded = pool("q", [("a", 0), ("b", 2), ("c", 3)])
    values = judged_values(q, graded, [5, 2])
    assert "judged_recall@5" not in values and "judged_ndcg@5" not in values
    assert values["judged_recall@2"] == 0.5
    # A pool shorter than the grading depth (the run retrieved 3 of 5): k = 5 is reported.
    deep = judged_values(q, graded, [5, 2], depth=5)
    # Recall at the grading depth is 1 by construction: not reported; precision counts the
    # chunks the run did not retrieve as not relevant (trec_eval's P@k).
    assert "judged_recall@5" not in deep
    assert deep["judged_precision@5"] == pytest.approx(2 / 5)
    assert deep["judged_ndcg@5"] == pytest.approx((2 / log2(3) + 3 / log2(4)) / (3 + 2 / log2(3)))
    # Only k deeper than the pool: MRR alone.
    assert judged_values(q, graded, [10]) == {"judged_mrr": 0.5}


def test_judged_names_never_collide_with_the_human_ones() -> None:
    names = judged_metric_names([5, 1, 10])
    assert all(name.startswith("judged_") for name in names)
    assert names[:4] == [
        "judged_precision@5",
        "judged_precision@1",
        "judged_precision@10",
        "judged_recall@5",
    ]
    # At the grading depth recall is 1 by construction: left out.
    assert judged_metric_names([5, 10], depth=5) == [
        "judged_precision@5",
        "judged_hit@5",
        "judged_mrr",
        "judged_ndcg@5",
    ]
    assert judged_metric_names([5], depth=3) == ["judged_mrr"]


def test_a_pool_with_a_hole_or_a_repeat_is_refused() -> None:
    q = question("q", None)
    with pytest.raises(ValueError, match=r"not 1\.\.n"):
        judged_values(q, [GradedChunk("q", "a", 1, 2, ""), GradedChunk("q", "b", 3, 2, "")], [1])
    with pytest.raises(ValueError, match="graded twice"):
        judged_values(q, [GradedChunk("q", "a", 1, 2, ""), GradedChunk("q", "a", 2, 2, "")], [1])
    with pytest.raises(ValueError, match="other questions"):
        judged_values(q, [GradedChunk("p", "a", 1, 2, "")], [1])
    with pytest.raises(ValueError, match="grade 4"):
        judged_values(q, [GradedChunk("q", "a", 1, 4, "")], [1])
    with pytest.raises(ValueError, match="deeper than depth"):
        judged_values(q, pool("q", [("a", 1), ("b", 2)]), [1], depth=1)


# --- tables -----------------------------------------------------------------------------------


def _set() -> tuple[list[GoldenQuestion], list[GradedChunk]]:
    questions = [
        question("f1", ("a",)),  # labelled
        question("f2", None),  # unlabelled
        question("質問-3", None, "procedural"),  # unlabelled, nothing judged relevant
        question("p4", None, "procedural"),  # unlabelled, an ungraded chunk
        question("o5", (), "out_of_scope"),
        question("n6", ("z",), "negative"),  # no graded chunk (not answered)
    ]
    graded = [
        *pool("f1", [("a", 3), ("b", 0)]),  # recall@1 1, recall@2 1
        *pool("f2", [("c", 0), ("d", 2)]),  # recall@1 0, recall@2 1, mrr 1/2
        *pool("質問-3", [("規程/1", 1), ("規程/2", 0)]),
        *pool("p4", [("e", 3), ("f", None)]),
        *pool("o5", [("g", 2), ("h", 0)]),
    ]
    return questions, graded


def test_judged_tables_per_type() -> None:
    questions, graded = _set()
    tables = judged_tables(questions, graded, [1, 2, 5], TYPES)
    every = tables.every
    assert every.primary == "judged_precision@1"
    # depth 2: k = 5 not reported, nor recall@2 (1 by construction)
    assert every.metrics == judged_metric_names([1, 2], depth=2)
    assert "judged_recall@2" not in every.metrics
    assert every.count_columns == ["n", GRADED, NO_JUDGED_RELEVANT, UNGRADED_CHUNK, EXCLUDED]
    rows = {row["type"]: row for row in every.rows}
    assert list(rows) == [*TYPES, "all"]
    assert rows["factual"] | {} == {
        "type": "factual",
        "n": 2,
        GRADED: 2,
        NO_JUDGED_RELEVANT: 0,
        UNGRADED_CHUNK: 0,
        EXCLUDED: 0,
        "judged_precision@1": 0.5,  # (1 + 0) / 2
        "judged_precision@2": 0.5,  # (1/2 + 1/2) / 2
        "judged_recall@1": 0.5,  # (1 + 0) / 2
        "judged_hit@1": 0.5,
        "judged_mrr": 0.75,  # (1 + 1/2) / 2
        "judged_ndcg@1": 0.5,
        "judged_hit@2": 1.0,
        "judged_ndcg@2": pytest.approx((1 + (2 / log2(3)) / 2) / 2, abs=1e-6),  # f2: 2/log2(3) of 2
    }
    # procedural: 質問-3 has precision, hit and MRR 0 but no recall; p4 has nothing.
    assert rows["procedural"]["n"] == 1
    assert rows["procedural"]["judged_precision@1"] == 0.0
    assert rows["procedural"][GRADED] == 2
    assert rows["procedural"][NO_JUDGED_RELEVANT] == 1
    assert rows["procedural"][UNGRADED_CHUNK] == 1
    assert rows["procedural"]["judged_recall@1"] is None
    assert rows["procedural"]["judged_hit@1"] == 0.0
    assert rows["procedural"]["judged_mrr"] == 0.0
    # Out of scope: excluded, its grade-2 chunk is no hit.
    assert rows["out_of_scope"][GRADED] == 0 and rows["out_of_scope"][EXCLUDED] == 1
    assert rows["out_of_scope"]["judged_hit@1"] is None
    assert rows["negative"][GRADED] == 0
    assert rows["all"]["n"] == 3 and rows["all"][GRADED] == 4
    assert rows["all"]["judged_mrr"] == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-6)
    assert every.weakest == "procedural"  # judged precision@1 0 against factual's 0.5

    unlabelled = {row["type"]: row for row in tables.unlabelled.rows}
    assert tables.unlabelled.count_columns == ["n", GRADED, NO_JUDGED_RELEVANT, UNGRADED_CHUNK]
    assert unlabelled["factual"]["n"] == 1  # f2 only
    assert unlabelled["factual"]["judged_recall@1"] == 0.0
    assert unlabelled["factual"]["judged_mrr"] == 0.5
    assert unlabelled["all"][GRADED] == 3
    assert unlabelled["procedural"][UNGRADED_CHUNK] == 1


def test_judged_tables_with_the_grading_depth_given() -> None:
    questions, graded = _set()
    tables = judged_tables(questions, graded, [5, 1], TYPES, depth=5)
    assert tables.every.primary == "judged_precision@5"
    assert "judged_recall@5" not in tables.every.metrics  # 1 by construction at the depth
    # f1 and f2 each have one judged-relevant chunk among 2 retrieved: 1/5 at k = 5.
    assert tables.every.frame.loc["factual", "judged_precision@5"] == pytest.approx(0.2)


def test_a_graded_chunk_of_an_unknown_question_is_refused() -> None:
    questions, graded = _set()
    with pytest.raises(ValueError, match="not in the set"):
        judged_tables(questions, [*graded, GradedChunk("x", "a", 1, 2, "")], [1], TYPES)


# --- missing labels ---------------------------------------------------------------------------


def test_missing_labels_of_labelled_questions_in_question_then_rank_order() -> None:
    questions = [
        question("q1", ("a",)),
        question("質問-2", ("規程/1",), "procedural"),
        question("q3", None),
        question("o4", (), "out_of_scope"),
    ]
    graded = [
        *reversed(pool("質問-2", [("規程/1", 3), ("規程/2", 2), ("規程/3", 3), ("規程/4", None)])),
        *pool("q1", [("a", 3), ("b", 1), ("c", 2)]),
        *pool("q3", [("d", 3)]),  # unlabelled: no labels to miss
        *pool("o4", [("e", 0), ("f", 3)]),
    ]
    rows = missing_labels(questions, graded)
    assert [(r.question_id, r.chunk_id, r.rank, r.grade) for r in rows] == [
        ("q1", "c", 3, 2),
        ("質問-2", "規程/2", 2, 2),
        ("質問-2", "規程/3", 3, 3),
        ("o4", "f", 2, 3),
    ]
    assert [r.unanswerable for r in rows] == [False, False, False, True]
    assert rows[1].type == "procedural" and rows[1].reason == "why 規程/2"
    assert rows[0].model_dump() == {
        "question_id": "q1",
        "type": "factual",
        "chunk_id": "c",
        "rank": 3,
        "grade": 2,
        "reason": "why c",
        "unanswerable": False,
    }


def test_a_missing_label_is_a_strict_frozen_record() -> None:
    row = MissingLabel(
        question_id="q", type="t", chunk_id="c", rank=1, grade=2, reason="", unanswerable=False
    )
    with pytest.raises(ValueError):
        MissingLabel.model_validate({**row.model_dump(), "extra": 1})
    with pytest.raises(ValueError):
        row.rank = 2  # type: ignore[misc]
    assert MissingLabel.model_validate_json(row.model_dump_json()) == row


def test_missing_labels_csv_header_and_quoting() -> None:
    rows = [
        MissingLabel(
            question_id="q1",
            type="factual",
            chunk_id="doc/a",
            rank=3,
            grade=2,
            reason='says "30 days", then\nmore',
            unanswerable=False,
        ),
        MissingLabel(
            question_id="質問-2",
            type="procedural",
            chunk_id="規程/第5条",
            rank=1,
            grade=3,
            reason='=HYPERLINK("x")',
            unanswerable=False,
        ),
    ]
    text = missing_labels_csv(
        rows,
        {"q1": "How many days, exactly?", "質問-2": "有給休暇は何日？"},
        {"doc/a": 'Line one,\r\nline "two"', "規程/第5条": "年20日。"},
    )
    assert text.startswith("\ufeff")
    assert text[1:].splitlines()[0] == (
        "question_id,type,chunk_id,rank,grade,reason,question,chunk_text,confirmed"
    )
    assert ",".join(MISSING_LABELS_COLUMNS) == text[1:].splitlines()[0]
    assert '"says ""30 days"", then\nmore"' in text
    assert '"How many days, exactly?"' in text
    read = list(csv.reader(io.StringIO(text[1:], newline="")))
    assert len(read) == 3
    assert read[1] == [
        "q1",
        "factual",
        "doc/a",
        "3",
        "2",
        'says "30 days", then\nmore',
        "How many days, exactly?",
        'Line one,\r\nline "two"',
        "",
    ]
    # A formula-like reason is quoted for spreadsheets and comes back whole.
    assert read[2][5] == '\'=HYPERLINK("x")'
    assert [from_spreadsheet_text(cell) for cell in read[2]] == [
        "質問-2",
        "procedural",
        "規程/第5条",
        "1",
        "3",
        '=HYPERLINK("x")',
        "有給休暇は何日？",
        "年20日。",
        "",
    ]


def test_missing_labels_csv_with_no_rows_or_text() -> None:
    assert missing_labels_csv([], {}, {}) == "\ufeff" + ",".join(MISSING_LABELS_COLUMNS) + "\r\n"
    row = MissingLabel(
        question_id="q", type="t", chunk_id="c", rank=1, grade=2, reason="r", unanswerable=True
    )
    assert missing_labels_csv([row], {}, {}).splitlines()[1] == "q,t,c,1,2,r,,,"


# --- the cluster bootstrap --------------------------------------------------------------------


def test_the_cluster_bootstrap_of_single_item_clusters_is_the_item_bootstrap() -> None:
    pairs = [(1, 1), (0, 0), (1, 0), (0, 0), (1, 1), (0, 1), (1, 1), (0, 0)]
    for seed in (0, 7):
        assert cluster_bootstrap_ci([[p] for p in pairs], exact_agreement, seed=seed) == (
            bootstrap_ci(pairs, exact_agreement, seed=seed)
        )


def test_the_cluster_bootstrap_is_seeded_and_wider_on_clustered_data() -> None:
    # 20 questions of 5 chunks each; a question's chunks all agree or all disagree.
    clusters = [[(1, 1)] * 5 if i % 3 else [(1, 0)] * 5 for i in range(20)]
    first = cluster_bootstrap_ci(clusters, exact_agreement, seed=3)
    assert first == cluster_bootstrap_ci(clusters, exact_agreement, seed=3)
    flat = [p for c in clusters for p in c]
    chunks = bootstrap_ci(flat, exact_agreement, seed=3)
    assert first is not None and chunks is not None
    assert first.low <= 13 / 20 <= first.high
    # Resampling chunks pretends to 100 independent items where there are 20.
    assert first.high - first.low > 1.8 * (chunks.high - chunks.low)


def test_the_cluster_bootstrap_depends_on_its_seed() -> None:
    clusters = [[(i % 2, (i * 7) % 3 % 2)] * (1 + i % 4) for i in range(30)]
    intervals = {cluster_bootstrap_ci(clusters, exact_agreement, seed=s) for s in range(5)}
    assert len(intervals) > 1


def test_the_cluster_bootstrap_is_undefined_on_too_little() -> None:
    assert cluster_bootstrap_ci([[(1, 1), (0, 0)]], exact_agreement) is None
    assert cluster_bootstrap_ci([[], []], exact_agreement) is None  # never a value
