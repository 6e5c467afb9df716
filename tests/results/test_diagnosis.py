"""The diagnosis of each answer (``judge.results.diagnosis``): the rule, refusals in Japanese
and English, the per-type sentence, and the views on the shipped sample."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from judge.config import Config, load_config
from judge.judging.backends.lexical import LexicalBackend, judge_lexically
from judge.judging.types import ContextChunk, EvidenceMatch, Verdict
from judge.pipeline.evaluate import evaluate
from judge.record.model import Record
from judge.record.store import read_record
from judge.report.summary import console_summary, diagnosis_line
from judge.results.diagnosis import DIAGNOSES, Diagnosis, diagnose, summarise
from judge.results.item_record import ItemRecord
from judge.textnorm import REFUSAL_MARKERS, is_refusal
from tests.conftest import REPO
from tests.fakes import ScriptedBackend, good_reply

#: The hand-labelled diagnoses of both samples (docs/reports.md, bench/diagnosis_truth.py).
TRUTH = REPO / "tests" / "data" / "diagnosis-truth.csv"


def _item(answer: str = "年額3,800円です。", **changes: Any) -> ItemRecord:
    fields: dict[str, Any] = {
        "question_id": "q1",
        "type": "factual",
        "split": "",
        "question": "年額プランはいくらですか？",
        "answer": answer,
        "context": [
            ContextChunk(1, "pricing/plans", "プレミアムプランは月額400円、年額3,800円です。"),
            ContextChunk(2, "pricing/trial", "初回のみ7日間の無料体験があります。"),
        ],
        "relevant_chunks": ["pricing/plans"],
        "retrieval": {},
        "labels": [],
    }
    return ItemRecord(**(fields | changes))


def _verdict(faithfulness: int | None = 2, relevance: int | None = 2, **changes: Any) -> Verdict:
    fields: dict[str, Any] = {
        "question_id": "q1",
        "item_key": "k",
        "status": "ok",
        "faithfulness": faithfulness,
        "relevance": relevance,
        "match": EvidenceMatch(kind="exact", chunk_id="pricing/plans", start=0, end=5, coverage=1),
    }
    return Verdict(**(fields | changes))


NOT_IN_CONTEXT = {"relevant_chunks": ["pricing/yearly"]}
REFUSAL_JA = "申し訳ありません。ご質問の内容はヘルプに記載がなく、お答えできません。"
REFUSAL_EN = "Sorry, the manual does not cover this. Please contact support."


# --- the rule, each diagnosis -----------------------------------------------------------------


def test_each_diagnosis_by_the_rule() -> None:
    def d(item: ItemRecord | None, verdict: Verdict | None, oos: bool = False) -> Diagnosis:
        return diagnose(item, verdict, out_of_scope=oos)

    # not judged: no answer, no verdict, or a verdict that is not ok.
    assert d(None, None) == "not judged"
    assert d(_item(), None) == "not judged"
    assert d(_item(), _verdict(None, None, status="parse_error", error="x")) == "not judged"
    # Out of scope: a refusal is right, an answer is not (whatever the judge scored).
    assert d(_item(REFUSAL_JA, relevant_chunks=None), _verdict(2, 0), oos=True) == "ok"
    assert d(_item(relevant_chunks=None), _verdict(2, 2), oos=True) == "answered out of scope"
    # Answerable: a refusal with the relevant chunk in context is an over-refusal, even at 2/2.
    assert d(_item(REFUSAL_JA), _verdict(2, 0)) == "over-refusal"
    assert d(_item(REFUSAL_EN), _verdict(2, 2)) == "over-refusal"
    assert d(_item(), _verdict(2, 2)) == "ok"
    # Below full marks: which layer.
    assert d(_item(relevant_chunks=None), _verdict(0, 2)) == "unknown retrieval"
    assert d(_item(relevant_chunks=[]), _verdict(0, 2)) == "unknown retrieval"
    assert d(_item(**NOT_IN_CONTEXT), _verdict(0, 2)) == "retrieval miss"
    assert d(_item(), _verdict(1, 2)) == "generation"
    assert d(_item(), _verdict(2, 1)) == "generation"
    # The relevant chunk at rank 2 is in context too; a refusal without it is no over-refusal.
    assert d(_item(relevant_chunks=["pricing/trial"]), _verdict(0, 2)) == "generation"
    assert d(_item(REFUSAL_JA, **NOT_IN_CONTEXT), _verdict(2, 0)) == "retrieval miss"
    assert d(_item(REFUSAL_JA, **NOT_IN_CONTEXT), _verdict(2, 2)) == "ok"


def test_refusals_are_recognised_in_japanese_and_english_as_the_lexical_judge_does() -> None:
    for text in (
        REFUSAL_JA,
        "その点はヘルプに記載されていません。",
        "分かりません。",
        "確認 できません",  # a space inside the phrase
        REFUSAL_EN,
        "I DON'T KNOW.",
        "I don’t know.",  # a curly apostrophe
        "Sorry, I couldn't find that in the documents.",
    ):
        assert is_refusal(text), text
    for text in ("年額3,800円です。", "The yearly plan costs 3,800 yen.", "Tap Restore."):
        assert not is_refusal(text), text
    # One home: the lexical judge uses the same list and the same test.
    assert LexicalBackend().refusal_phrases == REFUSAL_MARKERS
    # A project's own phrases replace the list, for the diagnosis as for the judge.
    mine = ("outside what the docs say",)
    assert not is_refusal(REFUSAL_EN, mine)
    item = _item("That is outside what the docs say.", relevant_chunks=None)
    assert diagnose(item, _verdict(), out_of_scope=True, refusal_phrases=mine) == "ok"
    assert diagnose(item, _verdict(), out_of_scope=True) == "answered out of scope"


def test_an_answer_saying_what_the_product_does_not_cover_is_no_over_refusal() -> None:
    """Issue 33: "does not cover" in an answer about the product is no refusal, for the
    diagnosis and for the lexical judge's relevance alike."""
    surcharge = "E-bikes cost a surcharge of 1 euro per ride on every pass, the Day Pass too."
    answer = "No. The Day Pass does not cover the e-bike surcharge; it is charged per ride."
    item = _item(
        answer,
        question="Does the Day Pass cover the e-bike surcharge?",
        context=[ContextChunk(1, "passes/e-bike", surcharge)],
        relevant_chunks=["passes/e-bike"],
    )
    quoted = EvidenceMatch(kind="exact", chunk_id="passes/e-bike", start=0, end=5, coverage=1)
    assert diagnose(item, _verdict(2, 2, match=quoted), out_of_scope=False) == "ok"
    assert diagnose(item, _verdict(2, 1, match=quoted), out_of_scope=False) == "generation"
    payload = judge_lexically(item.question, [surcharge], answer)
    assert payload["relevance"] == 2
    # The same phrase where a refusal stands is one.
    refusal = item.model_copy(update={"answer": "Sorry, the help centre does not cover this."})
    assert diagnose(refusal, _verdict(2, 0), out_of_scope=False) == "over-refusal"


