"""Converters behind one error boundary (issue 34, class 2): every import path and every state
file the harness reads turns any malformed value into a located error, exit 2, never a
traceback. The named cases (OTel spans that are each other's parent, a type column naming the
reserved type ``all``), then property-based tests (Hypothesis): the sample files of each tool,
and a report folder's state files, mutated at random (bytes changed, JSON values replaced by
random ones), end in exit 0 or exit 2 with every error line naming the file.

The fast suite tries ``FAST_EXAMPLES`` inputs per test; ``JUDGE_FUZZ_EXAMPLES=N`` (what
``bench/fuzz_bench.py``, part of ``make bench``, sets) tries N.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.cli import main
from judge.config import Config
from judge.errors import HarnessError
from judge.judging.verdict import Reply
from judge.pipeline.evaluate import evaluate
from judge.record.store import read_manifest, read_record
from judge.results.baseline import read_baseline
from judge.results.history import read_history
from tests.inputs.foreign.samples import DATA, write_rows

FAST_EXAMPLES = 25
EXAMPLES = int(os.environ.get("JUDGE_FUZZ_EXAMPLES", FAST_EXAMPLES))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: (tool, sample file) for every reader of ``judge import``.
SOURCES = [
    ("ragas", "ragas.jsonl"),
    ("ragas", "ragas.csv"),
    ("deepeval", "deepeval.json"),
    ("deepeval", "deepeval.jsonl"),
    ("deepeval", "deepeval.csv"),
    ("otel", "otel.jsonl"),
]
#: What the property tests tried and found, per test (printed by ``bench/fuzz_bench.py``).
TRIED: dict[str, dict[int, int]] = {}


def _tally(test: str, code: int) -> None:
    TRIED.setdefault(test, {}).setdefault(code, 0)
    TRIED[test][code] += 1


# --- the named cases ---------------------------------------------------------------------------


def _span(span_id: str, parent: str, kind: str) -> dict[str, Any]:
    attributes = [
        {"key": "openinference.span.kind", "value": {"stringValue": kind}},
        {"key": "input.value", "value": {"stringValue": "What is X?"}},
        {"key": "output.value", "value": {"stringValue": "X."}},
    ]
    return {
        "traceId": "a" * 32,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": kind.lower(),
        "attributes": attributes,
    }


def _import(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["import", *argv])
    return code, capsys.readouterr().err.splitlines()


def test_otel_spans_that_are_each_others_parent_are_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = [_span("1" * 16, "2" * 16, "CHAIN"), _span("2" * 16, "1" * 16, "LLM")]
    source = write_rows(
        tmp_path / "loop.jsonl", [{"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}]
    )
    code, err = _import(["otel", str(source), "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    (line,) = err
    assert line.startswith(f"error: {source}:1: trace {'a' * 32}: no root span: every")
    assert "the parents form a loop" in line


def test_a_type_column_naming_the_reserved_type_all_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a judge.toml the types are the file's: ``all`` was a pydantic traceback."""
    monkeypatch.chdir(tmp_path)
    rows = [
        {"user_input": "What is X?", "retrieved_contexts": [], "response": "X.", "kind": kind}
        for kind in ("factual", "all")
    ]
    rows[1]["user_input"] = "What is Y?"
    source = write_rows(tmp_path / "ragas.jsonl", rows)
    argv = ["ragas", str(source), "--out", str(tmp_path / "out"), "--type-column", "kind"]
    code, err = _import(argv, capsys)
    assert code == 2
    assert err == [
        f"error: {source}:2: type column: 'all' is reserved for the overall row of every "
        "table; rename that type in the file"
    ]


