"""Reading a batch engine's output (judge.judging.backends.openai_batch_output): each engine's
success and error lines as the ``Reply`` the openai backend would read, and every line that
cannot be used, located. The lines here are the engines' own shapes; tests/pipeline/test_batch.py
imports them to play the engine around a real export."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.judging.backends.openai_batch import BatchFile, BatchManifest
from judge.judging.backends.openai_batch_output import OutputReader, engine_reply
from tests.judging.backends.test_openai import completion

Line = dict[str, Any]
VERDICT = json.dumps({"evidence": "", "faithfulness": 1, "relevance": 2, "note": "n"})
CONTEXT_TOO_LONG = (
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens "
    "(8680 in the messages, 320 in the completion). Please reduce the length of the messages "
    "or completion."
)


# --- a batch engine's lines -----------------------------------------------------------------


def answered(request: Line, content: str = VERDICT, shape: str = "openai") -> Line:
    """A successful output line, as OpenAI's Batch API or ``vllm run-batch`` writes it."""
    prefix = "batch_req_" if shape == "openai" else "vllm-"
    return {
        "id": f"{prefix}{request['custom_id'][3:11]}",
        "custom_id": request["custom_id"],
        "response": {
            "status_code": 200,
            "request_id": f"{'req_' if shape == 'openai' else 'vllm-batch-'}1",
            "body": completion(content).json(),
        },
        "error": None,
    }