def test_what_the_harness_knows_decides_whatever_the_judge_says() -> None:
    """Issue 33: an answer given without its chunk is a retrieval miss even at 2/2; an answer
    whose evidence comes from another chunk while its golden chunk was in context is the
    generator's failure even at 2/2 (the review queue's "not a golden chunk")."""
    foreign = EvidenceMatch(kind="exact", chunk_id="pricing/trial", start=0, end=5, coverage=1)
    assert diagnose(_item(), _verdict(2, 2, match=foreign), out_of_scope=False) == "generation"
    assert diagnose(_item(**NOT_IN_CONTEXT), _verdict(2, 2), out_of_scope=False) == (
        "retrieval miss"
    )
    # A refusal keeps its rule (right with what it had), an unlabelled question its scores,
    # and a quote from the golden chunk leaves the scores to decide.
    assert diagnose(_item(REFUSAL_EN, **NOT_IN_CONTEXT), _verdict(2, 2), out_of_scope=False) == "ok"
    unlabelled = _item(relevant_chunks=None)
    assert diagnose(unlabelled, _verdict(2, 2, match=foreign), out_of_scope=False) == "ok"
    assert diagnose(_item(), _verdict(2, 2), out_of_scope=False) == "ok"


def test_a_judge_that_passes_everything_does_not_hide_the_samples_hallucinated_misses(
    tmp_path: Path,
) -> None:
    """``make judge`` with a judge that scores every answer 2/2 (the embedded 270M nearly
    does): golden/README.md lists q14 and q22 as hallucinated answers without their chunk, so
    factual is not "nothing to fix"."""
    config = load_config(REPO / "judge.toml").with_overrides(
        judge={"cache_path": tmp_path / "cache.sqlite3"}, reports={"dir": tmp_path / "reports"}
    )
    result = evaluate(config, backend=ScriptedBackend(good_reply), progress=False)
    by_id = {row.question_id: row.diagnosis for row in result.report.questions}
    assert [q for q, d in by_id.items() if d == "retrieval miss"] == ["q14", "q22"]
    (line,) = [
        line
        for line in console_summary(result.report, result.folder.path)
        if "where it went wrong" in line
    ]
    assert "factual nothing to fix" not in line
    assert "factual 2 retrieval miss" in line


def _truth() -> dict[str, dict[str, str]]:
    with TRUTH.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        assert row["truth"] in DIAGNOSES and row["why"], row
        assert row["question_id"] not in out.get(row["sample"], {}), row
        out.setdefault(row["sample"], {})[row["question_id"]] = row["truth"]
    return out


