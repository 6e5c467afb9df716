"""The batch round trip against a real server: export, a small script playing the batch engine
against llama.cpp's server, import, then a run that judges nothing and agrees with a direct run.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from judge.config import Config, load_config
from judge.judging.backends.openai_batch_output import engine_reply
from judge.judging.grading import JudgeProgress
from judge.judging.types import Verdict
from judge.pipeline.batch import export_batch, import_batch
from judge.pipeline.evaluate import Hooks, evaluate
from tests.conftest import REPO, SAMPLE
from tests.judging.backends.conftest import LLAMA_SERVER_MODEL

#: An answerable question and an out-of-scope one: two prompts of about 900 tokens, each
#: judged twice (through the batch, then directly) in about a minute on 2 cores.
QUESTION_IDS = ("q01", "q05")


def play_engine(requests: list[Path], out: Path, server: str) -> Path:
    """What a batch engine does with the export: POST each line's body to its url, write one
    OpenAI Batch output line per request (an error status is written as the server gave it)."""
    root = server.removesuffix("/v1")
    lines = []
    with httpx.Client(timeout=300) as http:
        for path in requests:
            for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                request = json.loads(raw)
                assert request["method"] == "POST"
                answer = http.post(root + request["url"], json=request["body"])
                lines.append(
                    {
                        "id": f"batch_req_{number}",
                        "custom_id": request["custom_id"],
                        "response": {
                            "status_code": answer.status_code,
                            "request_id": f"req_{number}",
                            "body": answer.json(),
                        },
                        "error": None,
                    }
                )
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return out


def same_start(server: str) -> None:
    """Leave the server in the same state before each path.

    llama.cpp reuses the part of its last prompt that the next one starts with, and a reply can
    differ in its last bits with how much was reused: a short unrelated prompt first, so that
    the first item is evaluated from the same point by the engine and by the direct run (the
    next items follow the same items in both).
    """
    body = {
        "model": LLAMA_SERVER_MODEL,
        "messages": [{"role": "user", "content": "ok"}],
        "max_tokens": 1,
        "temperature": 0,
    }
    httpx.post(f"{server}/chat/completions", json=body, timeout=120).raise_for_status()


def sample_subset(folder: Path, server: str, cache: str) -> Config:
    """The shipped sample set cut to ``QUESTION_IDS``, judged by the server."""
    folder.mkdir(parents=True, exist_ok=True)
    questions = [
        line
        for line in (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["id"] in QUESTION_IDS
    ]
    run = [
        line
        for line in (SAMPLE / "run.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("id", QUESTION_IDS[0]) in QUESTION_IDS
    ]
    (folder / "questions.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")
    (folder / "run.jsonl").write_text("\n".join(run) + "\n", encoding="utf-8")
    (folder / "judge.toml").write_text(
        f'[data]\nquestions = "questions.jsonl"\ncorpus = "{SAMPLE / "corpus.jsonl"}"\n'
        'run = "run.jsonl"\n'
        f'[judge]\nprompt = "{REPO / "prompts" / "judge.v1.md"}"\ncache_path = "{cache}"\n'
        f'[judge.openai]\nbase_url = "{server}"\nmodel = "{LLAMA_SERVER_MODEL}"\n'
        'response_format = "json_object"\nmax_tokens = 160\n'
        f'[reports]\ndir = "{folder / "reports"}"\n',
        encoding="utf-8",
    )
    return load_config(folder / "judge.toml")


def _shown(verdicts: list[Verdict]) -> dict[str, dict[str, object]]:
    return {v.question_id: v.model_dump(exclude={"cached", "latency_s"}) for v in verdicts}


@pytest.mark.slow
def test_export_engine_import_then_a_run_judges_nothing_and_agrees_with_a_direct_run(
    llama_server: str, tmp_path: Path
) -> None:
    config = sample_subset(tmp_path / "batch", llama_server, "batch.sqlite3")
    export = export_batch(config)
    assert (export.pending, export.cached) == (len(QUESTION_IDS), 0)
    same_start(llama_server)
    results = play_engine(export.paths, export.out_dir / "results-0001.jsonl", llama_server)
    imported = import_batch(config, [results])
    assert imported.problems == []
    assert (imported.imported, imported.still_pending) == (len(QUESTION_IDS), 0)

    progress: list[JudgeProgress] = []
    from_cache = evaluate(config, backend="openai", hooks=Hooks(on_judging=progress.append))
    n = len(QUESTION_IDS)
    assert progress[-1] == JudgeProgress(n, n, n, progress[-1].not_ok)  # 0 judged
    assert all(v.cached for v in from_cache.report.verdicts)
    assert export_batch(config).pending == 0

    direct_config = sample_subset(tmp_path / "direct", llama_server, "direct.sqlite3")
    same_start(llama_server)
    direct = evaluate(direct_config, backend="openai")
    assert not any(v.cached for v in direct.report.verdicts)
    assert from_cache.report.manifest.fingerprints.judge == (
        direct.report.manifest.fingerprints.judge
    )
    # The same replies from the same server, parsed and checked the same way.
    assert _shown(from_cache.report.verdicts) == _shown(direct.report.verdicts)
    assert all(v.raw_reply and (v.prompt_tokens or 0) > 500 for v in direct.report.verdicts)

    # A prompt over the server's 2,048 tokens: the real refusal, through the engine, is a
    # non-ok reply (truncated), never a verdict.
    request = json.loads(export.paths[0].read_text(encoding="utf-8").splitlines()[0])
    request["body"]["messages"][0]["content"] *= 4
    too_long = tmp_path / "too-long.jsonl"
    too_long.write_text(json.dumps(request) + "\n", encoding="utf-8")
    line = json.loads(
        play_engine([too_long], tmp_path / "too-long-out.jsonl", llama_server).read_text()
    )
    assert line["response"]["status_code"] == 400
    assert engine_reply(line).kind == "truncated"
