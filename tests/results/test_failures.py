"""A question the RAG system gave no answer for is an outcome, never a smaller n: it is counted
in the judge table, listed in the report and the console, and fails the gate."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.formatting import markdown_text
from judge.results.compare import Change, SectionComparison
from judge.results.gate import gate
from tests.conftest import latest_report

TinyAdapter = Callable[..., Config]

#: An error with Markdown in it: report.md must show it as text.
ERROR = "index <b>down</b> | *now*"

FAILING_EVERYWHERE = f"def answer(question):\n    raise RuntimeError({ERROR!r})\n"

FAILING_ON_IPAD = (
    "def answer(question):\n"
    "    if 'iPad' in question:\n"
    "        raise TimeoutError('search took too long')\n"
    "    if 'Windows' in question:\n"
    "        return {'retrieved': ['pricing/plans'], 'answer': '記載がありません。'}\n"
    "    return {'retrieved': ['pricing/plans', 'backup/restore'], 'answer': '回答'}\n"
)


def _lexical(config: Config) -> Config:
    """The judge.toml of ``config`` with the lexical backend (as the nightly reads it)."""
    assert config.source is not None
    text = config.source.read_text(encoding="utf-8")
    config.source.write_text(
        text.replace("[judge]\n", '[judge]\nbackend = "lexical"\n'), encoding="utf-8"
    )
    return config


def _report_md(config: Config) -> str:
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    return (config.reports.dir / folder / "report.md").read_text(encoding="utf-8")


def _adapter_failed(table: dict[str, Any]) -> dict[str, int]:
    return {row["type"]: row["adapter_failed"] for row in table["rows"]}


def _history(config: Config) -> dict[str, Any]:
    lines = (config.reports.dir / "history.jsonl").read_text(encoding="utf-8").splitlines()
    last: dict[str, Any] = json.loads(lines[-1])
    return last


def test_an_adapter_failing_everywhere_fails_the_nightly_and_says_so_first(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _lexical(tiny_adapter("broken_rag", FAILING_EVERYWHERE))
    assert main(["--config", str(config.source), "nightly"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "nightly: FAILED: the adapter failed for 4 of 4 questions (q1, q2, q3, q4)"

    md = _report_md(config)
    assert "## Answers that could not be produced" in md
    escaped = markdown_text(f"RuntimeError: {ERROR}")
    for qid, qtype in [
        ("q1", "factual"),
        ("q2", "procedural"),
        ("q3", "negative"),
        ("q4", "out_of_scope"),
    ]:
        assert f"- **{qid}** ({markdown_text(qtype)}): {escaped}" in md
    assert "<b>" not in md

    report = latest_report(config)
    assert _adapter_failed(report["tables"]["judge"]) == {
        "factual": 1,
        "procedural": 1,
        "negative": 1,
        "out_of_scope": 1,
        "all": 4,
    }
    assert report["adapter_failed"] == {f"q{i}": f"RuntimeError: {ERROR}" for i in range(1, 5)}
    # No answer is no ok verdict: the share of ok verdicts is 0, not "nothing to say".
    assert _history(config)["metrics"]["judge"]["all"]["ok_share"] == 0.0

    # The next night fails the same way: the failure, not an empty comparison, comes first.
    assert main(["--config", str(config.source), "nightly"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "nightly: FAILED: the adapter failed for 4 of 4 questions (q1, q2, q3, q4)"


def test_one_failed_question_shows_everywhere_and_fails_only_an_enforcing_gate(
    tiny_adapter: TinyAdapter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_adapter("flaky_rag", FAILING_ON_IPAD)
    junit, summary = tmp_path / "gate.xml", tmp_path / "summary.json"
    args = ["--config", str(config.source), "run", "--backend", "lexical"]
    ci = ["--junit", str(junit), "--json", str(summary)]
    assert main([*args, *ci]) == 0  # reported, but not enforced without --fail-on-regression
    out = capsys.readouterr().out

    # The console: the table column, the list, and the gate line.
    table = out[out.index("judge per type") :].splitlines()
    header = table[1].split()
    assert header[:6] == [
        "type",
        "n",
        "parse_error",
        "backend_error",
        "truncated",
        "adapter_failed",
    ]
    counts = {line.split()[0]: int(line.split()[5]) for line in table[3:9] if line[:1] != "-"}
    assert counts == {"factual": 0, "procedural": 0, "negative": 1, "out_of_scope": 0, "all": 1}
    assert (
        "\nthe adapter failed for 1 question(s) (no answer, so no verdict; counted in "
        "adapter_failed):\n  q3 (negative): TimeoutError: search took too long\n"
    ) in out
    assert "gate: FAILED: the adapter failed for 1 of 4 questions (q3)" in out

    # report.md, report.json and the split tables.
    md = _report_md(config)
    assert "## Answers that could not be produced" in md
    assert "- **q3** (negative): TimeoutError: search took too long" in md
    report = latest_report(config)
    assert report["adapter_failed"] == {"q3": "TimeoutError: search took too long"}
    assert _adapter_failed(report["tables"]["judge"])["negative"] == 1
    assert _adapter_failed(report["tables"]["splits"]["holdout"])["all"] == 1
    assert _adapter_failed(report["tables"]["splits"]["tune"])["all"] == 0
    # ok_share counts the failed question in its denominator: 3 ok of 4 questions.
    ok_share = _history(config)["metrics"]["judge"]
    assert ok_share["all"]["ok_share"] == 0.75
    assert ok_share["negative"]["ok_share"] == 0.0

    # The JSON summary and the JUnit file: the check is there, failed but not enforced.
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert data["adapter_failed"] == ["q3"]
    assert data["exit_code"] == 0
    assert data["verdict"] == "FAILED: the adapter failed for 1 of 4 questions (q3)"
    check = next(c for c in data["checks"] if c["name"] == "answers were produced")
    assert check["passed"] is False
    assert check["message"] == "the adapter failed for 1 of 4 questions (q3)"
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    skipped = cases["answers were produced"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "not enforced: the adapter failed for 1 of 4 questions (q3)"

    # --fail-on-regression enforces it: the run fails, and the JUnit case is a failure.
    assert main([*args, *ci, "--fail-on-regression"]) == 1
    assert "gate: FAILED: the adapter failed for 1 of 4 questions (q3)" in capsys.readouterr().out
    suite = ET.parse(junit).getroot()
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["answers were produced"]
    assert json.loads(summary.read_text(encoding="utf-8"))["exit_code"] == 1

    # A re-rendered folder still lists it (the saved run keeps the failures).
    assert main(["--config", str(config.source), "report"]) == 0
    assert "- **q3** (negative): TimeoutError: search took too long" in _report_md(config)
    assert latest_report(config)["adapter_failed"] == {"q3": "TimeoutError: search took too long"}


def test_a_run_with_every_answer_has_the_column_at_zero_and_no_section(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_adapter("sound_rag", FAILING_ON_IPAD.replace("'iPad'", "'never asked'"))
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 0
    assert "the adapter failed" not in capsys.readouterr().out
    assert "Answers that could not be produced" not in _report_md(config)
    report = latest_report(config)
    assert report["adapter_failed"] == {}
    assert set(_adapter_failed(report["tables"]["judge"]).values()) == {0}


# --- the gate on its own ---------------------------------------------------------------------

FELL = Change("retrieval", "factual", "mrr", 12, 1.0, 0.8, -0.2, -0.3, -0.1, 0.05, "regressed", ())
REGRESSED = [
    SectionComparison("retrieval", "20261128T000000Z-aaaaaaaa", [FELL], ""),
    SectionComparison("judge", "20261128T000000Z-aaaaaaaa", [], ""),
]


def test_some_failed_and_a_regression_says_both_failures_first() -> None:
    result = gate(REGRESSED, failed=["q3"], total=4)
    assert result.verdict == (
        "FAILED: the adapter failed for 1 of 4 questions (q3); "
        "REGRESSED: retrieval factual mrr -0.200 [-0.300, -0.100] over 12 questions"
    )
    assert result.exit_code(fail_on_regression=True, require_baseline=False) == 1


def test_all_failed_leaves_out_the_regressions_of_nothing() -> None:
    ids = [f"q{i:02d}" for i in range(1, 31)]
    result = gate(REGRESSED, failed=ids, total=30)
    assert result.verdict == (
        "FAILED: the adapter failed for 30 of 30 questions (q01, q02, q03, q04, q05, …)"
    )
    check = next(c for c in result.checks if c.name == "answers were produced")
    assert not check.passed and check.kind == "regression"
    assert check.message.startswith("the adapter failed for 30 of 30 questions (q01, ")


def test_failures_alone_fail_only_under_fail_on_regression() -> None:
    compared = [
        SectionComparison(s, "20261128T000000Z-aaaaaaaa", [], "") for s in ("retrieval", "judge")
    ]
    result = gate(compared, failed=["q2"], total=4)
    assert result.regressions == [] and result.missing == []
    assert result.exit_code(fail_on_regression=True, require_baseline=True) == 1
    assert result.exit_code(fail_on_regression=False, require_baseline=True) == 0
    answered = gate(compared, failed=[], total=4)
    assert answered.verdict == "ok: no regression"
    check = next(c for c in answered.checks if c.name == "answers were produced")
    assert check.passed and check.message == "the adapter answered all 4 questions"