def test_the_truth_file_labels_every_question_of_both_samples_once() -> None:
    truth = _truth()
    for sample in ("sample", "sample-en"):
        questions = (REPO / "golden" / sample / "questions.jsonl").read_text(encoding="utf-8")
        ids = [json.loads(line)["id"] for line in questions.splitlines() if line.strip()]
        assert sorted(truth[sample]) == sorted(ids)


def test_the_diagnosis_agrees_with_the_hand_labels_as_docs_reports_says(
    sample_run: tuple[Record, Config, Path],
) -> None:
    """docs/reports.md's "after" figure for the lexical judge on the Japanese sample."""
    record, _, _ = sample_run
    truth = _truth()["sample"]
    agree = sum(1 for row in record.questions if truth[row.question_id] == row.diagnosis)
    assert agree == 19
    docs = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    assert "| golden/sample (30) | lexical | 18 of 30, 0.60 [0.42, 0.75] | 19 of 30," in docs


# --- per type: counts and the sentence ---------------------------------------------------------


def _summary(*rows: tuple[str, Diagnosis], oos: tuple[str, ...] = ()) -> list[Any]:
    return summarise(rows, ["factual", "out_of_scope"], oos, context_k=5)


def test_the_sentence_says_which_layer_to_fix_first() -> None:
    (retrieval,) = _summary(
        *[("factual", "retrieval miss")] * 6, *[("factual", "generation")] * 3, ("factual", "ok")
    )
    assert retrieval.counts == dict.fromkeys(DIAGNOSES, 0) | {
        "retrieval miss": 6,
        "generation": 3,
        "ok": 1,
    }
    assert list(retrieval.counts) == list(DIAGNOSES)
    assert retrieval.total == 10 and retrieval.share("retrieval miss") == 0.6
    assert retrieval.fix_first == "retrieval"
    assert retrieval.sentence == (
        "factual: of 9 answers that went wrong, 6 had no relevant chunk among the 5 the "
        "generator saw, 3 had one and the answer fell short: fix retrieval first"
    )
    (generation,) = _summary(
        ("factual", "retrieval miss"), ("factual", "generation"), ("factual", "over-refusal")
    )
    assert generation.fix_first == "generation"
    assert "(1 generation, 1 over-refusal): fix generation first" in generation.sentence
    # A tie goes to retrieval: the generator cannot use a chunk it never saw.
    (tie,) = _summary(("factual", "retrieval miss"), ("factual", "generation"))
    assert tie.fix_first == "retrieval"
    (labels,) = _summary(*[("factual", "unknown retrieval")] * 2, ("factual", "generation"))
    assert labels.fix_first == "labels" and "label their relevant_chunks first" in labels.sentence
    (fine,) = _summary(("factual", "ok"), ("factual", "not judged"))
    assert fine.fix_first == "nothing"
    assert fine.sentence == (
        "factual: all 1 judged answers ok: nothing to fix; 1 not judged (see the judge and the "
        "adapter)"
    )
    (oos,) = _summary(
        ("out_of_scope", "answered out of scope"), ("out_of_scope", "ok"), oos=("out_of_scope",)
    )
    assert oos.sentence.startswith("out_of_scope: 1 of 2 questions were answered instead of")
    # Types in config order, empty ones left out, unknown ones after.
    summary = summarise(
        [("other", "ok"), ("out_of_scope", "ok")], ["factual", "out_of_scope"], (), 5
    )
    assert [d.type for d in summary] == ["out_of_scope", "other"]


# --- the views, on the shipped sample with the lexical judge ------------------------------------


