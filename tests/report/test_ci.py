"""The gate for CI systems: JUnit XML (parsed with the standard library) and the JSON summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import CORPUS, RUN
from tests.results.helpers import one_question_counts

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


def _lexical(config: Config) -> Config:
    assert config.source is not None
    config.source.write_text(
        config.source.read_text(encoding="utf-8").replace(
            "[judge]\n", '[judge]\nbackend = "lexical"\n'
        ),
        encoding="utf-8",
    )
    return config


def _worse_run() -> list[dict]:  # type: ignore[type-arg]
    """q1's relevant chunk pushed from rank 1 to rank 5: a retrieval regression."""
    run = json.loads(json.dumps(RUN))
    filler = [{"chunk_id": c["chunk_id"]} for c in CORPUS if c["chunk_id"] != "pricing/plans"]
    run[1]["retrieved"] = [*filler, {"chunk_id": "pricing/plans"}]
    return run


def test_nightly_junit_and_summary_through_three_nights(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = one_question_counts(tiny)  # one question per type: let it count
    # Night 1: nothing to compare with; the nightly requires a baseline, so both "has
    # something to compare with" checks fail.
    code, suite, summary = _nightly(_lexical(tiny()), tmp_path, "night1")
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

    # Night 2: the same answers: two comparisons pass, nothing fails.
    code, suite, summary = _nightly(_lexical(tiny()), tmp_path, "night2")
    assert code == 0
    names = [c.get("name") for c in suite.iter("testcase")]
    assert len(names) == 6 and names[0].startswith("retrieval vs ")
    assert suite.get("failures") == "0" and suite.get("skipped") == "0"
    assert summary["regressions"] == [] and summary["verdict"].startswith("ok")

    # Night 3: retrieval got worse: its comparison fails and names the metric.
    code, suite, summary = _nightly(_lexical(tiny(run=_worse_run())), tmp_path, "night3")
    assert code == 1
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name", "").split(" vs ")[0] for c in failed] == ["retrieval"]
    message = failed[0].find("failure").get("message")  # type: ignore[union-attr]
    assert "▼ factual mrr: 1.000 → 0.200 (-0.800 [-0.800, -0.800], 1 question); moved: q1" in str(
        message
    )
    mrr = next(r for r in summary["regressions"] if r["metric"] == "mrr")
    assert (mrr["type"], mrr["n"], mrr["delta"], mrr["direction"]) == (
        "factual",
        1,
        pytest.approx(-0.8),
        "regressed",
    )
    assert mrr["moved"] == [{"question_id": "q1", "old": 1.0, "new": pytest.approx(0.2)}]
    assert summary["verdict"].startswith("REGRESSED: retrieval factual mrr -0.800")
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
