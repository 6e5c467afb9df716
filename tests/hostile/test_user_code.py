"""The user's code misbehaves: an adapter or a sweep factory raises a ``BaseException`` of its
own, or prints (escape sequences and bells included) while it is asked.

Classes of the hardening matrix (issue 20), a case per command or kind of user code:

- **a BaseException of its own** (``class Abort(BaseException)``) from a plain adapter, an
  ``async def`` one, a plain function that hands back a coroutine, a module on import and a
  sweep factory: one failed question with its message (or one line refusing the adapter or the
  setting), never a traceback; ``run`` exits 0, ``check`` 2 and ``nightly`` 1, as documented;
- **output of the user's code**: what a plain or async adapter, or its module on import,
  prints goes to the log beside its answers (named in a warning line), never to the harness's
  output: the nightly's first line is its verdict, and no ESC or BEL byte reaches it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from judge.cli import main
from judge.config import Config
from judge.errors import AdapterError
from tests.conftest import REPO, latest_report

TinyAdapter = Callable[..., Config]

ANSWERS = '''
import asyncio

ANSWERS = {
    "年額プランはいくらですか？": ("pricing/plans", "年額3,800円です。"),
    "バックアップから戻す手順を教えて": ("backup/restore", "設定を開き、復元をタップします。"),
    "iPadでウィジェットは使えますか": ("widgets/sizes", "いいえ、使えません。"),
    "Windows版はありますか": ("pricing/plans", "ヘルプには記載がありません。"),
}


class Abort(BaseException):
    """A signal of the user's own, derived from BaseException as some frameworks do."""


def _reply(question):
    chunk, answer = ANSWERS[question]
    return {"retrieved": [chunk], "answer": answer}


def aborts(question):
    if question.startswith("Windows"):
        raise Abort("stop at Windows")
    return _reply(question)


async def aborts_async(question):
    if question.startswith("Windows"):
        raise Abort("stop at Windows")
    return _reply(question)


def hands_back_an_aborting_coroutine(question):
    return aborts_async(question)


def prints(question):
    print("adapter stdout \\x1b[31mred\\x1b[0m \\x07")
    print("adapter stderr \\x1b]0;title\\x07", file=__import__("sys").stderr)
    return _reply(question)


async def prints_async(question):
    print("adapter stdout \\x1b[31mred\\x1b[0m \\x07")
    await asyncio.sleep(0)
    print("adapter stderr \\x1b]0;title\\x07", file=__import__("sys").stderr)
    return _reply(question)
