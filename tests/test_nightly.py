"""`judge nightly`: the gate's verdict is the first line, no baseline does not pass, and on the
shipped sample one flipped verdict of a small type does not fail while a real fall does."""

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.judging.backends import JudgeRequest
from judge.judging.verdict import Reply
from tests.conftest import REPO, SAMPLE, latest_report
from tests.fakes import ScriptedBackend, good_reply
from tests.results.helpers import use_backend

Tiny = Callable[..., Config]


def test_nightly_prints_its_verdict_first(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny()
    assert config.source is not None
    toml = config.source
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "lexical"\n'),
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "nightly"]) == 1  # no baseline yet: a nightly must not pass
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == "nightly: no compatible earlier run or baseline for retrieval and judge: nothing compared"
    )
    assert out[1].startswith("judge: lexical")
    assert main(["--config", str(toml), "nightly"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "nightly: ok: no regression"


def test_nightly_backend_option_overrides_the_configs_judge(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    # judge.toml names an Ollama nobody listens to: without --backend this night would stop
    # with exit 3, so judging at all shows the option won (and no model is loaded for a test).
    config = tiny()
    assert config.source is not None
    toml = config.source
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "ollama"\n')
        + '\n[judge.ollama]\nhost = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "nightly", "--backend", "lexical"]) == 1  # no baseline
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("nightly: no compatible earlier run or baseline")
    assert out[1] == "judge: lexical · lexical-v5"
    assert out[3].strip() == "(backend = lexical)"
    report = latest_report(load_config(toml))
    assert report["manifest"]["judge"]["backend"] == "lexical"
    assert main(["--config", str(toml), "nightly", "--backend", "lexical"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "nightly: ok: no regression"
    assert main(["--config", str(toml), "nightly"]) == 3  # the configured Ollama, as before
    assert "Ollama not reachable at http://127.0.0.1:9" in capsys.readouterr().err


def test_ctrl_c_while_asking_the_adapter_still_gives_a_verdict_line(
    tiny_adapter: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_adapter(
        "stopping_rag",
        "def answer(question):\n    raise KeyboardInterrupt\n",
        "adapter_concurrency = 1",
    )
    assert main(["--config", str(config.source), "nightly"]) == 130
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == (
        "nightly: FAILED (exit 130): stopped before anything was judged or written"
    )
    assert "interrupted: stopped before anything was judged or written" in captured.err


# --- the gate on the shipped sample (factual 12, procedural 8, negative 5, out_of_scope 5) ---

#: A sentence the scripted judge reads as unsupported: faithfulness 1 (0 for WRONG).
UNSUPPORTED = "なお、この内容は2019年の旧プランのものです。"
WRONG = "いいえ、iPadでもご利用いただけます。"


def _judge_by_answer(request: JudgeRequest) -> Reply:
    """A judge that gives 2/2, faithfulness 1 to an answer with UNSUPPORTED and 0 to one with
    WRONG; relevance stays 2."""
    faithfulness = 0 if WRONG in request.answer else 1 if UNSUPPORTED in request.answer else 2
    reply = json.loads(good_reply(request).text) | {"faithfulness": faithfulness}
    return Reply(text=json.dumps(reply, ensure_ascii=False), finish_reason="stop")


def _sample_night(
    tmp_path: Path, changed: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """``judge nightly`` with the shipped judge.toml and sample set, its run's answers changed
    as ``changed`` says (question id → sentence added); reports and cache under ``tmp_path``.
    Its exit code and first line."""
    records = [json.loads(line) for line in (SAMPLE / "run.jsonl").read_text("utf-8").splitlines()]
    for record in records:
        if record.get("id") in changed:
            record["answer"] += changed[record["id"]]
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    toml = (REPO / "judge.toml").read_text(encoding="utf-8")
    for key, value in {
        "questions": SAMPLE / "questions.jsonl",
        "corpus": SAMPLE / "corpus.jsonl",
        "run": run,
        "labels": SAMPLE / "labels.jsonl",
        "prompt": REPO / "prompts" / "judge.v1.md",
        "cache_path": tmp_path / "cache.sqlite3",
        "dir": tmp_path / "reports",
    }.items():
        toml, replaced = re.subn(rf'(?m)^{key} = "[^"]*"', f'{key} = "{value}"', toml)
        assert replaced == 1, key
    config = tmp_path / "judge.toml"
    config.write_text(toml, encoding="utf-8")
    code = main(["--config", str(config), "nightly"])
    return code, capsys.readouterr().out.splitlines()[0]


@pytest.fixture
def scripted_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    use_backend(monkeypatch, ScriptedBackend(_judge_by_answer))


@pytest.mark.usefixtures("scripted_judge")
def test_one_flipped_verdict_of_a_five_question_type_is_listed_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _sample_night(tmp_path, {}, capsys)[0] == 1  # the first night: nothing to compare with
    # q03, one of the 5 negative questions, from faithfulness 2 to 0: its type's mean falls by
    # 0.4 (beyond the 0.10 margin), but 5 questions are fewer than min_questions = 8. Its
    # interval: a resample's mean is -2k/5, k ~ Binomial(5, 1/5); P(k = 0) = 0.33 puts the upper
    # end at 0, P(k <= 3) = 0.993 the lower at -6/5.
    code, first = _sample_night(tmp_path, {"q03": WRONG}, capsys)
    assert (code, first) == (
        0,
        "nightly: ok: no regression; listed, too few questions to call: judge negative "
        "faithfulness -0.400 [-1.200, +0.000] over 5 questions (and 1 more)",
    )
    report = latest_report(load_config(tmp_path / "judge.toml"))
    listed = [c for comp in report["comparisons"] for c in comp["changes"] if c["moved"]]
    assert {(c["type"], c["metric"], c["direction"]) for c in listed} == {
        ("negative", "faithfulness", "too_few"),
        ("negative", "full_marks", "too_few"),
    }


@pytest.mark.usefixtures("scripted_judge")
def test_faithfulness_falling_by_a_third_on_the_twelve_question_type_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _sample_night(tmp_path, {}, capsys)[0] == 1
    # Four of the 12 factual answers from faithfulness 2 to 1: -4/12 = -0.333; the interval
    # [-7/12, -1/12] (tests/results/test_paired.py) lies below 0.
    fell = dict.fromkeys(["q01", "q04", "q07", "q08"], UNSUPPORTED)
    code, first = _sample_night(tmp_path, fell, capsys)
    assert (code, first) == (
        1,
        "nightly: REGRESSED: judge factual faithfulness -0.333 [-0.583, -0.083] over 12 "
        "questions (and 1 more)",  # factual full_marks: 4 of 12 lost their 2/2
    )
    folder = tmp_path / "reports" / (tmp_path / "reports" / "latest").read_text("utf-8").strip()
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    assert (
        "| factual | faithfulness | 12 | 2.000 | 1.667 | -0.333 [-0.583, -0.083] | **regressed** "
        "| q01 2→1, q04 2→1, q07 2→1, q08 2→1 |"
    ) in report_md
