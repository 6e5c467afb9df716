"""`judge nightly` over a season (issue 32): a small fall that stays is listed every night with
the date it began, and the good answers back after a broken night fail no night and say that
the fall ended."""

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.config import load_config
from tests.conftest import latest_report
from tests.test_nightly import UNSUPPORTED, WRONG, _sample_night, scripted_judge  # noqa: F401

pytestmark = pytest.mark.usefixtures("scripted_judge")

#: The sample's 30 question ids.
ALL = [f"q{i:02d}" for i in range(1, 31)]


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def test_three_answers_that_get_worse_and_stay_are_listed_every_night_with_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three good nights with the same answers (a deterministic system), then three of the 24
    # answers with a reference get worse and stay so: q01 invents, q04 and q07 lose support.
    for night in range(3):
        assert _sample_night(tmp_path, {}, capsys)[0] == (1 if night == 0 else 0)
    fell = {"q01": UNSUPPORTED, "q04": UNSUPPORTED, "q07": WRONG}
    code, first = _sample_night(tmp_path, fell, capsys)
    assert code == 0  # too small to fail a night: three of twelve, p = 1/8
    for _ in range(3):
        code, first = _sample_night(tmp_path, fell, capsys)
        assert (code, first) == (
            0,
            f"nightly: ok; 3 answers below the season since {_today()}: q01, q04, q07",
        )
        report = latest_report(load_config(tmp_path / "judge.toml"))
        lasting = report["gate"]["lasting"]
        faithfulness = {x["question_id"]: x for x in lasting if x["metric"] == "faithfulness"}
        assert sorted(faithfulness) == ["q01", "q04", "q07"]
        assert all(x["now"] < x["then"] and x["nights"] >= 2 for x in lasting)
        assert all(x["since"] == _today() and x["against"] == "season" for x in lasting)
    # The JSON summary and JUnit carry the list too.
    junit, summary = tmp_path / "nightly.xml", tmp_path / "nightly.json"
    code, _ = _sample_night(
        tmp_path, fell, capsys, extra=("--junit", str(junit), "--json", str(summary))
    )
    assert code == 0
    listed = json.loads(summary.read_text(encoding="utf-8"))["lasting"]
    assert {x["question_id"] for x in listed} == {"q01", "q04", "q07"}
    properties = {
        p.get("name"): p.get("value")
        for p in ET.parse(junit).getroot().findall("properties/property")
    }
    assert properties["below judge faithfulness q01"] == (
        f"q01 judge faithfulness 2→1 since {_today()} (5 runs, against the season)"
    )
    folder = tmp_path / "reports" / (tmp_path / "reports" / "latest").read_text("utf-8").strip()
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    review = (folder / "review.html").read_text(encoding="utf-8")
    assert '"below_since"' in review and f"since {_today()} (5 runs, against the season)" in review
    assert "Below the baseline or the season for 2 runs or more" in report_md
    assert f"- q01 judge faithfulness 2→1 since {_today()} (5 runs, against the season)" in (
        report_md
    )


@pytest.mark.parametrize("broken", ["generator", "retriever"])
def test_the_good_answers_back_after_a_broken_night_fail_no_night_and_the_fall_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    # Six good nights whose answers differ a little (each an observation of its own).
    for night in range(1, 7):
        assert _sample_night(tmp_path, {}, capsys, night=night)[0] == (1 if night == 1 else 0)
    # The broken night: every answer wrong (a broken generator) or every ranking reversed (a
    # broken retriever), rightly a regression.
    if broken == "generator":
        code, first = _sample_night(tmp_path, dict.fromkeys(ALL, WRONG), capsys, night=6)
    else:
        code, first = _sample_night(tmp_path, {}, capsys, night=6, reversed_ranking=True)
    assert code == 1 and first.startswith("nightly: REGRESSED: ")
    # The good system back: the sixth night's answers, byte for byte; then the same answers
    # again (a deterministic system), then new good answers. No night fails, and the first
    # says the fall ended.
    code, first = _sample_night(tmp_path, {}, capsys, night=6)
    assert code == 0, first
    assert first.startswith("nightly: ok: no regression") or first.startswith("nightly: ok; ")
    assert f"the fall of {_today()} ended: " in first
    for night in (6, 6, 7, 8):
        code, first = _sample_night(tmp_path, {}, capsys, night=night)
        assert code == 0, first
        assert "REGRESSED" not in first