# --- mutated inputs ----------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**400, -(2**70), 0])
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.sampled_from(["", " ", "all", "\x1b[31m", "\ufeff", "\ud800"[:0] + "é", "AAAA"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)


def _replace_one(value: Any, draw: Callable[..., Any]) -> Any:
    """``value`` with one randomly chosen value inside it replaced by a random JSON value."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _replace_one(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], _replace_one(value[index], draw), *value[index + 1 :]]
    return draw(JSON_VALUES)


def _mutated(raw: bytes, draw: Callable[..., Any]) -> bytes:
    """``raw`` mutated: bytes changed, inserted or deleted; a JSON line's value replaced; or
    lines repeated or dropped."""
    how = draw(st.sampled_from(["bytes", "json", "lines"]))
    if how == "bytes":
        data = bytearray(raw)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, max(len(data) - 1, 0)))
            op = draw(st.sampled_from(["set", "insert", "delete"]))
            byte = draw(st.integers(0, 255))
            if op == "set" and data:
                data[at] = byte
            elif op == "insert":
                data.insert(at, byte)
            elif data:
                del data[at]
        return bytes(data)
    lines = raw.decode("utf-8").split("\n")
    index = draw(st.integers(0, len(lines) - 1))
    if how == "lines":
        lines.insert(draw(st.integers(0, len(lines))), lines[index])
        if len(lines) > 2 and draw(st.booleans()):
            del lines[draw(st.integers(0, len(lines) - 1))]
        return "\n".join(lines).encode("utf-8")
    try:
        value = json.loads(lines[index])
    except ValueError:
        return raw
    lines[index] = json.dumps(_replace_one(value, draw), ensure_ascii=draw(st.booleans()))
    return "\n".join(lines).encode("utf-8", errors="surrogatepass")


def _bounded(code: int, err: list[str], path: Path) -> None:
    """Exit 0, or exit 2 with every error line located at the file (its path in the line)."""
    assert code in (0, 2), (code, err)
    if code == 2:
        errors = [line for line in err if line.startswith("error: ")]
        assert errors, err
        for line in errors:
            assert str(path) in line, line


@FUZZ
@given(data=st.data(), source=st.sampled_from(SOURCES))
def test_mutated_imports_end_in_exit_0_or_a_located_exit_2(
    data: st.DataObject,
    source: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tool, name = source
    mutated = _mutated((DATA / name).read_bytes(), data.draw)
    case = tmp_path / f"case-{len(TRIED.get('imports', {}))}"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir()
    path = case / name
    path.write_bytes(mutated)
    code, err = _import([tool, str(path), "--out", str(case / "out")], capsys)
    _tally("imports", code)
    _bounded(code, err, path)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A report folder of the tiny set judged by the lexical judge, with a pinned baseline."""
    from tests.conftest import CORPUS, QUESTIONS, REPO, RUN, write_jsonl

    root = tmp_path_factory.mktemp("state")
    for name, records in (("questions", QUESTIONS), ("corpus", CORPUS), ("run", RUN)):
        write_jsonl(root / f"{name}.jsonl", records)
    toml = root / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\nrun = "run.jsonl"\n'
        f'[judge]\ncache_path = "{root / "cache.sqlite3"}"\n'
        f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n[reports]\ndir = "{root / "reports"}"\n',
        encoding="utf-8",
    )
    from judge.config import load_config

    config: Config = load_config(toml)
    result = evaluate(config, backend="lexical")
    assert main(["--config", str(toml), "baseline", "pin"]) == 0
    yield result.folder.path


#: Each state file of a report folder, with the reader every command reads it with.
STATE_READERS: dict[str, Callable[[Path], object]] = {
    "manifest.json": lambda folder: read_manifest(folder),
    "report.json": lambda folder: read_record(folder),
    "../history.jsonl": lambda folder: read_history(folder.parent / "history.jsonl"),
    "../../judge-baseline.json": lambda folder: read_baseline(
        folder.parent.parent / "judge-baseline.json"
    ),
}


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(STATE_READERS)))
def test_mutated_state_files_are_read_or_refused_in_one_located_line(
    data: st.DataObject, name: str, folder: Path
) -> None:
    path = (folder / name).resolve()
    original = path.read_bytes()
    try:
        path.write_bytes(_mutated(original, data.draw))
        try:
            STATE_READERS[name](folder)
        except HarnessError as exc:
            _tally("state files", 2)
            for line in str(exc).splitlines():  # the file, or the folder it is the manifest of
                assert path.name in line or f"{path.parent.name}:" in line, line
        else:
            _tally("state files", 0)
    finally:
        path.write_bytes(original)


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(list(Reply.model_fields)), JSON_VALUES))
def test_a_cached_reply_of_any_values_is_a_reply_or_a_miss(fields: dict[str, Any]) -> None:
    """The verdict cache reads a row with ``Reply.model_validate_json``; what it cannot read is
    a ``ValueError`` (a miss, judged again), never anything else, and the counts of what it
    reads are safe for the token estimate."""
    from judge.results.tokens import Observed, estimate

    try:
        reply = Reply.model_validate_json(json.dumps(fields))
    except ValueError:
        _tally("cached replies", 2)
        return
    _tally("cached replies", 0)
    observed = Observed(reply.prompt_tokens, reply.completion_tokens, reply.latency_s)
    assert estimate(3, 4, [observed]).line()
