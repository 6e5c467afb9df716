"""The Ray Data recipe (examples/ray_batch.py): docs/batch.md shows the tested file, and its
row functions write what ``judge batch import`` reads. The job itself runs against a real server
in tests/judging/backends/test_ray_roundtrip.py (slow)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from judge.judging.backends.openai_batch_output import engine_reply
from tests.conftest import REPO

RECIPE = REPO / "examples" / "ray_batch.py"
BATCH_DOC = REPO / "docs" / "batch.md"

BODY = {
    "model": "gemma-3-12b-it",
    "messages": [{"role": "user", "content": "You are a strict grader ..."}],
    "temperature": 0,
    "max_tokens": 320,
    "response_format": {"type": "json_object", "schema": {"required": ["evidence", "note"]}},
}
VERDICT = json.dumps({"evidence": "", "faithfulness": 1, "relevance": 2, "note": "n"})


def _ray_section() -> str:
    text = BATCH_DOC.read_text(encoding="utf-8")
    match = re.search(r"^### Ray Data\n(.*?)(?=^#{1,3} )", text, re.M | re.S)
    assert match, "docs/batch.md has no '### Ray Data' section"
    return match.group(1)


def test_the_docs_show_the_recipe_the_tests_run() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", _ray_section(), re.M | re.S)
    recipe = RECIPE.read_text(encoding="utf-8")
    assert recipe in blocks, (
        "docs/batch.md's Ray Data section must show examples/ray_batch.py whole, as it is: "
        "paste the file into its ```python block"
    )
    assert "examples/ray_batch.py" in _ray_section()


@pytest.fixture(scope="module")
def recipe() -> Iterator[ModuleType]:
    pytest.importorskip(
        "ray.data.llm", reason="Ray Data is the 'ray' extra: pip install -e '.[ray]'"
    )
    spec = importlib.util.spec_from_file_location("ray_batch_rows", RECIPE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["ray_batch_rows"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["ray_batch_rows"]


#: Ray's own modules still use pydantic's class-based config (a DeprecationWarning at import).
ray_import = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*")


def _as_ray_gives_it(value: Any) -> Any:
    """A JSON value as a row of Ray's gives it back: lists as numpy arrays, ints as numpy's."""
    np = pytest.importorskip("numpy")
    if isinstance(value, dict):
        return {key: _as_ray_gives_it(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [_as_ray_gives_it(item) for item in value]
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array
    if isinstance(value, int) and not isinstance(value, bool):
        return np.int64(value)
    return value


def _row(answer: dict[str, Any], sent: dict[str, Any] = BODY) -> dict[str, Any]:
    line = json.dumps({"custom_id": "h1:aa", "method": "POST", "body": BODY})
    return {
        "text": line,
        "custom_id": "h1:aa",
        "payload": _as_ray_gives_it(sent),
        "http_response": _as_ray_gives_it(answer),
    }


@ray_import
def test_a_line_of_the_export_is_its_body_as_the_payload(recipe: ModuleType) -> None:
    line = json.dumps({"custom_id": "h1:aa", "method": "POST", "url": "/v1/x", "body": BODY})
    assert recipe.as_request({"text": line}) == {"custom_id": "h1:aa", "payload": BODY}


@ray_import
def test_a_reply_is_written_as_the_server_gave_it_and_imports_as_one(recipe: ModuleType) -> None:
    answer = {
        "choices": [
            {"message": {"role": "assistant", "content": VERDICT}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 40},
        "error": None,  # the key an error answer in the same table gave every row
    }
    line = recipe.as_output_line(_row(answer))
    assert line == {
        "custom_id": "h1:aa",
        "response": {
            "status_code": 200,
            "body": {key: value for key, value in answer.items() if value is not None},
        },
        "error": None,
    }
    reply = engine_reply(json.loads(json.dumps(line)))
    assert (reply.kind, reply.text, reply.prompt_tokens) == ("reply", VERDICT, 900)


@ray_import
def test_an_error_answer_is_a_refusal_never_a_reply(recipe: ModuleType) -> None:
    message = "the request exceeds the available context size (2048 tokens)"
    answer = {"choices": None, "error": {"code": 400, "message": message}}
    line = recipe.as_output_line(_row(answer))
    assert line["response"]["status_code"] == 400
    assert line["response"]["body"] == {"error": {"code": 400, "message": message}}
    assert engine_reply(json.loads(json.dumps(line))).kind == "truncated"


@ray_import
def test_a_body_ray_sent_otherwise_than_the_export_is_an_error_line(recipe: ModuleType) -> None:
    # What Arrow does to a list of objects with different keys: the missing ones as None.
    filled = {**BODY, "messages": [{"role": "user", "content": "You are a strict grader ..."}]}
    filled["messages"][0]["name"] = None
    answer = {"choices": [{"message": {"content": VERDICT}, "finish_reason": "stop"}]}
    line = recipe.as_output_line(_row(answer, sent=filled))
    assert line["response"] is None and line["custom_id"] == "h1:aa"
    reply = engine_reply(json.loads(json.dumps(line)))
    assert reply.kind == "error" and "Ray Data sent another body" in (reply.detail or "")
    # The same body as the export's, whatever numpy types it comes back in, is no error.
    assert recipe.as_output_line(_row(answer))["response"]["status_code"] == 200


@ray_import
def test_plain_refuses_what_json_cannot_hold(recipe: ModuleType) -> None:
    with pytest.raises(TypeError, match="set is not JSON"):
        recipe.plain({1})
