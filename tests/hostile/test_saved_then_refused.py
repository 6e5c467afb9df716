"""Saved, then refused: nothing the harness writes is refused when read back with the same
configuration (issue 34, class 1). The writer checks the limits of ``judge.io.limits`` before it
writes: a judge's reply over ``MAX_REPLY_KB`` is a failed verdict saying why, never saved whole;
an import over ``data.max_file_mb`` is refused naming the input and the configured limit; a
token count no reply can have is "not reported", never an ``OverflowError`` in the estimate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config, load_config
from judge.errors import InputError
from judge.io.jsonl import read_jsonl
from judge.io.limits import MAX_REPLY_KB
from judge.judging.backends.base import JudgeRequest
from judge.judging.cache import VerdictCache
from judge.judging.verdict import Reply
from judge.pipeline.evaluate import evaluate
from judge.pipeline.imports import import_foreign
from judge.pipeline.report import rerender
from judge.results.tokens import Observed, estimate
from tests.fakes import ScriptedBackend, good_reply
from tests.inputs.foreign.samples import REPO, write_rows

Tiny = Callable[..., Config]
NOTE_MB = 5


def _huge_note(request: JudgeRequest) -> Reply:
    """``good_reply`` for every question but q1 (the annual plan), whose note is 5 MB."""
    if not request.question.startswith("年額"):
        return good_reply(request)
    payload = {"evidence": "", "faithfulness": 2, "relevance": 2, "note": "x" * NOTE_MB * 2**20}
    return Reply(text=json.dumps(payload), finish_reason="stop")


def test_a_5_mb_judge_note_is_a_failed_verdict_and_the_folder_reads_back(tiny: Tiny) -> None:
    config = tiny()
    result = evaluate(config, backend=ScriptedBackend(_huge_note))
    questions = result.questions()
    assert questions.loc["q1", "status"] == "backend_error"
    assert set(questions.drop(index="q1")["status"]) == {"ok"}
    folder = result.folder.path
    lines = read_jsonl(folder / "verdicts.jsonl")  # what `report --rederive` reads: no refusal
    (q1,) = [line.value for line in lines if line.value["question_id"] == "q1"]
    assert q1["error"].startswith(f"the judge's reply is 5.1 MB, over the {MAX_REPLY_KB} kB limit")
    assert q1["raw_reply"] == ""
    assert max(path.stat().st_size for path in folder.iterdir()) < 2**20
    rerender(config, folder.name, rederive=True)
    assert main(["--config", str(config.source), "report", "--rederive"]) == 0


def test_a_huge_reply_an_earlier_release_cached_is_read_as_a_failed_one(tmp_path: Path) -> None:
    text = json.dumps({"note": "y" * 600 * 1024, "faithfulness": 2})
    reply = Reply.model_validate_json(json.dumps({"text": text, "finish_reason": "stop"}))
    assert reply.kind == "error"
    assert reply.text == ""
    assert reply.detail is not None and "600.1 kB, over the 512 kB limit" in reply.detail
    cache = VerdictCache(tmp_path / "cache.sqlite3")
    cache.put("f", "k", "q1", reply)  # a failed reply is not cached: asked again next run
    assert cache.get_many("f", ["k"]) == {}


def test_a_400_digit_token_count_cached_is_not_reported_in_the_estimate() -> None:
    counts = json.dumps({"text": "{}", "prompt_tokens": 10**400, "completion_tokens": 7})
    reply = Reply.model_validate_json(counts)
    earlier = [Observed(reply.prompt_tokens, reply.completion_tokens, 1e308), Observed(100, 7, 2.0)]
    found = estimate(pending=3, total=4, earlier=earlier)
    assert found.prompt_tokens == 300
    assert found.completion_tokens == 21
    assert found.seconds == 6.0
    assert "about 300 prompt and 21 completion tokens" in found.line()


def _ragas_rows(count: int, size: int) -> list[dict[str, Any]]:
    return [
        {
            "user_input": f"question {n}?",
            "retrieved_contexts": [f"chunk {n} " + "z" * size],
            "response": f"answer {n}",
            "reference": f"answer {n}",
        }
        for n in range(count)
    ]


def _config(tmp_path: Path, max_mb: float) -> Config:
    (tmp_path / "judge.toml").write_text(
        '[data]\nquestions = "out/questions.jsonl"\ncorpus = "out/corpus.jsonl"\n'
        f'run = "out/run.jsonl"\nmax_file_mb = {max_mb}\n'
        f'[judge]\nprompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        f'cache_path = "{tmp_path / "cache.sqlite3"}"\n',
        encoding="utf-8",
    )
    return load_config(tmp_path / "judge.toml")


def test_an_import_over_max_file_mb_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """A 4.5 MB JSONL source within the 5 MB limit whose rankings list 4,000 short texts each:
    a 19.6 MB run.jsonl (each text's id is longer than the text), refused naming the input and
    the configured 5 MB (not a staging file, not the 512 MB default) before anything is
    written; with a 25 MB limit it is written, and `judge check` with that limit reads it."""
    rows = _ragas_rows(160, 1)
    for row in rows:  # 4,000 one-character texts: 7 bytes each here, 33 in run.jsonl
        row["retrieved_contexts"] = [chr(0x4E00 + k) for k in range(4000)]
    source = write_rows(tmp_path / "ragas.jsonl", rows)
    assert source.stat().st_size < 5 * 2**20
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, out, config=_config(tmp_path, 5))
    (line,) = caught.value.problems
    assert line.startswith(f"{source}: not imported: run.jsonl would be 19.6 MB")
    assert line.endswith(
        " MB, over the 5 MB limit (data.max_file_mb) that every command reading it applies; "
        "raise data.max_file_mb in judge.toml, or import a smaller file"
    )
    assert not out.exists() or not any(out.iterdir())
    imported = import_foreign("ragas", source, out, config=_config(tmp_path, 25))
    assert imported.run.stat().st_size > 19 * 2**20
    assert main(["--config", str(tmp_path / "judge.toml"), "check", "--no-judge"]) == 0


def test_a_parquet_file_that_expands_past_the_limit_is_refused_at_its_row(tmp_path: Path) -> None:
    """A Parquet file of a few kB whose 100 answers are one 200 kB text (stored once): the read
    stops at the row that takes the answers over the configured 5 MB, naming the input."""
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = _ragas_rows(100, 10)
    for row in rows:
        row["response"] = "w" * 200_000
    source = tmp_path / "ragas.parquet"
    pq.write_table(pyarrow.Table.from_pylist(rows), source, compression="zstd")
    assert source.stat().st_size < 100_000
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, tmp_path / "out", config=_config(tmp_path, 5))
    (line,) = caught.value.problems
    assert line.startswith(
        f"{source}: row 27: column 'response' already holds more than 5 MB of text, so a file "
        "the import writes would be over the 5 MB limit (data.max_file_mb); nothing was written"
    )
    imported = import_foreign("ragas", source, tmp_path / "out", config=_config(tmp_path, 25))
    assert imported.run.stat().st_size > 19 * 2**20


def test_an_import_line_over_the_record_limit_is_refused_with_its_row(tmp_path: Path) -> None:
    rows = _ragas_rows(1, 10)
    rows[0]["response"] = "r" * (5 * 2**20)
    source = write_rows(tmp_path / "ragas.jsonl", rows)
    with pytest.raises(InputError) as caught:
        import_foreign("ragas", source, tmp_path / "out")
    (line,) = caught.value.problems
    assert line.startswith(f"{source}:1: the line is 5.1 MB, over the 4 MB limit")
