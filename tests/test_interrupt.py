"""Ctrl-C during a real `judge run` against a slow server: clean exit, nothing lost."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from judge.config import Config
from tests import loopback_ollama
from tests.conftest import REPO, committed_replies

Tiny = Callable[..., Config]


@pytest.fixture
def slow_server() -> Iterator[int]:
    server = loopback_ollama.start(delay_s=0.7, slots=1)
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_sigint_keeps_finished_verdicts_and_the_next_run_resumes(
    tiny: Tiny, slow_server: int
) -> None:
    config = tiny()
    assert config.source is not None
    toml = config.source
    toml.write_text(
        toml.read_text(encoding="utf-8")
        + f'\n[judge.ollama]\nhost = "http://127.0.0.1:{slow_server}"\nmodel = "{loopback_ollama.MODEL}"\n',
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "judge", "--config", str(toml), "run", "--backend", "ollama"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    cache = config.judge.cache_path
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until at least one verdict is committed
        time.sleep(0.1)
        if committed_replies(cache) >= 1:
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, (out, err)
    assert "run the same command again to resume" in err
    with sqlite3.connect(cache) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
    assert 1 <= kept < 4
    # No report for an interrupted run: a half report must not look like a finished one.
    assert not (config.reports.dir / "latest").exists()
    assert [p for p in config.reports.dir.iterdir() if p.is_dir()] == []
    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({kept} from the cache)" in resumed.stdout
