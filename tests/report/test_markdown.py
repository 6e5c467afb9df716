"""``judge.report.markdown``: a prompt is shown by its file name and hash, never by the
machine's folders, in report.md and review.html alike (issue 22, item 4); a prompt adopted by
``judge align`` is shown with its held-out agreement beside the previous one's, and a
``judge panel`` of the run's answers with its members' κ and its disputed answers, which the
review queue flags (issue 36, item 4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from judge.config import Config
from judge.hashing import text_sha256
from judge.report.markdown import prompt_label, prompt_path
from tests.conftest import latest_report, run_lexical

Tiny = Callable[..., Config]


def _folder(config: Config) -> str:
    return (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


def test_prompt_paths_are_shown_without_the_machines_folders() -> None:
    sha = "ab" * 32
    assert prompt_path("/home/ana/project/prompts/judge.v1.md") == "judge.v1.md"
    assert prompt_path("prompts/judge.v1.md") == "prompts/judge.v1.md"
    assert prompt_label("/srv/x/prompts/judge.v1.md", sha) == f"judge.v1.md (sha256 {sha[:12]}…)"


def test_report_md_and_review_html_never_name_the_absolute_prompt_path(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    folder = config.reports.dir / _folder(config)
    absolute = str(config.judge.prompt)
    assert Path(absolute).is_absolute()
    report = (folder / "report.md").read_text(encoding="utf-8")
    page = (folder / "review.html").read_text(encoding="utf-8")
    assert absolute not in report
    assert absolute not in page
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    sha = manifest["judge"]["prompt_sha256"]
    assert f"- prompt: judge.v1.md (sha256 {sha[:12]}…) · fingerprint" in report
    assert f"prompt judge.v1.md (sha256 {sha[:12]}…)" in page


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _interval(low: float, high: float) -> dict[str, float]:
    return {"low": low, "high": high}


def test_an_adopted_prompt_and_a_panel_are_shown_and_disputes_queued(tiny: Tiny) -> None:
    config = tiny()
    reports = config.reports.dir
    adopted = {
        "prompt": config.judge.prompt.name,
        "previous": "judge.v0.md",
        "variant": "k=2",
        "labels": 24,
        "answers": 12,
        "value": 0.8,
        "value_ci": _interval(0.65, 0.92),
        "previous_value": 0.7,
        "previous_ci": _interval(0.55, 0.85),
        "p_value": 0.01,
        "report": "20261203T120000Z.md",
    }
    _write_json(reports / "align" / "20261203T120000Z.json", {"adopted": adopted})
    kappa = {"n": 4, "kappa": 0.5, "interval": _interval(0.1, 0.9)}
    panel = {
        "members": ["ollama", "lexical"],
        # q1's exact answer; q2's is another answer (not this run's): not disputed here.
        "answers": {"q1": text_sha256("年額3,800円です。"), "q2": text_sha256("another")},
        "disputed": [
            {"question_id": "q1", "answer_sha256": "x", "flags": ["faithfulness 2 points apart"]},
            {"question_id": "q2", "answer_sha256": "y", "flags": ["relevance split"]},
        ],
        "with_humans": [
            {"first": "ollama", "second": "humans", "axis": "faithfulness", **kappa},
            {"first": "panel vote", "second": "humans", "axis": "faithfulness", **kappa},
        ],
        "between": [{"first": "ollama", "second": "lexical", "axis": "relevance", **kappa}],
    }
    _write_json(reports / "panel" / "20261203T130000Z.json", panel)
    assert run_lexical(config) == 0
    folder = reports / _folder(config)
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "## The judge's prompt and panel" in report
    assert (
        f"The prompt {config.judge.prompt.name} was adopted by `judge align` (k=2 exemplars; "
        "20261203T120000Z.md): held-out exact agreement, both axes, 0.80 [0.65, 0.92] beside "
        "judge.v0.md's 0.70 [0.55, 0.85] (95 % intervals; 24 labels on 12 answers; sign test "
        "p = 0.010)."
    ) in report
    assert "A panel of 2 judges (ollama, lexical; 20261203T130000Z.md) judged 1 of" in report
    assert "| ollama | humans | faithfulness | 0.50 [0.10, 0.90] | 4 |" in report
    assert "| ollama | lexical | relevance | 0.50 [0.10, 0.90] | 4 |" in report
    assert "Disputed by the panel (2 points apart or split; in Needs review): 1 answer(s)" in report
    assert "- q1: faithfulness 2 points apart" in report
    assert "- q2:" not in report
    record = latest_report(config)
    assert (
        "the panel of judges disputes it: faithfulness 2 points apart"
        in record["needs_review"]["q1"]
    )
    assert record["adopted_prompt"]["prompt"] == config.judge.prompt.name
    assert record["panel"]["disputed"] == {"q1": ["faithfulness 2 points apart"]}
    page = (folder / "review.html").read_text(encoding="utf-8")
    assert "panel_disputed" in page
    assert "the panel of judges disputes it" in page


def test_without_align_or_panel_the_section_is_absent(tiny: Tiny) -> None:
    config = tiny()
    _write_json(
        config.reports.dir / "align" / "x.json",
        {"adopted": {"prompt": "judge.v9.md", "previous": "judge.v8.md"}},  # not this prompt
    )
    assert run_lexical(config) == 0
    report = (config.reports.dir / _folder(config) / "report.md").read_text(encoding="utf-8")
    assert "## The judge's prompt and panel" not in report
    assert latest_report(config)["panel"] is None
