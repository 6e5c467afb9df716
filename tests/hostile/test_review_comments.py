"""A reviewer's comment with a control character in it: typed into review.html, or in a marks
file made by an older page or by hand.

Class of the hardening matrix (issue 34, "review.html lets a reviewer type an ESC into a
comment, and ``audit import`` then refuses the whole marks file"): the page refuses the
character as it is typed, by the importer's own rule (``comment_refused``); ``audit import``
of a marks file with one such comment imports every other mark and refuses that one in one
located line (exit 2), so that the file fixed and imported again adds it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.io.text import text_problem
from judge.report.review_page import comment_refused
from tests.report import review_screens

Tiny = Callable[..., Config]
HASH = "a" * 64


def test_the_pages_rule_is_the_importers() -> None:
    """Every character of the Basic Multilingual Plane: refused by the page's pattern exactly
    when ``audit import`` refuses it in a comment (the pattern reads the same in JavaScript)."""
    pattern = re.compile(comment_refused())
    for code in range(0x10000):
        if 0xD800 <= code < 0xE000:
            continue  # lone surrogates: no text a page can hold
        char = chr(code)
        assert bool(pattern.fullmatch(char)) == bool(text_problem(char, one_line=False)), hex(code)


def _mark(question_id: str, comment: str, relevance: int = 2) -> dict[str, Any]:
    return {
        "question_id": question_id,
        "answer_sha256": HASH,
        "judge_fingerprint": "judge:x",
        "agree": False,
        "faithfulness": 1,
        "relevance": relevance,
        "comment": comment,
        "marked_at": "2026-12-01T00:00:00Z",
    }


def _setup(tiny: Tiny, tmp_path: Path, comments: dict[str, str]) -> tuple[Path, Path, Path]:
    labels = tmp_path / "labels.jsonl"
    config = tiny(extra_toml=f'labels = "{labels}"\n')
    assert config.source is not None
    marks = tmp_path / "marks.json"
    document = {
        "format": "judge-review-marks",
        "version": 1,
        "reviewer": "ana",
        "marks": [_mark(qid, comment) for qid, comment in comments.items()],
    }
    marks.write_text(json.dumps(document), encoding="utf-8")
    return config.source, marks, labels


def test_one_comment_with_an_escape_leaves_out_that_mark_and_imports_the_rest(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comments = {"q1": "fine", "q2": "bad \x1b[2J clear", "q3": "二行の\nコメント"}
    toml, marks, labels = _setup(tiny, tmp_path, comments)
    assert main(["--config", str(toml), "audit", "import", str(marks)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "\x1b" not in err
    lines = [" ".join(line.split()) for line in err.strip().split("error: ")[1:]]
    assert lines[0].startswith(f"{marks}: mark 2 (q2): comment contains U+001B")
    assert lines[0].endswith("this mark was not imported")
    assert "the other marks were imported: 2 added, 0 replaced, 0 already there" in err
    stored = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    assert sorted((s["question_id"], s["note"]) for s in stored) == [
        ("q1", "fine"),
        ("q3", "二行の\nコメント"),
    ]

    # The comment fixed, the same file imported again: the one mark is added, the rest kept.
    comments["q2"] = "bad clear"
    document = json.loads(marks.read_text(encoding="utf-8"))
    document["marks"][1]["comment"] = "bad clear"
    marks.write_text(json.dumps(document), encoding="utf-8")
    assert main(["--config", str(toml), "audit", "import", str(marks)]) == 0
    assert "1 added, 0 replaced, 2 already there" in " ".join(capsys.readouterr().out.split())


def test_a_comment_fault_beside_another_fault_refuses_the_whole_file(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml, marks, labels = _setup(tiny, tmp_path, {"q1": "ok", "q2": "\u202eevil"})
    document = json.loads(marks.read_text(encoding="utf-8"))
    document["marks"][0]["relevance"] = 7  # a fault of the scores: nothing is imported
    marks.write_text(json.dumps(document), encoding="utf-8")
    assert main(["--config", str(toml), "audit", "import", str(marks)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{marks}: mark 1 (q1): relevance" in err
    assert f"{marks}: mark 2 (q2): comment contains U+202E" in err
    assert "nothing was imported" in err
    assert not labels.exists()


# --- review.html: the comment refused as it is typed -------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if review_screens.CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with review_screens.chromium(sync_api) as launched:
        yield launched


def test_the_page_refuses_an_escape_typed_into_a_comment(
    browser: Any, tiny: Tiny, tmp_path: Path
) -> None:
    from tests.report.test_review_page import _open, _run

    folder = _run(tiny())
    context = browser.new_context(accept_downloads=True)
    page, problems = _open(context, folder)
    item = 'section[data-qid="q1"]'
    page.click(f"{item} .row")
    page.select_option(f"{item} select.mark-faithfulness", "1")
    page.select_option(f"{item} select.mark-relevance", "2")
    page.fill(f"{item} textarea.mark-comment", "see \x1b]8;;http://x\x07here")
    state = page.inner_text(f"{item} .mark-state")
    assert state.startswith("The comment holds U+001B, a control character, at character 5")
    assert page.get_attribute(f"{item} textarea.mark-comment", "aria-invalid") == "true"
    page.click(f"{item} button.save")
    assert page.inner_text("#progress") == "marked 0 of 4"  # not saved
    page.click(f"{item} button.agree")
    assert page.inner_text("#progress") == "marked 0 of 4"
    page.fill(f"{item} textarea.mark-comment", "see here\n二行目\tok")  # line breaks and tabs
    assert page.get_attribute(f"{item} textarea.mark-comment", "aria-invalid") == "false"
    page.click(f"{item} button.save")
    assert page.inner_text(f"{item} .mark-state").startswith("Marked: F1 R2")
    assert page.inner_text("#progress") == "marked 1 of 4"
    assert problems == []
    context.close()
