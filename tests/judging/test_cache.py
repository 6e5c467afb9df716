"""Cache properties: what re-judges, what does not, and what survives a crash."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenacity import wait_none

from judge.config import Config
from judge.config_backends import OllamaConfig
from judge.errors import ConfigError
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.judging.backends.ollama import OllamaBackend
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_fingerprint
from judge.judging.items import build_items
from judge.judging.judge import judge_items
from judge.judging.prompts import load_prompt
from judge.judging.verdict import Reply
from tests.conftest import REPO, RUN, committed_replies
from tests.fakes import ScriptedBackend

Tiny = Callable[..., Config]


def _run_judge(
    config: Config, backend: ScriptedBackend, prompt_path: Path, cache_path: Path
) -> int:
    """Judge the tiny run; return how many items reached the backend."""
    golden = load_golden(config.data)
    assert config.data.run is not None
    items = build_items(golden, load_run(config.data.run, golden), 5)
    before = len(backend.calls)
    cache = VerdictCache(cache_path)
    try:
        outcome = judge_items(
            items, backend, load_prompt(prompt_path), cache, retry_wait=wait_none()
        )
    finally:
        cache.close()
    assert len(outcome.verdicts) == len(items)
    return len(backend.calls) - before


def test_prompt_edit_rejudges_everything_and_reverting_costs_nothing(
    tiny: Tiny, tmp_path: Path
) -> None:
    config, backend, cache = tiny(), ScriptedBackend(), tmp_path / "c.sqlite3"
    prompt = tmp_path / "judge.v9.md"
    original = (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8")
    prompt.write_text(original, encoding="utf-8")
    assert _run_judge(config, backend, prompt, cache) == 4
    assert _run_judge(config, backend, prompt, cache) == 0
    prompt.write_text(
        original + "\nA procedure in the wrong order loses a point.\n", encoding="utf-8"
    )
    assert _run_judge(config, backend, prompt, cache) == 4
    prompt.write_text(original, encoding="utf-8")
    assert _run_judge(config, backend, prompt, cache) == 0


def test_editing_one_answer_rejudges_that_item_alone(tiny: Tiny, tmp_path: Path) -> None:
    backend, cache, prompt = (
        ScriptedBackend(),
        tmp_path / "c.sqlite3",
        REPO / "prompts" / "judge.v1.md",
    )
    assert _run_judge(tiny(), backend, prompt, cache) == 4
    run = [dict(r) for r in RUN]
    run[2] = {**run[2], "answer": "設定を開いて復元します。"}
    assert _run_judge(tiny(run=run), backend, prompt, cache) == 1
    assert backend.calls[-1].answer == "設定を開いて復元します。"


def test_a_different_model_or_option_is_a_different_judge(tiny: Tiny, tmp_path: Path) -> None:
    cache, prompt = tmp_path / "c.sqlite3", REPO / "prompts" / "judge.v1.md"
    assert _run_judge(tiny(), ScriptedBackend(model="a"), prompt, cache) == 4
    assert _run_judge(tiny(), ScriptedBackend(model="b"), prompt, cache) == 4
    options = {"temperature": 0, "seed": 7}
    assert _run_judge(tiny(), ScriptedBackend(model="a", options=options), prompt, cache) == 4


def _fake_ollama(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/api/version":
        return httpx.Response(200, json={"version": "0.13.0"})
    return httpx.Response(
        200,
        json={
            "models": [
                {
                    "model": "gemma3:12b",
                    "digest": "abc123",
                    "name": "gemma3:12b",
                    "size": 1,
                    "modified_at": "2026-01-01T00:00:00Z",
                }
            ]
        },
    )


def test_timeout_concurrency_and_host_do_not_change_the_fingerprint() -> None:
    prompt = load_prompt(REPO / "prompts" / "judge.v1.md")
    transport = httpx.MockTransport(_fake_ollama)
    a = OllamaBackend(OllamaConfig(host="http://a:11434", timeout_s=30), transport=transport)
    b = OllamaBackend(
        OllamaConfig(host="http://b:9999", timeout_s=900, keep_alive="1h"), transport=transport
    )
    assert judge_fingerprint(a.identity, prompt) == judge_fingerprint(b.identity, prompt)
    c = OllamaBackend(OllamaConfig(num_ctx=16384), transport=transport)
    assert judge_fingerprint(c.identity, prompt) != judge_fingerprint(a.identity, prompt)


def test_concurrency_hits_the_same_cache(tiny: Tiny, tmp_path: Path) -> None:
    config, cache, prompt = tiny(), tmp_path / "c.sqlite3", REPO / "prompts" / "judge.v1.md"
    golden = load_golden(config.data)
    assert config.data.run is not None
    items = build_items(golden, load_run(config.data.run, golden), 5)
    backend = ScriptedBackend()
    for concurrency in (1, 3):
        db = VerdictCache(cache)
        judge_items(items, backend, load_prompt(prompt), db, concurrency=concurrency)
        db.close()
    assert len(backend.calls) == 4


def test_stats_and_prune(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite3")
    cache.register("h1:old", {"backend": "x"}, "old judge")
    cache.put("h1:old", "k1", "q1", Reply(text="{}"))
    cache.put("h1:old", "k2", "q2", Reply(kind="error", detail="never stored"))
    cache.db.execute("UPDATE fingerprints SET last_used_at = '2020-01-01T00:00:00+00:00'")
    cache.register("h1:new", {"backend": "y"}, "new judge")
    stats = {s.fingerprint: s for s in cache.stats()}
    assert stats["h1:old"].replies == 1 and stats["h1:new"].replies == 0
    assert stats["h1:old"].parts == {"backend": "x"}
    assert cache.prune(30) == (1, 1)
    assert [s.fingerprint for s in cache.stats()] == ["h1:new"]
    cache.close()


def test_parts_reads_one_fingerprint_as_stats_does(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite3")
    cache.register("h1:a", {"backend": "x", "mode": "cited", "options": {"seed": 1}}, "a")
    cache.register("h1:b", {"backend": "y"}, "b")
    by_stats = {s.fingerprint: s.parts for s in cache.stats()}
    assert (
        cache.parts("h1:a")
        == by_stats["h1:a"]
        == {
            "backend": "x",
            "mode": "cited",
            "options": {"seed": 1},
        }
    )
    assert cache.parts("h1:b") == by_stats["h1:b"]
    assert cache.parts("h1:never") is None
    cache.close()


def test_a_damaged_cache_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    try:
        VerdictCache(path)
    except Exception as exc:
        assert "the cache cannot be opened" in str(exc) and "move the file away" in str(exc)
    else:
        raise AssertionError("expected an error")


WRITER = """
import sys, time
from pathlib import Path
from judge.judging.cache import VerdictCache
from judge.judging.verdict import Reply
cache = VerdictCache(Path(sys.argv[1]))
name, count, pause = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
cache.register("h1:fp", {"backend": "x"}, "label")
for i in range(count):
    key = f"shared-{i}" if i % 2 else f"{name}-{i}"
    cache.put("h1:fp", key, f"q{i}", Reply(text='{"i": %d, "by": "%s"}' % (i, name)))
    time.sleep(pause)
