"""User code writes past ``sys.stdout``: to file descriptor 1 or 2 with ``os.write``, from a
thread, from an async adapter, or from a subprocess that inherits the descriptors.

Class of the hardening matrix (issue 34, "user code writes past the harness"): while an adapter
is asked, descriptors 1 and 2 go to its log (control characters shown as escapes); nothing raw
reaches the output, the nightly's first line is its verdict, and the descriptors are restored
when the block ends, by an exception or Ctrl-C too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.conftest import REPO
from tests.hostile.test_user_code import nightly_process

TinyAdapter = Callable[..., Config]

OSC8 = "\\x1b]8;;http://x\\x07evil\\x1b]8;;\\x07"
"""An OSC-8 hyperlink as the adapter's source writes it (a terminal would show 'evil' as a link)."""

ANSWERS = f'''
import asyncio
import os
import subprocess
import sys
import threading

ANSWERS = {{
    "年額プランはいくらですか？": ("pricing/plans", "年額3,800円です。"),
    "バックアップから戻す手順を教えて": ("backup/restore", "設定を開き、復元をタップします。"),
    "iPadでウィジェットは使えますか": ("widgets/sizes", "いいえ、使えません。"),
    "Windows版はありますか": ("pricing/plans", "ヘルプには記載がありません。"),
}}


def _reply(question):
    chunk, answer = ANSWERS[question]
    return {{"retrieved": [chunk], "answer": answer}}


def writes(question):
    os.write(1, b"{OSC8}\\n")
    os.write(2, b"fd2 \\x1b[2J cleared\\n")
    # one write (print may write its newline apart, and questions are asked at once)
    subprocess.run(["echo", "echoed by a subprocess"], check=True)
    return _reply(question)


def writes_from_a_thread(question):
    thread = threading.Thread(target=os.write, args=(1, b"from a thread \\x1b[31m\\n"))
    thread.start()
    thread.join()
    return _reply(question)


async def writes_async(question):
    os.write(1, b"{OSC8}\\n")
    await asyncio.sleep(0)
    return _reply(question)
'''


def _config(tiny_adapter: TinyAdapter, name: str, function: str) -> Path:
    config = tiny_adapter(name, ANSWERS + f"\nanswer = {function}\n")
    assert config.source is not None
    return config.source


def _log(toml: Path) -> str:
    (log,) = (toml.parent / "reports" / "runs").glob("*.log")
    return log.read_text(encoding="utf-8")


def test_bytes_written_to_fd_1_leave_the_nightlys_first_line_its_verdict(
    tiny_adapter: TinyAdapter,
) -> None:
    """A real process: the bytes on its stdout and stderr, as a cron mail or CI log gets them."""
    toml = _config(tiny_adapter, "fd_nightly", "writes")
    done = nightly_process(toml)
    out = done.stdout.decode("utf-8")
    assert out.splitlines()[0].startswith("nightly: "), out
    assert done.returncode == 1, done.stderr  # no baseline yet: the nightly's gate says so
    for stream in (done.stdout, done.stderr):
        assert b"\x1b" not in stream and b"\x07" not in stream
        assert b"evil" not in stream and b"echoed by a subprocess" not in stream
    assert b"kept in" in done.stderr
    text = _log(toml)
    assert text.count("\\x1b]8;;http://x\\x07evil\\x1b]8;;\\x07\n") == 4  # inert escapes
    assert text.count("fd2 \\x1b[2J cleared\n") == 4
    assert text.count("echoed by a subprocess\n") == 4
    assert "\x1b" not in text and "\x07" not in text


@pytest.mark.parametrize("function", ["writes", "writes_from_a_thread", "writes_async"])
def test_bytes_written_to_the_descriptors_go_to_the_log_in_process(
    function: str, tiny_adapter: TinyAdapter, capfd: pytest.CaptureFixture[str]
) -> None:
    toml = _config(tiny_adapter, f"fd_{function}", function)
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0
    captured = capfd.readouterr()
    for stream in (captured.out, captured.err):
        assert "\x1b" not in stream and "evil" not in stream and "from a thread" not in stream
    assert "kept in" in captured.err
    text = _log(toml)
    assert "\x1b" not in text
    expected = "from a thread \\x1b[31m\n" if function.endswith("thread") else "evil"
    assert expected in text


@pytest.mark.parametrize("stop", [RuntimeError("adapter bug"), KeyboardInterrupt()])
def test_the_descriptors_are_restored_when_the_block_ends_by_an_exception(
    stop: BaseException, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from judge.inputs.user_code import adapter_output, user_code

    before = [os.fstat(fd) for fd in (1, 2)]
    with pytest.raises(type(stop)), adapter_output(tmp_path / "a.log"):
        with user_code():
            os.write(1, b"inside\n")
        raise stop
    after = [os.fstat(fd) for fd in (1, 2)]
    assert [(s.st_dev, s.st_ino) for s in after] == [(s.st_dev, s.st_ino) for s in before]
    os.write(1, b"outside\n")
    assert capfd.readouterr().out == "outside\n"
    assert (tmp_path / "a.log").read_text(encoding="utf-8") == "inside\n"


def test_the_harness_writes_through_its_streams_while_the_descriptors_are_captured(
    tmp_path: Path,
) -> None:
    """The harness's ``print`` reaches the real stdout in order; the adapter's bytes do not."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from judge.inputs.user_code import adapter_output, user_code\n"
        f"with adapter_output(Path({str(tmp_path / 'a.log')!r})):\n"
        "    print('harness first')\n"
        "    with user_code():\n"
        "        os.write(1, b'user bytes\\n')\n"
        "        print('user print')\n"
        "    print('harness second')\n"
        "print('harness after')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        timeout=60,
    )
    assert done.stdout.decode("utf-8").splitlines() == [
        "harness first",
        "harness second",
        "harness after",
    ], done.stderr
    text = (tmp_path / "a.log").read_text(encoding="utf-8")
    assert "user bytes\n" in text and "user print\n" in text
