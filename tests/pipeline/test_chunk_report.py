"""Issue 23, done when: on both shipped sample sets, with the lexical baseline, judged retrieval
numbers for questions whose labels are removed, a list of possible missing labels, and the
agreement of the judge's chunk grades with the golden labels in report.md; and the reviewer's
loop: missing-labels.csv confirmed, `judge golden accept`, the next run no longer lists it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from judge.config import Config, load_config
from judge.pipeline.evaluate import evaluate
from judge.pipeline.golden import accept_labels
from judge.record.model import Record
from judge.record.store import read_record
from judge.report.chunks_text import MISSING_LABELS_FILE
from judge.results.chunk_grades import MISSING_LABELS_COLUMNS, RELEVANT_GRADE
from tests.conftest import REPO

SAMPLES = {"ja": REPO / "judge.toml", "en": REPO / "golden" / "sample-en" / "judge.toml"}
#: Answerable questions whose chunk labels the test removes (set to null).
UNLABELLED = 3


def _config(tmp: Path, sample: str, questions: Path | None = None) -> Config:
    config = load_config(SAMPLES[sample])
    data = {} if questions is None else {"questions": questions}
    return config.with_overrides(
        data=data,
        judge={
            "cache_path": tmp / "cache.sqlite3",
            "chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md"},
        },
        reports={"dir": tmp / "reports", "baseline": tmp / "baseline.json"},
    )


def _without_labels(config: Config, tmp: Path) -> tuple[Path, list[str]]:
    """A copy of the sample's questions with the first answerable ones' labels removed."""
    lines = config.data.questions.read_text(encoding="utf-8").splitlines()
    removed: list[str] = []
    out = []
    for line in lines:
        if line.strip() and len(removed) < UNLABELLED:
            question = json.loads(line)
            if question["answerable"] and question["relevant_chunks"]:
                question["relevant_chunks"] = None
                removed.append(question["id"])
                line = json.dumps(question, ensure_ascii=False)
        out.append(line)
    path = tmp / "questions.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path, removed


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def graded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, Record, list[str]]:
    sample = str(request.param)
    tmp = tmp_path_factory.mktemp(f"chunks-{sample}")
    questions, removed = _without_labels(load_config(SAMPLES[sample]), tmp)
    result = evaluate(_config(tmp, sample, questions), backend="lexical", progress=False)
    return sample, result.folder.path, result.report, removed


def test_questions_whose_labels_are_removed_get_judged_retrieval_numbers(
    graded: tuple[str, Path, Record, list[str]],
) -> None:
    _, folder, report, removed = graded
    chunks = report.chunks
    assert chunks is not None and chunks.depth == 5
    # Every chunk of every answered question was graded, on 0-3.
    rows = [row for row in report.questions if row.item is not None]
    assert all(row.chunk_grades is not None and len(row.chunk_grades) == 5 for row in rows)
    assert all(
        g.status == "ok" and g.grade in (0, 1, 2, 3) for r in rows for g in r.chunk_grades or ()
    )
    unlabelled = {row["type"]: row for row in chunks.judged_unlabelled.rows}
    # The unlabelled table counts exactly the questions whose labels were removed...
    assert unlabelled["all"]["graded"] == len(removed)
    precision = unlabelled["all"]["judged_precision@5"]
    assert isinstance(precision, float) and 0.0 <= precision <= 1.0
    # ...and the human-label retrieval table leaves them out (never mixed).
    assert report.retrieval.rows[-1]["type"] == "all"
    assert all(not name.startswith("judged_") for name in report.retrieval.metrics)
    text = (folder / "report.md").read_text(encoding="utf-8")
    # The lexical baseline counts no tokens: said so, never 0.
    cost = report.further_tokens["chunk grades"]
    assert cost.prompt_tokens is None and cost.completion_tokens is None
    assert f"Cost: {chunks.graded} calls (0 from the cache), tokens not reported" in text
    tokens = text.split("## Tokens and time")[1].split("\n## ")[0]
    assert (
        f"- chunk grades: {chunks.graded} calls (0 from the cache), tokens not reported" in tokens
    )
    section = text.split("### Judged retrieval of the questions without chunk labels")[1]
    table = section.split("###")[0]
    assert "judged_precision@5" in table and "| **all** | **" in table


def test_possible_missing_labels_are_listed_in_the_record_the_file_and_report_md(
    graded: tuple[str, Path, Record, list[str]],
) -> None:
    _, folder, report, removed = graded
    chunks = report.chunks
    assert chunks is not None
    grades = {
        (row.question_id, g.chunk_id): g.grade
        for row in report.questions
        for g in row.chunk_grades or ()
    }
    listed = {row.question_id: row.item.relevant_chunks for row in report.questions if row.item}
    assert chunks.missing, "the lexical grade finds some on either sample"
    for m in chunks.missing:
        assert m.question_id not in removed  # an unlabelled question has no labels to miss
        assert (grades[(m.question_id, m.chunk_id)] or 0) >= RELEVANT_GRADE
        assert m.chunk_id not in (listed[m.question_id] or [])
    raw = (folder / MISSING_LABELS_FILE).read_text(encoding="utf-8-sig")
    table = list(csv.reader(io.StringIO(raw)))
    assert table[0] == list(MISSING_LABELS_COLUMNS)
    assert [(r[0], r[2]) for r in table[1:]] == [
        (m.question_id, m.chunk_id) for m in chunks.missing
    ]
    text = (folder / "report.md").read_text(encoding="utf-8")
    assert f"### Possible missing labels ({len(chunks.missing)})" in text
    # The folder reads back into the same summary.
    back = read_record(folder).chunks
    assert back is not None and back.model_dump() == chunks.model_dump()


def test_the_chunk_grades_agreement_with_the_golden_labels_is_in_report_md(
    graded: tuple[str, Path, Record, list[str]],
) -> None:
    _, folder, report, removed = graded
    assert report.chunks is not None
    every = report.chunks.agreement.types["all"]
    labelled = [r for r in report.questions if r.item and r.question_id not in removed]
    assert every.chunks == 5 * len(labelled)
    assert every.questions == len(labelled)
    assert every.exact is not None and every.exact_ci is not None
    assert sum(map(sum, every.grades)) == every.chunks
    text = (folder / "report.md").read_text(encoding="utf-8")
    assert "### The judge's chunk grades against the golden labels" in text
    assert f"**{every.chunks} ({every.questions})**" in text
    assert "### Recall@5 corrected with the golden labels" in text


def test_a_confirmed_missing_label_is_accepted_and_the_next_run_no_longer_lists_it(
    tmp_path: Path,
) -> None:
    config = load_config(SAMPLES["ja"])
    questions = tmp_path / "questions.jsonl"
    questions.write_bytes(config.data.questions.read_bytes())
    config = _config(tmp_path, "ja", questions)
    first = evaluate(config, backend="lexical", progress=False)
    assert first.report.chunks is not None
    confirmed = first.report.chunks.missing[0]
    path = first.folder.path / MISSING_LABELS_FILE
    table = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    table[1][-1] = "yes"
    edited = tmp_path / "confirmed.csv"
    with edited.open("w", encoding="utf-8-sig", newline="") as out:
        csv.writer(out).writerows(table)
    accepted = accept_labels(config, edited)
    assert accepted.edit.added == ((confirmed.question_id, confirmed.chunk_id),)
    second = evaluate(config, backend="lexical", progress=False)
    assert second.report.chunks is not None
    missing = {(m.question_id, m.chunk_id) for m in second.report.chunks.missing}
    assert (confirmed.question_id, confirmed.chunk_id) not in missing
    assert len(missing) == len(first.report.chunks.missing) - 1
    # The grades were cached: the second run asked the judge for nothing.
    assert all(g.cached for r in second.report.questions for g in r.chunk_grades or ())
    assert second.report.further_tokens["chunk grades"].cached == second.report.chunks.graded


@pytest.mark.slow
def test_the_embedded_model_grades_chunks_end_to_end(tmp_path: Path) -> None:
    """The real Gemma 3 270M through ``judge run``'s path on four English questions (two
    labelled, one with its labels removed, one out of scope), two chunks each: the grades, the
    judged numbers of the unlabelled question, the missing labels and the agreement reach
    report.md. The mechanics, not the quality: the 270M carries no judging signal."""
    english = REPO / "golden" / "sample-en"
    keep = ["q01", "q02", "q03", "q05"]
    lines = (english / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    chosen = [json.loads(line) for line in lines if line.strip()]
    chosen = [q for q in chosen if q["id"] in keep]
    chosen[2]["relevant_chunks"] = None  # q03: its labels removed
    (tmp_path / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in chosen), encoding="utf-8"
    )
    run = (english / "run.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [run[0], *(line for line in run[1:] if json.loads(line)["id"] in keep)]
    (tmp_path / "run.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    config = _config(tmp_path, "en").with_overrides(
        data={
            "questions": tmp_path / "questions.jsonl",
            "run": tmp_path / "run.jsonl",
            "labels": None,
            "question_types": ["factual", "procedural", "negative", "out_of_scope"],
        },
        retrieval={"context_k": 2, "k_values": [1, 2]},
    )
    result = evaluate(config, backend="embedded", progress=False)
    chunks = result.report.chunks
    assert chunks is not None and chunks.graded == 8
    grades = [g for r in result.report.questions for g in r.chunk_grades or ()]
    assert all(g.status in ("ok", "parse_error") for g in grades)
    assert all((g.grade in (0, 1, 2, 3)) == (g.status == "ok") for g in grades)
    assert all(g.prompt_tokens is not None and g.prompt_tokens > 50 for g in grades)
    cost = result.report.further_tokens["chunk grades"]
    assert cost.prompt_tokens == sum(g.prompt_tokens or 0 for g in grades)
    text_tokens = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert (
        f"- chunk grades: 8 calls (0 from the cache), {cost.prompt_tokens:,} prompt" in text_tokens
    )
    unlabelled = {row["type"]: row for row in chunks.judged_unlabelled.rows}
    assert unlabelled["all"]["graded"] == 1
    text = (result.folder.path / "report.md").read_text(encoding="utf-8")
    assert "## Chunk grades" in text and "### Possible missing labels" in text
    assert "### The judge's chunk grades against the golden labels" in text
    assert (result.folder.path / MISSING_LABELS_FILE).is_file()