cache.close()
"""


def _writer(cache: Path, name: str, count: int, pause: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(cache), name, str(count), str(pause)], env=env
    )


def _rows(cache: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(cache)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = db.execute("SELECT item_key, reply FROM replies").fetchall()
    db.close()
    return rows


def test_a_run_killed_midway_leaves_every_finished_row_intact(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite3"
    process = _writer(cache, "a", 10_000, 0.002)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if committed_replies(cache) >= 20:
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    rows = _rows(cache)
    assert len(rows) >= 20
    for _, text in rows:
        assert Reply.model_validate_json(text).text.startswith('{"i": ')


def test_two_processes_writing_at_once_do_not_corrupt_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite3"
    VerdictCache(cache).close()  # create the file (and WAL mode) before the race
    writers = [_writer(cache, name, 300, 0.0) for name in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    rows = dict(_rows(cache))
    # 150 own keys each, plus 150 shared keys written by both (the last write wins).
    assert len(rows) == 450
    assert all(Reply.model_validate_json(text) for text in rows.values())


def _filled(path: Path, rows: int = 200) -> Path:
    cache = VerdictCache(path)
    cache.register("h1:fp", {"backend": "x"}, "label")
    for i in range(rows):
        cache.put("h1:fp", f"k{i}", f"q{i}", Reply(text="x" * 500))
    cache.close()
    return path


def test_garbage_pages_behind_a_valid_header_are_a_config_error_at_the_first_query(
    tmp_path: Path,
) -> None:
    path = _filled(tmp_path / "c.sqlite3")
    raw = path.read_bytes()
    page = int.from_bytes(raw[16:18], "big")
    path.write_bytes(raw[:page] + b"\xa5" * (len(raw) - page))  # the schema page is intact
    cache = VerdictCache(path)  # opens: the damage is only met by a query
    try:
        with pytest.raises(ConfigError) as caught:
            cache.get_many("h1:fp", ["k1"])
    finally:
        cache.close()
    message = str(caught.value)
    assert message.startswith(f"{path}: the cache cannot be opened or read: the file is damaged")
    assert "move the file away" in message and "only a cache" in message


def _read_only_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    connect = sqlite3.connect

    def read_only(path: Any, **kwargs: Any) -> sqlite3.Connection:
        return connect(f"file:{path}?mode=ro", uri=True, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)


def test_a_read_only_cache_is_a_permissions_problem_not_a_damaged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _filled(tmp_path / "c.sqlite3", rows=3)
    _read_only_connect(monkeypatch)  # as SQLite opens a file its user cannot write
    cache = VerdictCache(path)  # reading still works: stats, a re-render
    try:
        assert [s.replies for s in cache.stats()] == [3]
        assert len(cache.get_many("h1:fp", ["k0", "k1"])) == 2
        with pytest.raises(ConfigError) as caught:
            cache.put("h1:fp", "k9", "q9", Reply(text="{}"))
    finally:
        cache.close()
    message = str(caught.value)
    assert "attempt to write a readonly database" in message
    assert "a permissions problem" in message and "owner and permissions" in message
    assert "move the file away" not in message


@pytest.mark.skipif(os.geteuid() == 0, reason="file modes do not stop root")
def test_a_cache_file_without_write_permission_says_so(tmp_path: Path) -> None:
    path = _filled(tmp_path / "c.sqlite3", rows=1)
    path.chmod(0o444)
    cache = VerdictCache(path)
    try:
        with pytest.raises(ConfigError, match="a permissions problem"):
            cache.register("h1:other", {}, "label")
    finally:
        cache.close()
        path.chmod(0o644)


def test_a_cache_path_that_is_a_folder_says_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "c.sqlite3").mkdir()
    with pytest.raises(ConfigError, match=r"judge.cache_path must name a file in a folder"):
        VerdictCache(tmp_path / "c.sqlite3")


def test_put_many_adds_only_new_model_replies_in_one_transaction(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite3")
    try:
        cache.put("h1:fp", "k0", "q0", Reply(text="judged live"))
        rows = [
            ("k0", "q0", Reply(text="imported")),  # already there: kept as it was
            ("k1", "q1", Reply(text="imported")),
            ("k2", "q2", Reply(kind="truncated", detail="over the context")),  # never stored
            ("k3", "q3", Reply(kind="error", detail="HTTP 500")),
        ]
        assert cache.put_many("h1:fp", rows) == 1
        assert cache.put_many("h1:fp", rows) == 0  # idempotent
        assert {
            k: r.text for k, r in cache.get_many("h1:fp", ["k0", "k1", "k2", "k3"]).items()
        } == {
            "k0": "judged live",
            "k1": "imported",
        }
        assert cache.cached_keys("h1:fp") == {"k0", "k1"} and cache.cached_keys("h1:x") == set()

        def failing() -> Iterator[tuple[str, str, Reply]]:
            yield ("k5", "q5", Reply(text="a"))
            yield ("k6", "q6", Reply(text="b"))
            raise KeyboardInterrupt  # a crash in the middle of the lot

        with pytest.raises(KeyboardInterrupt):
            cache.put_many("h1:fp", failing())
        assert cache.cached_keys("h1:fp") == {"k0", "k1"}  # all of the lot or none of it
        assert not cache.db.in_transaction
        assert cache.put_many("h1:fp", [("k5", "q5", Reply(text="a"))]) == 1
    finally:
        cache.close()