#: Error lines of each engine, with the reply kind they must give.
ENGINE_ERRORS: dict[str, tuple[Callable[[str], Line], str]] = {
    # vllm run-batch, an ErrorResponse of current vLLM: the status in response, the error object
    "vllm_error_response": (
        lambda key: {
            "id": "vllm-1",
            "custom_id": key,
            "response": {"status_code": 400, "request_id": "vllm-batch-1", "body": None},
            "error": {
                "error": {
                    "message": CONTEXT_TOO_LONG,
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                }
            },
        },
        "truncated",
    ),
    # older vLLM: ErrorResponse was flat
    "vllm_old_error_response": (
        lambda key: {
            "id": "vllm-2",
            "custom_id": key,
            "response": {"status_code": 400, "request_id": "vllm-batch-2", "body": None},
            "error": {
                "object": "error",
                "message": CONTEXT_TOO_LONG,
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
        },
        "truncated",
    ),
    # vllm run-batch, an exception in the engine: the message as a string
    "vllm_exception": (
        lambda key: {
            "id": "vllm-3",
            "custom_id": key,
            "response": {"status_code": 400, "request_id": "vllm-batch-3", "body": None},
            "error": "Request must not be sent in stream mode",
        },
        "error",
    ),
    # OpenAI: the request was answered with an error status
    "openai_400": (
        lambda key: {
            "id": "batch_req_4",
            "custom_id": key,
            "response": {
                "status_code": 400,
                "request_id": "req_4",
                "body": {
                    "error": {
                        "message": CONTEXT_TOO_LONG,
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                },
            },
            "error": None,
        },
        "truncated",
    ),
    "openai_500": (
        lambda key: {
            "id": "batch_req_5",
            "custom_id": key,
            "response": {
                "status_code": 500,
                "request_id": "req_5",
                "body": {"error": {"message": "CUDA out of memory"}},
            },
            "error": None,
        },
        "error",
    ),
    # OpenAI's error file: no response at all
    "openai_error_file": (
        lambda key: {
            "id": "batch_req_6",
            "custom_id": key,
            "response": None,
            "error": {
                "code": "batch_expired",
                "message": "This request could not be executed before the completion window "
                "expired.",
            },
        },
        "error",
    ),
    # llama.cpp's server behind an HTTP-calling engine (Ray Data's HttpRequestProcessor)
    "llama_cpp_400": (
        lambda key: {
            "custom_id": key,
            "response": {
                "status_code": 400,
                "body": {
                    "error": {
                        "code": 400,
                        "message": "request (4476 tokens) exceeds the available context size "
                        "(4096 tokens), try increasing it",
                        "type": "exceed_context_size_error",
                    }
                },
            },
            "error": None,
        },
        "truncated",
    ),
    # Ray Data's HTTP stage keeps no status, and its tables give every row every key
    "ray_http_stage": (
        lambda key: {
            "custom_id": key,
            "response": {
                "status_code": 200,
                "body": {
                    "choices": None,
                    "usage": None,
                    "error": {"message": CONTEXT_TOO_LONG, "type": "BadRequestError"},
                },
            },
            "error": None,
        },
        "truncated",
    ),
}


# --- engine_reply --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ENGINE_ERRORS))
def test_each_engines_error_line_is_a_non_ok_reply(name: str) -> None:
    make_line, kind = ENGINE_ERRORS[name]
    reply = engine_reply(make_line("h1:" + "1" * 32))
    assert reply.kind == kind and reply.text == "" and reply.detail


@pytest.mark.parametrize("shape", ["openai", "vllm"])
def test_a_success_line_is_the_reply_the_openai_backend_reads(shape: str) -> None:
    reply = engine_reply(answered({"custom_id": "h1:" + "1" * 32}, shape=shape))
    assert (reply.kind, reply.text, reply.finish_reason) == ("reply", VERDICT, "stop")


def test_a_success_body_with_an_empty_error_key_is_a_reply() -> None:
    line = answered({"custom_id": "h1:" + "1" * 32})
    line["response"]["body"]["error"] = None  # a table's union of the success and error shapes
    reply = engine_reply(line)
    assert (reply.kind, reply.text, reply.finish_reason) == ("reply", VERDICT, "stop")


def test_a_line_of_another_shape_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^'response' must be an object or null, not list$"):
        engine_reply({"custom_id": "k", "response": [1]})
    with pytest.raises(ValueError, match=r"^'response.status_code' must be an integer, not '200'$"):
        engine_reply({"custom_id": "k", "response": {"status_code": "200", "body": None}})


# --- the output reader ---------------------------------------------------------------------


def _manifest(tmp_path: Path, keys: list[str]) -> tuple[BatchManifest, Path]:
    manifest = BatchManifest(
        created_at="2026-12-03T13:00:00+00:00",
        fingerprint="h1:f",
        fingerprint_parts={},
        model="m",
        prompt="p.md",
        golden_hash="g",
        corpus_hash="c",
        run_source="run.jsonl",
        context_k=3,
        files=(BatchFile(name="requests-0001.jsonl", lines=len(keys), bytes=1, sha256="s"),),
        items={key: f"q{n}" for n, key in enumerate(keys, start=1)},
    )
    return manifest, tmp_path / "manifest.json"


def test_the_reader_gives_good_replies_in_chunks_and_locates_every_problem(
    tmp_path: Path,
) -> None:
    keys = [f"h1:{n:032d}" for n in range(4)]
    manifest, where = _manifest(tmp_path, keys)
    out = tmp_path / "results.jsonl"
    raw = [
        b"\xef\xbb\xbf" + json.dumps(answered({"custom_id": keys[0]})).encode(),  # a BOM
        b"",
        b"\xff not text",
        b"[" * 100_000,
        json.dumps(answered({"custom_id": keys[1]})).encode(),
        json.dumps({"custom_id": keys[2]}).encode(),
        json.dumps({"response": None, "error": "x", "custom_id": 7}).encode(),
        json.dumps(answered({"custom_id": keys[3]})).encode(),
    ]
    out.write_bytes(b"\n".join(raw) + b"\n")
    (tmp_path / "requests-0001.jsonl").write_bytes(b"{}\n")
    reader = OutputReader(manifest, where, chunk_rows=2)
    chunks = list(reader.chunks([out, tmp_path / "requests-0001.jsonl"]))
    assert [[(key, qid) for key, qid, _ in rows] for rows in chunks] == [
        [(keys[0], "q1"), (keys[1], "q2")],
        [(keys[3], "q4")],
    ]
    assert reader.lines == 6  # blank lines and lines that are not text aside
    assert reader.problems == [
        f"{out}:3: not UTF-8 (byte 0xff)",
        f"{out}:4: not a batch output line (JSON too deep or long)",
        f"{out}:6: not a batch output line (no 'response' and no 'error')",
        f"{out}:7: 'custom_id' must be a string, not 7",
        f"{tmp_path / 'requests-0001.jsonl'}: a request file of this export, not the engine's "
        "output; import the files the engine wrote",
    ]
    assert reader.not_judged == {}


def test_an_error_line_answered_later_is_no_problem_and_a_late_one_is(tmp_path: Path) -> None:
    key = "h1:" + "2" * 32
    manifest, where = _manifest(tmp_path, [key])
    expired = json.dumps(ENGINE_ERRORS["openai_error_file"][0](key))
    good = json.dumps(answered({"custom_id": key}))
    out = tmp_path / "results.jsonl"
    out.write_text(f"{expired}\n{good}\n", encoding="utf-8")
    reader = OutputReader(manifest, where, chunk_rows=10)
    assert [len(rows) for rows in reader.chunks([out])] == [1]
    assert (reader.problems, reader.not_judged) == ([], {})
    late = tmp_path / "late.jsonl"
    late.write_text(f"{good}\n{expired}\n", encoding="utf-8")
    again = OutputReader(manifest, where, chunk_rows=10)
    assert [len(rows) for rows in again.chunks([late])] == [1]
    assert again.problems == [
        f"{late}:2: custom_id '{key}' again (first answered at {late}:1); the first is kept"
    ]
    alone = tmp_path / "alone.jsonl"
    alone.write_text(f"{expired}\n", encoding="utf-8")
    failed = OutputReader(manifest, where, chunk_rows=10)
    assert [len(rows) for rows in failed.chunks([alone])] == [0]
    assert failed.not_judged[key].kind == "error"
    assert failed.problems == [
        f"{alone}:1: question 'q1' ({key}): not judged: the engine did not run the request: "
        "batch_expired: This request could not be executed before the completion window "
        "expired. (it stays pending: the next 'judge batch export' writes it again)"
    ]
