"""Per-type bars end to end: the [bars] table read and validated, ``judge bars suggest``
(parsed back, written into judge.toml by ``judge.pipeline.bars``), ``judge run --bars`` and the
nightly's bars (issue 22, item 2)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import load_config
from judge.errors import ConfigError
from judge.record.store import read_record
from tests.conftest import REPO, SAMPLE, sample_toml

# --- the [bars] table ------------------------------------------------------------------------


def test_bars_are_read_and_validated(tmp_path: Path) -> None:
    path = sample_toml(
        tmp_path, extra='\n[bars.faithfulness]\nfactual = 1.6\n[bars."recall@5"]\nall = 0.5\n'
    )
    config = load_config(path)
    assert config.bars == {"faithfulness": {"factual": 1.6}, "recall@5": {"all": 0.5}}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("[bars.faithfullness]\nfactual = 1.0\n", "bars: unknown metric 'faithfullness'"),
        (
            "[bars.faithfulness]\nfactoid = 1.0\n",
            "bars.faithfulness.factoid: unknown question type",
        ),
        (
            "[bars.faithfulness]\nfactual = 2.5\n",
            "bars.faithfulness.factual = 2.5: off the scale of faithfulness (a 0-2 judge score)",
        ),
        (
            "[bars.full_marks]\nfactual = 1.5\n",
            "bars.full_marks.factual = 1.5: off the scale of full_marks (a 0-1 share)",
        ),
        ('[bars."recall@5"]\nfactual = -0.1\n', "off the scale of recall@5"),
        (
            '[bars."recall@5"]\nout_of_scope = 0.5\n',
            "out_of_scope questions have no relevant chunks",
        ),
        ('[bars."recall@3"]\nfactual = 0.5\n', "bars: unknown metric 'recall@3'"),
        ('[bars.faithfulness]\nfactual = "1.5"\n', "bars.faithfulness.factual"),
    ],
)
def test_a_bad_bar_is_one_located_error(tmp_path: Path, table: str, expected: str) -> None:
    path = sample_toml(tmp_path, extra="\n" + table)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)


# --- judge bars suggest, judge run --bars ----------------------------------------------------


def test_suggest_prints_a_table_that_parses_back_and_run_bars_passes_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    capsys.readouterr()
    assert main(["--config", str(path), "bars", "suggest"]) == 0
    snippet = capsys.readouterr().out
    bars = tomllib.loads(snippet)["bars"]
    assert set(bars) == {"faithfulness", "relevance", "recall@5"}
    # the lexical judge on the sample: factual faithfulness 1.333 (16 points over 12), minus 0.10
    assert bars["faithfulness"]["factual"] == 1.23
    assert "out_of_scope" not in bars["recall@5"]  # no value, no bar
    before = path.read_bytes()
    assert main(["--config", str(path), "bars", "suggest", "--write"]) == 0
    after = path.read_bytes()
    assert after.startswith(before)  # every other byte kept
    assert load_config(path).bars == bars
    capsys.readouterr()
    assert main(["--config", str(path), "run", "--bars"]) == 0
    assert (
        f"bars: {sum(map(len, bars.values()))} of {sum(map(len, bars.values()))} met"
        in capsys.readouterr().out
    )


def test_write_refuses_existing_bars_unless_replace_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    text = path.read_text(encoding="utf-8")
    head, tail = text.split("[reports]")
    path.write_text(
        head + "# mine\n[bars.faithfulness]\nfactual = 1.99\n\n[reports]" + tail, encoding="utf-8"
    )
    assert main(["--config", str(path), "bars", "suggest", "--write"]) == 2
    assert "already has a [bars] table; give --replace" in capsys.readouterr().err
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--replace", "--metric", "mrr"])
        == 0
    )
    new = path.read_text(encoding="utf-8")
    assert new.startswith(head + "# mine\n# Per-type bars")
    assert new.endswith("\n[reports]" + tail)
    assert set(load_config(path).bars) == {"mrr"}


def test_write_refuses_bars_it_cannot_replace_by_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path, extra="bars = { faithfulness = { factual = 1.0 } }\n")
    path.write_text(
        path.read_text(encoding="utf-8").replace("[reports]\n", "[reports]\n"), encoding="utf-8"
    )
    # an inline table inside [reports] would be reports.bars: put it at the top instead
    text = path.read_text(encoding="utf-8").replace(
        "bars = { faithfulness = { factual = 1.0 } }\n", ""
    )
    path.write_text("bars = { faithfulness = { factual = 1.0 } }\n" + text, encoding="utf-8")
    assert main(["--config", str(path), "run"]) == 0
    before = path.read_bytes()
    assert main(["--config", str(path), "bars", "suggest", "--write", "--replace"]) == 2
    assert "cannot be replaced line by line; edit them by hand" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_suggest_without_a_run_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "bars", "suggest"]) == 2
    assert "run 'judge run' first" in capsys.readouterr().err


def _lowered_run(tmp_path: Path, qid: str) -> Path:
    """The sample run with one answer replaced by words found in no chunk."""
    lines = (SAMPLE / "run.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("id") == qid:
            record["answer"] = "Zorblax quintessence flummoxes the periwinkle."
        out.append(json.dumps(record, ensure_ascii=False))
    path = tmp_path / "lowered.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def first_full_marks(config_path: Path, qtype: str) -> str:
    """A question of ``qtype`` the latest run gave faithfulness 2."""
    config = load_config(config_path)
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    record = read_record(config.reports.dir / folder)
    return next(
        row.question_id
        for row in record.questions
        if row.type == qtype and row.verdict and row.verdict.faithfulness == 2
    )


def test_run_bars_fails_on_a_crossed_bar_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--metric", "faithfulness"]) == 0
    )
    qid = first_full_marks(path, "factual")
    capsys.readouterr()
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.json"
    lowered = str(_lowered_run(tmp_path, qid))
    code = main(
        [
            "--config",
            str(path),
            "run",
            "--bars",
            "--run",
            lowered,
            "--junit",
            str(junit),
            "--json",
            str(summary),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    # 16 points over 12 factual questions; one answer from 2 to 0: 14 / 12 = 1.167 < 1.23
    assert "bar: factual faithfulness 1.17 < 1.23 (12 questions)" in out.splitlines()
    assert "gate: FAILED: bar: factual faithfulness 1.17 < 1.23 (12 questions)" in out
    assert "bar: procedural faithfulness" not in out  # the bars met are not listed one by one
    checks = {c["name"]: c for c in json.loads(summary.read_text(encoding="utf-8"))["checks"]}
    assert checks["bar: factual faithfulness"]["passed"] is False
    assert checks["bar: procedural faithfulness"]["passed"] is True
    assert 'name="bar: factual faithfulness"' in junit.read_text(encoding="utf-8")


def test_run_bars_without_a_bars_table_is_refused_before_judging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run", "--bars"]) == 2
    assert "no [bars] table; write one with 'judge bars suggest --write'" in capsys.readouterr().err
    assert not (tmp_path / "reports" / "latest").exists()


def test_the_nightly_checks_the_bars_of_its_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_toml(tmp_path)
    assert main(["--config", str(path), "run"]) == 0
    assert (
        main(["--config", str(path), "bars", "suggest", "--write", "--metric", "faithfulness"]) == 0
    )
    qid = first_full_marks(path, "factual")
    capsys.readouterr()
    code = main(["--config", str(path), "nightly", "--run", str(_lowered_run(tmp_path, qid))])
    first = capsys.readouterr().out.splitlines()[0]
    assert code == 1
    assert first.startswith("nightly: FAILED: bar: factual faithfulness 1.17 < 1.23 (12 questions)")


def test_correctness_on_leaves_every_bar_met_and_a_correctness_bar_counts_its_own_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``[judge.correctness]`` on, the judge table has the correctness counts beside the
    statuses: a bar on faithfulness is not failed by the questions that were asked about
    correctness (they are no failures), and a correctness bar is over the questions given an
    ok correctness verdict, its failures the correctness verdicts that are not ok."""
    path = sample_toml(
        tmp_path,
        extra=(
            f'\n[judge.correctness]\nenabled = true\nprompt = "{REPO / "prompts" / "correctness.v1.md"}"\n'
        ),
    )
    assert main(["--config", str(path), "run"]) == 0
    metrics = ["faithfulness", "relevance", "correctness", "recall@5"]
    args = [arg for metric in metrics for arg in ("--metric", metric)]
    assert main(["--config", str(path), "bars", "suggest", "--write", *args]) == 0
    bars = load_config(path).bars
    assert bars.get("correctness")
    capsys.readouterr()
    assert main(["--config", str(path), "run", "--bars", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    total = sum(map(len, bars.values()))
    assert f"bars: {total} of {total} met" in out
    assert "got no answer or no verdict" not in out
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["verdict"].startswith("ok")
