"""The OpenAI batch format (judge.judging.backends.openai_batch): the ``custom_id`` scheme,
request lines byte for byte, the request files and the manifest's reader. The export and import
around it are tests/pipeline/test_batch.py's."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.judging.backends.openai import request_body
from judge.judging.backends.openai_batch import (
    MANIFEST_NAME,
    REQUEST_URL,
    RequestFiles,
    answer_lines,
    custom_id,
    find_manifest,
    read_manifest,
    request_line,
    task_of,
)
from judge.judging.items import build_items
from judge.judging.prompts import load_prompt
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO

Tiny = Callable[..., Config]


# --- custom_id -----------------------------------------------------------------------------


def test_an_answers_custom_id_is_its_key_and_a_further_ones_names_its_task() -> None:
    key = "h1:2bf115e0326f3490d9c0eca2c93400c9"
    assert custom_id("answer", key) == key
    assert custom_id("chunk", key) == f"chunk/{key}"
    assert custom_id("correctness", key) == f"correctness/{key}"
    for task in ("answer", "chunk", "correctness"):
        assert task_of(custom_id(task, key), ["chunk", "correctness"]) == (task, key)
    # A task that is not named is not guessed at: the id is an answer's key.
    assert task_of(f"chunk/{key}", ["correctness"]) == ("answer", f"chunk/{key}")


# --- request lines -------------------------------------------------------------------------


def test_a_request_line_is_the_compact_json_of_the_openai_backends_body(tiny: Tiny) -> None:
    settings = tiny().judge.openai
    schema = {"type": "object", "properties": {"grade": {"type": "integer"}}}
    line = request_line(settings, "chunk/h1:ab", 'say "ü"\n', schema)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    request = json.loads(line)
    assert request == {
        "custom_id": "chunk/h1:ab",
        "method": "POST",
        "url": REQUEST_URL,
        "body": request_body(settings, 'say "ü"\n', schema),
    }
    assert list(request) == ["custom_id", "method", "url", "body"]
    expected = json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert line == expected.encode()


@pytest.mark.parametrize("prompt", ["judge.v1.md", "judge.cited.v1.md", "judge.sentences.v1.md"])
def test_answer_lines_are_each_items_request_line_in_every_mode(tiny: Tiny, prompt: str) -> None:
    """The answers' lines are encoded into a template (but in ``sentences`` mode): byte for byte
    what ``request_line`` writes for the item, in the items' order."""
    from tests.conftest import QUESTIONS, RUN

    odd = {**RUN[1], "answer": 'a "quoted" \\ back\nslash\t<end_of_turn> \u2028 ü'}
    config = tiny(questions=QUESTIONS, run=[RUN[0], odd, *RUN[2:]])
    loaded = load_prompt(REPO / "prompts" / prompt)
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    lines = list(answer_lines(items, loaded, config.judge.openai))
    assert [item for item, _ in lines] == items
    for item, line in lines:
        text, schema = loaded.render_item(item), loaded.request_schema(item)
        assert line == request_line(config.judge.openai, item.key, text, schema)


# --- request files -------------------------------------------------------------------------


def test_request_files_split_by_count_and_by_size_and_record_each_file(tmp_path: Path) -> None:
    lines = [f'{{"n":{n}}}\n'.encode() for n in range(5)]
    by_count = RequestFiles(tmp_path / "count", 10**6, 2)
    (tmp_path / "count").mkdir()
    for line in lines:
        by_count.write("q", line)
    by_count.close()
    assert [(f.name, f.lines) for f in by_count.done] == [
        ("requests-0001.jsonl", 2),
        ("requests-0002.jsonl", 2),
        ("requests-0003.jsonl", 1),
    ]
    for entry in by_count.done:
        data = (tmp_path / "count" / entry.name).read_bytes()
        assert (entry.bytes, entry.lines) == (len(data), data.count(b"\n"))
        assert entry.sha256 == hashlib.sha256(data).hexdigest()
    assert sorted(p.name for p in (tmp_path / "count").iterdir()) == [
        f.name for f in by_count.done
    ]  # no temporary file left
    by_size = RequestFiles(tmp_path / "size", 2 * len(lines[0]), 100)
    (tmp_path / "size").mkdir()
    for line in lines:
        by_size.write("q", line)
    by_size.close()
    assert [f.lines for f in by_size.done] == [2, 2, 1]
    joined = b"".join((tmp_path / "size" / f.name).read_bytes() for f in by_size.done)
    assert joined == b"".join(lines)


def test_a_request_over_the_file_limit_is_refused_and_abandon_leaves_nothing(
    tmp_path: Path,
) -> None:
    files = RequestFiles(tmp_path, 1024 * 1024, 1)
    files.write("q1", b"{}\n")
    files.write("q2", b"{}\n")  # the first file is closed, the second open
    with pytest.raises(
        ConfigError,
        match=r"^the request for question 'q3' alone is 2\.0 MB, over the file limit of 1 MB; "
        r"raise --max-file-mb$",
    ):
        files.write("q3", b"x" * (2 * 1024 * 1024))
    assert len(list(tmp_path.iterdir())) == 2
    files.abandon()
    assert (list(tmp_path.iterdir()), files.done) == ([], [])


# --- the manifest --------------------------------------------------------------------------


def test_the_manifest_is_found_beside_the_output_or_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^no output files given; name the engine's output"):
        find_manifest([])
    output = tmp_path / "results.jsonl"
    with pytest.raises(ConfigError, match=r"no manifest.json beside .*results.jsonl; give --"):
        find_manifest([output])
    (tmp_path / MANIFEST_NAME).write_text("{}", encoding="utf-8")
    assert find_manifest([output]) == tmp_path / MANIFEST_NAME
    with pytest.raises(
        ConfigError,
        match=r"gone.json: manifest not found; give the manifest.json that 'judge batch export' "
        r"wrote with the requests \(--manifest\)",
    ):
        read_manifest(tmp_path / "gone.json")
    with pytest.raises(
        ConfigError,
        match=r"manifest.json: batch manifest without a format_version \(this judge reads format "
        r"1\); export again with 'judge batch export'$",
    ):
        read_manifest(tmp_path / MANIFEST_NAME)
    (tmp_path / MANIFEST_NAME).write_text("[1", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"manifest.json.*: not a batch manifest \("):
        read_manifest(tmp_path / MANIFEST_NAME)
    (tmp_path / "m.json").write_text('{"format_version": 9}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"manifest format 9 is newer than this judge"):
        read_manifest(tmp_path / "m.json")
