"""``judge check --repeat N`` (issue 21 part 7): the adapter asked N times afresh, the share of
questions whose retrieval order or answer changed reported per type, nothing saved as answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config

TinyAdapter = Callable[..., Config]

#: The tiny set's four questions answered as its recorded run answers them. ``CALLS`` counts
#: the asks of each question; ``FLAKY`` says how an ask changes the answer.
ADAPTER = """
CALLS = {}
ANSWERS = {
    "年額プランはいくらですか？": (["pricing/plans", "pricing/trial"], "年額3,800円です。"),
    "バックアップから戻す手順を教えて": (
        ["backup/auto", "widgets/sizes", "backup/restore"],
        "設定を開き、バックアップを選び、復元をタップします。",
    ),
    "iPadでウィジェットは使えますか": (["pricing/trial", "pricing/plans"], "はい、使えます。"),
    "Windows版はありますか": (["pricing/plans"], "ヘルプには記載がありません。"),
}
FLAKY = FLAKY_HERE


def answer(question):
    n = CALLS[question] = CALLS.get(question, 0) + 1
    retrieved, text = ANSWERS[question]
    how = FLAKY.get(question)
    if how == "answer":
        text = f"{text}（{n}回目）"
    elif how == "order" and n % 2 == 0:
        retrieved = list(reversed(retrieved))
    elif how == "space":
        text = text + " " * n
    elif how == "fail" and n == 3:
        raise RuntimeError("the generator is down")
    print("asked", question)
    return {"retrieved": retrieved, "answer": text}
"""

FLAKY = {
    "年額プランはいくらですか？": "answer",  # q1, factual: another answer every time
    "バックアップから戻す手順を教えて": "order",  # q2, procedural: reordered every other ask
    "iPadでウィジェットは使えますか": "space",  # q3, negative: only more trailing spaces
}


def _adapter(tiny_adapter: TinyAdapter, name: str, flaky: dict[str, str]) -> str:
    config = tiny_adapter(name, ADAPTER.replace("FLAKY_HERE", repr(flaky)))
    assert config.source is not None
    return str(config.source)


def _saved(config: str) -> list[Path]:
    return sorted((Path(config).parent / "reports" / "runs").glob("*.jsonl"))


def test_an_adapter_that_answers_differently_each_time_is_reported_per_type(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _adapter(tiny_adapter, "flaky_rag", FLAKY)
    assert main(["--config", config, "check", "--no-judge", "--repeat", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    # check asks once (no saved answers yet), then the repeat twice: asks 2 and 3. q1 changes
    # every time; q2 is reversed on even asks, so 2 and 3 differ; q3 gains a trailing space,
    # which normalising ignores; q4 never changes.
    start = out.index(
        "reproducibility over 2 asks: retrieval order changed for 1 of 4, answers changed for "
        "1 of 4"
    )
    assert out[start + 1 : start + 5] == [
        "  retrieval order changed: factual 0 of 1, procedural 1 of 1, negative 0 of 1, "
        "out_of_scope 0 of 1",
        "  answers changed:         factual 1 of 1, procedural 0 of 1, negative 0 of 1, "
        "out_of_scope 0 of 1",
        "  answers are compared normalised (judge.textnorm: width, case, whitespace and quote "
        "marks ignored), so a trailing space is no change",
        "  changed: q1 (answer), q2 (retrieval order)",
    ]
    assert "make it deterministic first (temperature 0?)" in out[start + 5]
    assert out[-1] == "ok"
    # What the adapter prints ("asked <question>") goes to its log, never to the output.
    assert not [line for line in out if line.startswith("asked ")]


def test_a_deterministic_adapter_changes_0_of_n(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _adapter(tiny_adapter, "steady_rag", {})
    assert main(["--config", config, "check", "--no-judge", "--repeat", "3"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert (
        "reproducibility over 3 asks: retrieval order changed for 0 of 4, answers changed for "
        "0 of 4"
    ) in out
    assert not any(line.startswith("  changed:") for line in out)
    assert out[-1] == "ok"
    # What it printed during the repeat is in a log of its own, named once; never answers.
    (log,) = (Path(config).parent / "reports" / "runs").glob("repeat-*.log")
    assert log.read_text(encoding="utf-8").count("asked") == 3 * 4
    assert f"kept in {log}" in captured.err


def test_the_repeat_saves_no_answers_a_later_run_would_reuse(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _adapter(tiny_adapter, "saving_rag", FLAKY)
    assert main(["--config", config, "check", "--no-judge"]) == 0  # asks once and saves the answers
    (saved,) = _saved(config)
    before = saved.read_bytes()
    assert main(["--config", config, "check", "--no-judge", "--repeat", "2"]) == 0
    # check reused the saved answers; the repeat's two asks were compared, not saved.
    assert _saved(config) == [saved] and saved.read_bytes() == before
    capsys.readouterr()
    assert main(["--config", config, "retrieval"]) == 0
    assert f"answers reused from {saved}" in capsys.readouterr().err


def test_a_failure_in_one_ask_is_an_error_of_check_and_the_rest_is_still_compared(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    # q4 fails on its third ask: the second of the repeat (check itself asked first).
    config = _adapter(tiny_adapter, "failing_rag", {"Windows版はありますか": "fail"})
    assert main(["--config", config, "check", "--no-judge", "--repeat", "2"]) == 2
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert (
        "reproducibility over 2 asks: retrieval order changed for 0 of 3, answers changed for "
        "0 of 3"
    ) in out
    assert "  not compared (1, no usable answer in every ask): q4" in out
    assert "ok" not in out
    assert (
        "error: --repeat, ask 2 of 2: the adapter failed for question 'q4': RuntimeError: the "
        "generator is down"
    ) in captured.err.splitlines()


def test_an_invalid_answer_in_one_ask_is_named_and_left_out(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    code = ADAPTER.replace("FLAKY_HERE", "{}").replace(
        "    print(",
        '    if n == 2 and question.startswith("Windows"):\n'
        '        retrieved = ["no/such-chunk"]\n    print(',
    )
    config = tiny_adapter("bad_chunk_rag", code)
    assert main(["--config", str(config.source), "check", "--no-judge", "--repeat", "2"]) == 2
    captured = capsys.readouterr()
    assert "  not compared (1, no usable answer in every ask): q4" in captured.out.splitlines()
    assert (
        "error: --repeat, ask 1 of 2, question 'q4': retrieved: chunk 'no/such-chunk' (rank 1) "
        "is not in the corpus"
    ) in captured.err.splitlines()


def test_a_recorded_run_is_refused_in_one_line_before_anything_is_loaded(
    tiny: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert main(["--config", str(config.source), "check", "--no-judge", "--repeat", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing checked, nothing shown
    (line,) = captured.err.splitlines()
    assert line.startswith("error: --repeat needs data.adapter (module:function): a recorded run")
    assert "run.jsonl" in line


def test_a_run_file_given_with_an_adapter_is_refused_too(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = _adapter(tiny_adapter, "other_rag", {})
    run = tmp_path / "other.jsonl"
    run.write_text("", encoding="utf-8")
    assert (
        main(["--config", config, "check", "--no-judge", "--repeat", "2", "--run", str(run)]) == 2
    )
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: --repeat asks data.adapter again, but --run gives a run file")
    assert not _saved(config)  # the adapter was not asked


@pytest.mark.parametrize("value", ["1", "0", "-2", "two", "101"])
def test_repeat_takes_2_to_100_checked_by_argparse(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--config", "no-such.toml", "check", "--repeat", value])
    assert exited.value.code == 2
    assert "--repeat: must be an integer from 2 to 100" in capsys.readouterr().err