'''


class Abort(NamedTuple):
    name: str
    function: str


ABORTS = [
    Abort("plain", "aborts"),
    Abort("async", "aborts_async"),
    Abort("coroutine-handed-back", "hands_back_an_aborting_coroutine"),
]
FAILED = "RuntimeError: the adapter raised Abort(stop at Windows)"


def _config(tiny_adapter: TinyAdapter, name: str, function: str, code: str = ANSWERS) -> Path:
    config = tiny_adapter(name, code + f"\nanswer = {function}\n")
    assert config.source is not None
    return config.source


@pytest.mark.parametrize("case", ABORTS, ids=lambda c: c.name)
def test_a_base_exception_of_its_own_is_one_failed_question_in_run(
    case: Abort, tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _config(tiny_adapter, f"abort_run_{case.function}", case.function)
    code = main(["--config", str(toml), "run", "--backend", "lexical"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    assert f"adapter failed for question 'q4': {FAILED}" in " ".join(err.split())
    report = latest_report(load_config_of(toml))
    assert report["adapter_failed"] == {"q4": FAILED}


def nightly_process(toml: Path) -> subprocess.CompletedProcess[bytes]:
    """``judge nightly`` with the lexical judge in a process of its own, the adapter's folder on
    its path: the bytes of its stdout and stderr, as a cron mail or CI log gets them."""
    return subprocess.run(
        [sys.executable, "-m", "judge", "--config", str(toml), "nightly", "--backend", "lexical"],
        env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{toml.parent}"},
        capture_output=True,
        timeout=120,
    )


def load_config_of(toml: Path) -> Config:
    from judge.config import load_config

    return load_config(toml)


@pytest.mark.parametrize("case", ABORTS, ids=lambda c: c.name)
def test_a_base_exception_of_its_own_fails_check_with_exit_2(
    case: Abort, tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _config(tiny_adapter, f"abort_check_{case.function}", case.function)
    code = main(["--config", str(toml), "check", "--no-judge"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert "Traceback" not in err
    assert FAILED in err


def test_a_base_exception_of_its_own_fails_the_nightly_with_exit_1(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _config(tiny_adapter, "abort_nightly", "aborts")
    code = main(["--config", str(toml), "nightly", "--backend", "lexical"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert captured.out.splitlines()[0].startswith("nightly: ")
    assert "Traceback" not in captured.err


def test_a_base_exception_on_import_refuses_the_adapter_in_one_line(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    code = "class Abort(BaseException):\n    pass\n\nraise Abort('no index')\n\ndef answer(q):\n    pass\n"
    config = tiny_adapter("abort_on_import", code)
    assert config.source is not None
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "error: adapter 'abort_on_import:answer': cannot import 'abort_on_import': Abort: no index"
    ]


def test_a_base_exception_of_its_own_from_a_sweep_factory_refuses_the_setting(
    tmp_path: Path,
) -> None:
    from judge.sweep.settings import Built, Setting

    (tmp_path / "abort_factory.py").write_text(
        "class Abort(BaseException):\n    pass\n\n"
        "def build(params):\n    raise Abort(f'no index for {params}')\n",
        encoding="utf-8",
    )
    try:
        built = Built("abort_factory:build", Setting({"chunk_size": 400}), tmp_path)
        with pytest.raises(AdapterError) as caught:
            built.built()
        assert str(caught.value) == (
            "sweep.factory 'abort_factory:build' rejects the setting chunk_size=400: "
            "RuntimeError: the adapter raised Abort(no index for {'chunk_size': 400})"
        )
        with pytest.raises(AdapterError):  # a question asked under it fails the same way
            built("q")
    finally:
        sys.modules.pop("abort_factory", None)


# --- output of the user's code -------------------------------------------------------------------


@pytest.mark.parametrize("function", ["prints", "prints_async"])
def test_what_the_adapter_prints_goes_to_its_log_not_to_the_output(
    function: str, tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    code = ANSWERS + "\nprint('importing \\x1b[2J the adapter')\n"
    toml = _config(tiny_adapter, f"printing_{function}", function, code)
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert "adapter stdout" not in stream and "importing" not in stream
        assert "\x1b" not in stream and "\x07" not in stream
    (log,) = (toml.parent / "reports" / "runs").glob("*.log")
    (answers,) = (toml.parent / "reports" / "runs").glob("*.jsonl")
    assert log.name == answers.name.removesuffix(".jsonl") + ".log"  # beside its answers
    text = log.read_text(encoding="utf-8")
    assert text.count("adapter stdout \x1b[31mred\x1b[0m \x07\n") == 4
    assert text.count("adapter stderr \x1b]0;title\x07\n") == 4
    assert "importing \x1b[2J the adapter" in text
    assert (
        f"warning: the adapter printed to stdout or stderr while it was asked: kept in {log}"
        in (" ".join(captured.err.split()))
    )


def test_an_adapter_that_prints_leaves_the_nightlys_first_line_its_verdict(
    tiny_adapter: TinyAdapter,
) -> None:
    """A real process: the bytes on its stdout, as a cron mail or CI log gets them."""
    toml = _config(tiny_adapter, "printing_nightly", "prints")
    done = nightly_process(toml)
    out = done.stdout.decode("utf-8")
    assert out.splitlines()[0].startswith("nightly: "), out
    assert done.returncode == 1  # no baseline yet: the nightly's gate says so
    for stream in (done.stdout, done.stderr):
        assert b"\x1b" not in stream and b"\x07" not in stream
        assert b"adapter stdout" not in stream
    assert b"kept in" in done.stderr


def test_an_adapter_that_prints_nothing_leaves_no_log(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _config(tiny_adapter, "quiet_adapter", "_reply")
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0
    assert "kept in" not in capsys.readouterr().err
    assert not list((toml.parent / "reports" / "runs").glob("*.log"))


def test_the_adapters_log_is_named_once_and_only_when_it_was_asked(
    tiny_adapter: TinyAdapter, capsys: pytest.CaptureFixture[str]
) -> None:
    """The summary's warnings name the log (``Inputs.adapter_log``); the adapter module no
    longer logs the line too, so it is printed once. Answers reused without asking the adapter
    again printed nothing this time: no line."""
    from judge.pipeline.inputs import load_inputs

    toml = _config(tiny_adapter, "printing_once", "prints")
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    (log,) = (toml.parent / "reports" / "runs").glob("*.log")
    assert err.count("the adapter printed to stdout or stderr") == 1
    assert err.count(f"kept in {log}") == 1
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0  # answers reused
    assert "kept in" not in capsys.readouterr().err
    inputs = load_inputs(load_config_of(toml), fresh_answers=True)
    assert inputs.adapter_log is not None and inputs.adapter_log != log  # a log of its own
    assert (
        inputs.warnings().count(
            f"the adapter printed to stdout or stderr while it was asked: kept in "
            f"{inputs.adapter_log} (never shown here)"
        )
        == 1
    )
    assert load_inputs(load_config_of(toml)).adapter_log is None  # reused: not asked


def test_two_threads_printing_at_once_leave_whole_lines_in_the_log(tmp_path: Path) -> None:
    """print() writes its text and its newline in two calls: with several questions asked at
    once, two threads' prints must not interleave mid-line (they did, once in a loaded run)."""
    import threading

    from judge.inputs.user_code import AdapterLog

    log = AdapterLog(tmp_path / "adapter.log")
    first_text, second_line = threading.Event(), threading.Event()

    def one() -> None:
        log.write("one says \x1b[31mred\x1b[0m")
        first_text.set()
        second_line.wait(5)
        log.write("\n")

    def two() -> None:
        first_text.wait(5)
        log.write("two says hi")
        log.write("\n")
        second_line.set()
        log.write("two, unfinished")  # no newline: written when the log closes

    threads = [threading.Thread(target=one), threading.Thread(target=two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    log.close()
    assert (tmp_path / "adapter.log").read_text(encoding="utf-8") == (
        "two says hi\none says \x1b[31mred\x1b[0m\ntwo, unfinished\n"
    )
    assert log.written and log.chars == len(
        "one says \x1b[31mred\x1b[0m\ntwo says hi\ntwo, unfinished"
    )
    log.write("late\n")  # an abandoned thread after the command stopped listening
    assert (tmp_path / "adapter.log").read_text(encoding="utf-8").endswith("late\n")
