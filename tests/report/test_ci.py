"""The gate for CI systems: JUnit XML (parsed with the standard library) and the JSON summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import nonsense_run
from tests.fakes import ScriptedBackend, nonsense_scores_zero
from tests.results.helpers import use_backend

Tiny = Callable[..., Config]


def _nightly(config: Config, tmp_path: Path, name: str) -> tuple[int, ET.Element, dict]:  # type: ignore[type-arg]
    assert config.source is not None
    junit, summary = tmp_path / f"{name}.xml", tmp_path / f"{name}.json"
    code = main(
        [
            "--config",
            str(config.source),
            "nightly",
            "--junit",
            str(junit),
            "--json",
            str(summary),
        ]
    )
    return code, ET.parse(junit).getroot(), json.loads(summary.read_text(encoding="utf-8"))


def test_nightly_junit_and_summary_through_three_nights(
    tiny: Tiny,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    use_backend(monkeypatch, ScriptedBackend(nonsense_scores_zero))
    # Night 1: nothing to compare with; the nightly requires a baseline, so both "has
    # something to compare with" checks fail.
    code, suite, summary = _nightly(tiny(), tmp_path, "night1")
    assert code == 1
    assert suite.tag == "testsuite"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {
        "retrieval has something to compare with",
        "judge has something to compare with",
        "answers were produced",
        "answers were judged",
    }
    assert suite.get("tests") == "4" and suite.get("failures") == "2"
    failure = cases["judge has something to compare with"].find("failure")
    assert failure is not None and "no earlier run to compare with" in str(failure.get("message"))
    assert summary["exit_code"] == 1
    assert summary["verdict"].startswith("no compatible earlier run or baseline")
    assert summary["not_compared"] == ["retrieval", "judge"]
    assert summary["status_counts"]["ok"] == 4

    # Night 2: the same answers: two comparisons pass, nothing fails; each case says what it
    # compared in its <system-out>.
    code, suite, summary = _nightly(tiny(), tmp_path, "night2")
    assert code == 0
    names = [c.get("name") for c in suite.iter("testcase")]
    assert len(names) == 6 and names[0].startswith("retrieval vs ")
    assert suite.get("failures") == "0" and suite.get("skipped") == "0"
    assert summary["regressions"] == [] and summary["verdict"].startswith("ok")
    out = next(suite.iter("testcase")).find("system-out")
    assert out is not None and "compared question by question, of " in str(out.text)

    # Night 3: every answer nonsense: the judge's comparison fails on the pooled collapse and
    # names it; the moves are properties of the case, with their numbers.
    code, suite, summary = _nightly(tiny(run=nonsense_run()), tmp_path, "night3")
    assert code == 1
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name", "").split(" vs ")[0] for c in failed] == ["judge"]
    message = failed[0].find("failure").get("message")  # type: ignore[union-attr]
    assert "▼▼ all faithfulness: 2.000 → 0.000 (-2.000 [-2.000, -2.000], 4 questions" in str(
        message
    )
    properties = {p.get("name"): p.get("value") for p in failed[0].iter("property")}
    assert "collapsed judge all faithfulness" in properties
    assert "collapsed" in str(properties["collapsed judge all faithfulness"])
    pooled = next(r for r in summary["regressions"] if r["metric"] == "faithfulness")
    assert (pooled["type"], pooled["n"], pooled["delta"], pooled["direction"]) == (
        "all",
        4,
        pytest.approx(-2.0),
        "collapsed",
    )
    assert len(pooled["moved"]) == 4
    assert summary["verdict"].startswith(
        "REGRESSED: collapsed over all questions: judge all faithfulness"
    )
    judge_check = next(c for c in summary["checks"] if c["name"].startswith("judge vs "))
    assert {m["direction"] for m in judge_check["moves"]} == {"collapsed"}
    assert set(summary["diagnoses"]) >= {"factual", "procedural", "negative", "out_of_scope"}
    capsys.readouterr()


def test_a_check_the_flags_do_not_enforce_is_skipped_not_failed(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    assert config.source is not None
    junit = tmp_path / "run.xml"
    args = ["--config", str(config.source), "run", "--backend", "lexical", "--junit", str(junit)]
    assert main(args) == 0  # `run` without --require-baseline: a first run passes
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0" and suite.get("skipped") == "2"
    skipped = next(suite.iter("skipped"))
    assert str(skipped.get("message")).startswith("not enforced: ")
