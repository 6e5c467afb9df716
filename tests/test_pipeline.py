"""The one wiring: evaluate() with an injected backend, the lock, answers asked once, async
adapters on one loop, questions without chunk labels, retired labels, re-rendering."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.errors import HarnessError
from judge.hashing import text_sha256
from judge.inputs.user_code import adapter_loop
from judge.io.lock import run_lock
from judge.pipeline.evaluate import evaluate
from judge.pipeline.inputs import load_inputs
from judge.pipeline.report import rerender
from tests.conftest import QUESTIONS, RUN, SAMPLE, write_jsonl
from tests.fakes import ScriptedBackend

Tiny = Callable[..., Config]


def test_evaluate_with_an_injected_backend(tiny: Tiny) -> None:
    backend = ScriptedBackend()
    closed: list[bool] = []
    backend.close = lambda: closed.append(True)  # type: ignore[method-assign]
    result = evaluate(tiny(), backend=backend)
    assert len(backend.calls) == 4
    assert closed == []  # the caller's backend stays open: the caller owns it
    assert result.folder.path.is_dir()
    assert result.folder.manifest.judge.backend == "scripted"
    assert result.folder.manifest.judge.chosen_because == "given by the caller"
    assert list(result.judge_table.index) == [
        "factual",
        "procedural",
        "negative",
        "out_of_scope",
        "all",
    ]
    assert result.judge_table.loc["all", "faithfulness"] == 2.0
    questions = result.questions()
    assert list(questions.index) == ["q1", "q2", "q3", "q4"]
    assert set(questions["status"]) == {"ok"}
    assert questions.loc["q1", "recall@5"] == 1.0
    assert result.gate.verdict.startswith("no compatible earlier run")
    # A second evaluation is served from the cache and compared with the first.
    again = evaluate(tiny(), backend=backend)
    assert len(backend.calls) == 4
    assert again.gate.verdict == "ok: no regression"


def test_a_backend_name_overrides_the_config(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend="lexical")
    assert result.folder.manifest.judge.backend == "lexical"


# --- adapters: asked once, after the lock ---------------------------------------------------

COUNTING_ADAPTER = """
import pathlib

CALLS = pathlib.Path(__file__).with_name("calls.txt")

def answer(question):
    with CALLS.open("a", encoding="utf-8") as handle:
        handle.write(question + "\\n")
    if "Windows" in question:
        return {"retrieved": ["pricing/plans"], "answer": "記載がありません。"}
    return {"retrieved": ["pricing/plans", "backup/restore"], "answer": "回答"}
"""


@pytest.fixture
def counting_adapter(tiny_adapter: Callable[..., Config], tmp_path: Path) -> tuple[Config, Path]:
    return tiny_adapter("counting_rag", COUNTING_ADAPTER), tmp_path / "calls.txt"


def _calls(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_the_adapter_is_asked_once_for_every_command(
    counting_adapter: tuple[Config, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    config, calls = counting_adapter
    toml = str(config.source)
    assert main(["--config", toml, "check", "--no-judge"]) == 0
    assert _calls(calls) == 4
    assert main(["--config", toml, "retrieval"]) == 0
    assert main(["--config", toml, "trec", "export"]) == 0
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    assert _calls(calls) == 4  # every later command scored the same saved answers
    assert "answers reused from" in capsys.readouterr().err
    assert main(["--config", toml, "check", "--no-judge", "--fresh-answers"]) == 0
    assert _calls(calls) == 8
    # The nightly measures tonight's system: it asks the adapter every time.
    assert main(["--config", toml, "nightly", "--backend", "lexical"]) in (0, 1)
    assert _calls(calls) == 12


def test_run_checks_the_lock_before_asking_the_adapter(
    counting_adapter: tuple[Config, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    config, calls = counting_adapter
    with run_lock(config.reports.dir):
        assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 4
    assert "another judge run (pid " in capsys.readouterr().err
    assert _calls(calls) == 0


# --- an async adapter with one module-level client --------------------------------------------

ASYNC_ADAPTER = """
import httpx

# One client for the process, as real adapters keep one: its connections belong to the event
# loop it first ran on, so every question must run on that same loop.
client = httpx.AsyncClient(base_url="http://127.0.0.1:{port}")

async def answer(question):
    response = await client.post("/answer", json={{"question": question}})
    response.raise_for_status()
    return response.json()