def test_the_sample_diagnosis_table_matches_a_hand_count(
    sample_run: tuple[Record, Config, Path],
) -> None:
    # Counted by hand from golden/sample (relevant chunks), its run (the top 5 chunks and the
    # answers) and the lexical judge's scores:
    # - factual (12): ok q17 q29 (q29 refuses, no relevant chunk in its 5, 2/2); retrieval
    #   miss q14 q22 (relevant chunk not in the top 5); generation q01 q04 q07 q08 q11 q20 q24
    #   q27 (relevant chunk in context, below 2/2);
    # - procedural (8): ok q02 q13 q21 q26; generation q06 q09 q19, and q16 (2/2, but its
    #   quote comes from the iPhone widget chunk while its golden chunk was in context at rank
    #   4: the generator answered from the wrong chunk, issue 33);
    # - negative (5): ok q03; generation q10 q15 q28; over-refusal q23 (refuses, but
    #   restore/cross-platform is at rank 2);
    # - out_of_scope (5): ok q05 q12 q25 (they refuse); answered out of scope q18 q30.
    record, _, folder = sample_run
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    section = report_md.split("## Where it went wrong", 1)[1].split("\n## ", 1)[0]
    header = (
        "| type | n | ok | retrieval miss | generation | answered out of scope | over-refusal "
        "| not judged | unknown retrieval |"
    )
    assert header in section
    assert "| factual | 12 | 2 (17%) | 2 (17%) | 8 (67%) | 0 | 0 | 0 | 0 |" in section
    assert "| procedural | 8 | 4 (50%) | 0 | 4 (50%) | 0 | 0 | 0 | 0 |" in section
    assert "| negative | 5 | 1 (20%) | 0 | 3 (60%) | 0 | 1 (20%) | 0 | 0 |" in section
    assert "| out_of_scope | 5 | 3 (60%) | 0 | 0 | 2 (40%) | 0 | 0 | 0 |" in section
    assert (
        "| **all** | **30** | **10 (33%)** | **2 (7%)** | **15 (50%)** | **2 (7%)** "
        "| **1 (3%)** | **0** | **0** |"
    ) in section
    assert (
        "- factual: of 10 answers that went wrong, 2 had no relevant chunk among the 5 the "
        "generator saw, 8 had one and the answer fell short: fix generation first"
    ) in section
    by_id = {row.question_id: row.diagnosis for row in record.questions}
    assert [q for q, d in by_id.items() if d == "retrieval miss"] == ["q14", "q22"]
    assert [q for q, d in by_id.items() if d == "over-refusal"] == ["q23"]
    assert [q for q, d in by_id.items() if d == "answered out of scope"] == ["q18", "q30"]


def test_the_diagnosis_is_in_report_json_and_the_console(
    sample_run: tuple[Record, Config, Path],
) -> None:
    record, _config, folder = sample_run
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert [q["diagnosis"] for q in data["questions"]] == [r.diagnosis for r in record.questions]
    # The per-type summary is derived, not stored: the record read back gives the same.
    again = read_record(folder)
    assert again.diagnoses == record.diagnoses
    assert "diagnoses" not in data
    assert diagnosis_line(
        summarise([("factual", "ok"), ("negative", "not judged")], [], (), 5)
    ) == ("where it went wrong: factual nothing to fix; negative 1 not judged, nothing to fix")
    console = console_summary(record, folder)
    (line,) = [line for line in console if "where it went wrong" in line]
    assert line.strip() == (
        "where it went wrong: factual 2 retrieval miss, 8 generation: fix generation; "
        "procedural 4 generation: fix generation; negative 3 generation, 1 over-refusal: fix "
        "generation; out_of_scope 2 answered out of scope: fix generation"
    )


def test_verdicts_csv_carries_question_answer_reference_and_diagnosis(
    sample_run: tuple[Record, Config, Path],
) -> None:
    record, _, folder = sample_run
    text = (folder / "verdicts.csv").read_bytes().decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    for column in ("diagnosis", "question", "answer", "reference_answer"):
        assert column in rows[0]
    first = record.questions[0]
    assert first.item is not None
    assert rows[0]["question"] == first.question and rows[0]["answer"] == first.item.answer
    assert [r["diagnosis"] for r in rows] == [q.diagnosis for q in record.questions]


def test_a_closed_book_answer_is_a_retrieval_miss_with_a_run_warning() -> None:
    """No context at all: "label chunks first" was the advice, and nothing said the answers
    were judged against nothing."""
    from judge.results.diagnosis import closed_book

    for labels in (None, [], ["pricing/plans"]):
        item = _item(context=[], relevant_chunks=labels)
        assert diagnose(item, _verdict(1, 2), out_of_scope=False) == "retrieval miss"
    # a closed-book answer out of scope keeps its rule (a refusal is right, whatever was given)
    refusal = _item(REFUSAL_EN, context=[], relevant_chunks=[])
    assert diagnose(refusal, _verdict(0, 2), out_of_scope=True) == "ok"
    assert closed_book([_item()]) is None
    items = [_item(question_id=f"q{i}", context=[]) for i in range(7)]
    assert closed_book(items) == (
        "closed-book: all 7 answers came with no context chunk (q0, q1, q2, q3, q4, … (2 more)): "
        "their faithfulness was judged against nothing and they are diagnosed as retrieval "
        "misses; give the run's retrieved chunks with each answer, or judge them against the "
        "reference answers ([judge.correctness])"
    )
    some = closed_book([_item(), _item(question_id="q9", context=[])])
    assert some is not None and some.startswith("closed-book: 1 of 2 answers came with no")


def test_every_diagnosis_is_a_row_of_the_docs_table() -> None:
    """`wrong per reference` was missing from docs/reports.md."""
    from tests.conftest import REPO

    text = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip().strip("`")
        for line in text.splitlines()
        if line.startswith("| `")
    }
    assert set(DIAGNOSES) <= rows, sorted(set(DIAGNOSES) - rows)