"""


@pytest.fixture
def rag_server() -> Iterator[int]:
    """A RAG system on loopback that answers the sample questions as the sample run does."""
    questions = {
        json.loads(line)["id"]: json.loads(line)["question"]
        for line in (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    }
    answers = {}
    for line in (SAMPLE / "run.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "id" in record:
            answers[questions[record["id"]]] = {
                "retrieved": record["retrieved"],
                "answer": record["answer"],
            }

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            question = json.loads(self.rfile.read(length))["question"]
            data = json.dumps(answers[question], ensure_ascii=False).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_an_async_adapter_with_a_module_level_client_answers_every_question(
    tmp_path: Path, rag_server: int
) -> None:
    (tmp_path / "async_rag.py").write_text(ASYNC_ADAPTER.format(port=rag_server), encoding="utf-8")
    toml = tmp_path / "judge.toml"
    toml.write_text(
        f'[data]\nquestions = "{SAMPLE / "questions.jsonl"}"\ncorpus = "{SAMPLE / "corpus.jsonl"}"\n'
        'adapter = "async_rag:answer"\nadapter_concurrency = 4\n'
        f'[reports]\ndir = "{tmp_path / "reports"}"\n',
        encoding="utf-8",
    )
    from judge.config import load_config

    try:
        inputs = load_inputs(load_config(toml), fresh_answers=True)
        assert inputs.run.meta.failed == {}
        assert len(inputs.run.records) == 30
        # A second produced run in the same process reuses the same loop and client.
        again = load_inputs(load_config(toml), fresh_answers=True)
        assert again.run.meta.failed == {}
        assert again.run.records == inputs.run.records
    finally:
        module = sys.modules.pop("async_rag", None)
        if module is not None:  # the client lives as long as its loop; close it on that loop
            asyncio.run_coroutine_threadsafe(module.client.aclose(), adapter_loop()).result()


# --- questions without chunk labels ----------------------------------------------------------


def test_questions_without_chunk_labels_are_judged_but_not_scored(tiny: Tiny) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["relevant_chunks"] = None  # q1: nobody labelled which chunks answer it
    result = evaluate(tiny(questions=questions), backend=ScriptedBackend())
    retrieval = result.retrieval_table
    assert retrieval.loc["factual", "n"] == 0
    assert retrieval.loc["factual", "unlabelled"] == 1
    assert retrieval.loc["all", "unlabelled"] == 1
    assert retrieval.loc["factual", "recall@5"] != retrieval.loc["factual", "recall@5"]  # NaN
    # (q2 = 1, q3 = 0): the unlabelled question counts as neither 0 nor 1
    assert retrieval.loc["all", "recall@5"] == pytest.approx(1 / 2)
    judge = result.judge_table
    assert judge.loc["factual", "n"] == 1 and judge.loc["factual", "faithfulness"] == 2.0
    assert "recall@5" not in result.questions().loc["q1"].dropna()
    item = result.folder.items()["q1"]
    assert item.relevant_chunks is None and item.retrieval == {}


def test_an_answerable_question_with_an_empty_chunk_list_is_still_refused(tiny: Tiny) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["relevant_chunks"] = []
    with pytest.raises(HarnessError, match="or null when they are not known"):
        load_inputs(tiny(questions=questions))


# --- retired labels: warned and skipped everywhere, listed by check --------------------------


def test_labels_of_retired_questions_are_skipped_by_every_command(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    label = {"faithfulness": 2, "relevance": 2, "labeller": "ana"}
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {**label, "question_id": "q1", "answer_sha256": text_sha256(RUN[1]["answer"])},
            {**label, "question_id": "q_old", "answer_sha256": "a" * 64},
        ],
    )
    config = tiny(extra_toml=f'labels = "{labels}"\n')
    toml = str(config.source)
    assert main(["--config", toml, "check", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "labels:    1 from 1 labeller(s)" in out
    assert ":2: question_id 'q_old' is no longer a golden id" in out
    for command in (
        ["run", "--backend", "lexical"],
        ["audit"],
        ["audit", "sample", "--n", "2", "--out", str(tmp_path / "sheet.csv")],
        ["report"],
    ):
        assert main(["--config", toml, *command]) == 0, command
        err = capsys.readouterr().err
        if command[0] != "report":
            assert "1 label(s) for question(s) no longer in the golden set were skipped" in err


# --- re-rendering goes through build_report with stored data -----------------------------------


def test_rerender_rebuilds_every_file_from_the_folder_and_the_cache(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend="lexical")
    folder = result.folder
    before = {p.name: p.read_text(encoding="utf-8") for p in folder.path.iterdir()}
    for name in ("report.md", "report.json", "verdicts.csv", "review.html"):
        (folder.path / name).write_text("damaged", encoding="utf-8")
    rerender(tiny(), folder.name)
    after = {p.name: p.read_text(encoding="utf-8") for p in folder.path.iterdir()}
    assert after == before


def test_a_folder_of_another_format_is_refused_in_one_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    result = evaluate(tiny(), backend="lexical")
    manifest = result.folder.path / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["format_version"] = 99
    manifest.write_text(json.dumps(data), encoding="utf-8")
    toml = str(tiny().source)
    for command in (["report"], ["show", "q1"], ["audit", "sample", "--n", "1"]):
        assert main(["--config", toml, *command]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line == (
            f"error: {result.folder.name}: a report folder of format 99, and this judge reads "
            "format 4 (and 2 and 3); run 'judge run' to make a new one (or open it with the judge version "
            "that wrote it)"
        )


def test_a_one_off_empty_reply_is_judged_again_only_when_asked(tiny: Tiny) -> None:
    from judge.judging.verdict import Reply
    from tests.fakes import good_reply

    flaky = {"empty": True}

    def script(request: Any) -> Reply:
        if flaky["empty"] and request.question.startswith("年額"):  # q1, once
            return Reply(text="", finish_reason="stop")
        return good_reply(request)

    backend = ScriptedBackend(script)
    first = evaluate(tiny(), backend=backend)
    assert first.questions().loc["q1", "status"] == "parse_error"
    flaky["empty"] = False
    again = evaluate(tiny(), backend=backend)  # the empty reply is served from the cache
    assert again.questions().loc["q1", "status"] == "parse_error"
    assert len(backend.calls) == 4
    fixed = evaluate(tiny(), backend=backend, rejudge_failed=True)
    assert len(backend.calls) == 5  # q1 only
    assert fixed.questions().loc["q1", "status"] == "ok"
    assert evaluate(tiny(), backend=backend).questions().loc["q1", "status"] == "ok"
    assert len(backend.calls) == 5  # the new reply replaced the empty one in the cache
