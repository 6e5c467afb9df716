"""Batch export and import (judge.pipeline.batch), with a fake batch engine built from the openai
backend's response shapes; the round trip against a real server is in
tests/judging/backends/test_batch_roundtrip.py."""

from __future__ import annotations

import gc
import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.judging.backends.openai import OpenAIBackend
from judge.judging.backends.openai_batch import MANIFEST_NAME, read_manifest
from judge.judging.backends.openai_batch_output import engine_reply
from judge.judging.cache import VerdictCache
from judge.judging.grading import judge_fingerprint
from judge.judging.items import build_items
from judge.judging.prompts import Prompt, load_prompt
from judge.judging.tasks.answer import verdict_for
from judge.judging.verdict import Reply
from judge.pipeline.batch import BatchExport, export_batch, import_batch
from judge.pipeline.evaluate import evaluate
from judge.pipeline.inputs import load_inputs
from tests.conftest import REPO
from tests.judging.backends.test_openai import completion
from tests.judging.backends.test_openai_batch_output import (
    CONTEXT_TOO_LONG,
    ENGINE_ERRORS,
    VERDICT,
    answered,
)

Tiny = Callable[..., Config]
Line = dict[str, Any]


def requests_of(export: BatchExport) -> list[Line]:
    return [
        json.loads(line)
        for path in export.paths
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def engine(export: BatchExport, name: str = "results.jsonl", **how: Callable[[Line], Line]) -> Path:
    """Answer every request of ``export`` (``how[question id]`` answers that one) into ``name``
    beside the manifest, as a batch engine would."""
    assert export.manifest is not None
    items = read_manifest(export.manifest).items
    lines = [how.get(items[r["custom_id"]], answered)(r) for r in requests_of(export)]
    out = export.out_dir / name
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return out


def openai_config(tiny: Tiny, **openai: Any) -> Config:
    config = tiny()
    return config.with_overrides(judge={"openai": {**config.judge.openai.model_dump(), **openai}})


def live_backend(config: Config, chats: list[Line], content: str = VERDICT) -> OpenAIBackend:
    """The real openai backend in front of a fake server (``chats`` records each request)."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": config.judge.openai.model}]})
        chats.append(json.loads(request.content))
        return completion(content)

    return OpenAIBackend(config.judge.openai, transport=httpx.MockTransport(handler))


def replies_table(config: Config) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(config.judge.cache_path)
    try:
        return db.execute("SELECT * FROM replies ORDER BY item_key").fetchall()
    finally:
        db.close()


# --- export --------------------------------------------------------------------------------


def test_export_writes_exactly_what_the_openai_backend_would_send(tiny: Tiny) -> None:
    config = openai_config(tiny, max_tokens=200, seed=7)
    export = export_batch(config)
    assert (export.pending, export.cached, export.total) == (4, 0, 4)
    assert export.out_dir.parent == config.reports.dir / "batch"
    requests = requests_of(export)
    assert [set(r) for r in requests] == [{"custom_id", "method", "url", "body"}] * 4
    assert {(r["method"], r["url"]) for r in requests} == {("POST", "/v1/chat/completions")}
    # The live backend, judging the same run: the same bodies for the same item keys.
    chats: list[Line] = []
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    backend = live_backend(config, chats)
    evaluated = evaluate(config, backend=backend)
    assert [r["custom_id"] for r in requests] == [i.key for i in items]
    assert [r["body"] for r in requests] == chats
    # The manifest: the live run's fingerprint, the inputs, the files, the item keys.
    manifest = read_manifest(export.out_dir / MANIFEST_NAME)
    assert next(iter(json.loads((export.out_dir / MANIFEST_NAME).read_text()))) == "format_version"
    assert manifest.fingerprint == evaluated.report.manifest.fingerprints.judge
    assert manifest.fingerprint_parts == evaluated.report.manifest.fingerprints.judge_parts
    assert (manifest.model, manifest.golden_hash, manifest.corpus_hash) == (
        config.judge.openai.model,
        inputs.golden.questions_hash,
        inputs.golden.corpus_hash,
    )
    assert manifest.items == {i.key: i.question.id for i in items}
    assert [(f.name, f.lines) for f in manifest.files] == [("requests-0001.jsonl", 4)]


def test_only_pending_items_are_exported_and_nothing_when_all_are_cached(tiny: Tiny) -> None:
    config = openai_config(tiny)
    inputs = load_inputs(config)
    items = build_items(inputs.golden, inputs.run, config.retrieval.context_k)
    first = export_batch(config)
    fingerprint = read_manifest(first.out_dir / MANIFEST_NAME).fingerprint
    cache = VerdictCache(config.judge.cache_path)
    for item in items[:3]:
        cache.put(fingerprint, item.key, item.question.id, Reply(text=VERDICT))
    cache.close()
    second = export_batch(config, config.reports.dir / "second")
    assert (second.pending, second.cached) == (1, 3)
    assert [r["custom_id"] for r in requests_of(second)] == [items[3].key]
    import_batch(config, [engine(second)])
    third = export_batch(config, config.reports.dir / "third")
    assert (third.pending, third.cached, third.manifest, third.files) == (0, 4, None, ())
    assert not third.out_dir.exists()


def test_two_questions_with_the_same_item_are_one_request(tiny: Tiny) -> None:
    from tests.conftest import QUESTIONS, RUN

    twin = {**QUESTIONS[0], "id": "q1b"}
    config = tiny(questions=[*QUESTIONS, twin], run=[*RUN, {**RUN[1], "id": "q1b"}])
    export = export_batch(config)
    assert (export.pending, export.total) == (4, 4)
    assert len(requests_of(export)) == 4


def test_files_are_split_by_size_and_by_count_and_match_the_manifest(tiny: Tiny) -> None:
    config = openai_config(tiny)
    by_count = export_batch(config, config.reports.dir / "count", max_requests_per_file=3)
    assert [f.lines for f in by_count.files] == [3, 1]
    line_bytes = sorted(
        len(line) + 1 for r in by_count.paths for line in r.read_bytes().split(b"\n")[:-1]
    )
    # Room for two of the shortest lines but never three: the size limit splits alone.
    limit_mb = (line_bytes[0] + line_bytes[1] + 10) / 1024 / 1024
    assert line_bytes[-1] <= limit_mb * 1024 * 1024
    by_size = export_batch(config, config.reports.dir / "size", max_file_mb=limit_mb)
    assert len(by_size.files) >= 2 and sum(f.lines for f in by_size.files) == 4
    for export in (by_count, by_size):
        manifest = read_manifest(export.out_dir / MANIFEST_NAME)
        for entry, path in zip(manifest.files, export.paths, strict=True):
            data = path.read_bytes()
            assert (
                entry.bytes == len(data) <= (limit_mb * 1024 * 1024 if export is by_size else 1e9)
            )
            assert entry.lines == data.count(b"\n")
            assert entry.sha256 == hashlib.sha256(data).hexdigest()
        # Together, the same requests in the same order as one file.
        assert requests_of(export) == requests_of(by_count)
    with pytest.raises(
        ConfigError, match=r"the request for question 'q1' alone is .* raise --max-file-mb"
    ):
        export_batch(config, config.reports.dir / "tiny-limit", max_file_mb=0.001)
    assert not list((config.reports.dir / "tiny-limit").glob("*.jsonl"))


def test_each_line_is_byte_for_byte_the_json_of_its_request(tiny: Tiny) -> None:
    from tests.conftest import QUESTIONS, RUN

    # Text that JSON must escape: quotes, a backslash, a line break, a tab, a control marker.
    odd = {**RUN[1], "answer": 'a "quoted" \\ back\nslash\t<end_of_turn> \u2028'}
    config = tiny(questions=QUESTIONS, run=[RUN[0], odd, *RUN[2:]])
    export = export_batch(config)
    for raw in export.paths[0].read_bytes().splitlines(keepends=True):
        request = json.loads(raw)
        expected = json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n"
        assert raw == expected.encode()
    assert "\\u003cend_of_turn>" in export.paths[0].read_text(encoding="utf-8")


def test_an_interrupted_export_leaves_no_files(tiny: Tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    config = openai_config(tiny)
    render = Prompt.render_json  # what the export renders each request's prompt with
    rendered: list[str] = []

    def interrupted_at_the_third(self: Prompt, *args: Any) -> str:
        rendered.append("x")
        if len(rendered) == 3:
            raise KeyboardInterrupt
        return render(self, *args)

    monkeypatch.setattr(Prompt, "render_json", interrupted_at_the_third)
    out = config.reports.dir / "out"
    with pytest.raises(KeyboardInterrupt):
        export_batch(config, out, max_requests_per_file=1)
    assert list(out.iterdir()) == []
    monkeypatch.setattr(Prompt, "render_json", render)
    assert export_batch(config, out).pending == 4  # the same folder, again


def test_a_folder_that_holds_an_export_is_not_written_over(tiny: Tiny) -> None:
    config = openai_config(tiny)
    export = export_batch(config, config.reports.dir / "out")
    before = export.paths[0].read_bytes()
    with pytest.raises(ConfigError, match=r"out: already holds a batch export; give another --out"):
        export_batch(config, config.reports.dir / "out")
    assert export.paths[0].read_bytes() == before


# --- import --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["openai", "vllm"])
def test_after_an_import_a_run_judges_nothing_and_gives_the_direct_verdicts(
    tiny: Tiny, shape: str
) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    results = engine(
        export, **{q: lambda r: answered(r, shape=shape) for q in ("q1", "q2", "q3", "q4")}
    )
    imported = import_batch(config, [results])  # the manifest beside the file
    assert (imported.lines, imported.imported, imported.already) == (4, 4, 0)
    assert (imported.problems, imported.not_judged, imported.still_pending) == ([], {}, 0)
    chats: list[Line] = []
    run = evaluate(config, backend=live_backend(config, chats))
    assert chats == []  # judged nothing
    assert all(v.cached and v.status == "ok" for v in run.report.verdicts)
    # A direct run on a fresh cache, the server answering the same: the same verdicts.
    direct_config = config.with_overrides(
        judge={"cache_path": config.judge.cache_path.with_name("direct.sqlite3")}
    )
    direct = evaluate(direct_config, backend=live_backend(config, chats))
    assert len(chats) == 4

    def shown(verdicts: list[Any]) -> list[Any]:
        return [v.model_dump(exclude={"cached", "latency_s"}) for v in verdicts]

    assert shown(run.report.verdicts) == shown(direct.report.verdicts)


def test_every_bad_line_is_reported_at_once_and_the_good_ones_imported(tiny: Tiny) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    requests = requests_of(export)
    keys = [r["custom_id"] for r in requests]
    good = [answered(r) for r in requests]
    lines = [
        json.dumps(good[0]),
        "{not json",
        json.dumps({**good[1], "custom_id": "h1:" + "0" * 32}),
        "",  # blank lines are skipped
        json.dumps(good[0]),  # the same item again
        json.dumps(requests[2]),  # a request line, not a result
        json.dumps({**good[2], "response": {**good[2]["response"], "status_code": "200"}}),
        json.dumps(ENGINE_ERRORS["vllm_error_response"][0](keys[3])),
        json.dumps([1, 2]),
        json.dumps(good[1]),
    ]
    out = export.out_dir / "results.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = import_batch(config, [out])
    assert (result.imported, result.already, result.still_pending) == (2, 0, 2)
    assert result.problems == [
        f"{out}:2: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{out}:3: custom_id 'h1:{'0' * 32}' is not an item of this export; import each output "
        "with the manifest of the export it came from",
        f"{out}:5: custom_id '{keys[0]}' again (first answered at {out}:1); the first is kept",
        f"{out}:6: a request line (method, url, body), not a result of the engine",
        f"{out}:7: 'response.status_code' must be an integer, not '200'",
        f"{out}:8: question 'q4' ({keys[3]}): not judged: the server says: {CONTEXT_TOO_LONG} "
        "(the prompt does not fit the model's context and is never cut: serve a longer context "
        "or shorten the context chunks)",
        f"{out}:9: expected a JSON object, got list",
    ]
    assert result.not_judged[keys[3]].kind == "truncated"


@pytest.mark.parametrize("name", sorted(ENGINE_ERRORS))
def test_an_engine_error_line_is_a_non_ok_reply_never_a_verdict(tiny: Tiny, name: str) -> None:
    make_line, kind = ENGINE_ERRORS[name]
    config = openai_config(tiny)
    export = export_batch(config)
    key = requests_of(export)[0]["custom_id"]
    reply = engine_reply(make_line(key))
    assert reply.kind == kind and reply.text == "" and reply.detail
    if name == "openai_error_file":
        assert reply.detail == (
            "the engine did not run the request: batch_expired: This request could not be "
            "executed before the completion window expired."
        )
    inputs = load_inputs(config)
    item = build_items(inputs.golden, inputs.run, config.retrieval.context_k)[0]
    verdict = verdict_for(item, reply, cached=False)
    assert verdict.status == {"truncated": "truncated", "error": "backend_error"}[kind]
    assert verdict.faithfulness is None and verdict.relevance is None
    result = import_batch(config, [engine(export, q1=lambda r: make_line(r["custom_id"]))])
    assert (result.imported, result.still_pending) == (3, 1)
    assert set(result.not_judged) == {key} and result.problems[0].startswith(
        f"{export.out_dir / 'results.jsonl'}:1: question 'q1' ({key}): "
    )
    # Never stored: the next export writes the item again, and a live run asks for it.
    again = export_batch(config, config.reports.dir / "again")
    assert [r["custom_id"] for r in requests_of(again)] == [key]


def test_a_failed_request_answered_on_a_second_try_is_no_problem(tiny: Tiny) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    expired = ENGINE_ERRORS["openai_error_file"][0]
    first = engine(export, q2=lambda r: expired(r["custom_id"]))
    retry = export.out_dir / "retry.jsonl"
    assert export.manifest is not None
    items = read_manifest(export.manifest).items
    request = next(r for r in requests_of(export) if items[r["custom_id"]] == "q2")
    retry.write_text(json.dumps(answered(request)) + "\n", encoding="utf-8")
    both = import_batch(config, [first, retry])
    assert (both.imported, both.problems, both.not_judged, both.still_pending) == (4, [], {}, 0)
    # The other way round, the reply is kept and the late error line is a problem.
    again = import_batch(config, [retry, first])
    assert again.problems == [
        f"{first}:2: custom_id '{request['custom_id']}' again (first answered at {retry}:1); "
        "the first is kept"
    ]


def test_importing_twice_changes_nothing(tiny: Tiny) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    results = engine(export)
    first = import_batch(config, [results])
    table = replies_table(config)
    second = import_batch(config, [results, results])  # a file named twice is read once
    assert (first.imported, first.already) == (4, 0)
    assert (second.imported, second.already, second.problems) == (0, 4, [])
    assert replies_table(config) == table


def test_a_crash_mid_import_keeps_whole_chunks_and_importing_again_completes(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    results = engine(export)
    calls = []
    put_many = VerdictCache.put_many

    def crash_on_the_third_chunk(self: VerdictCache, *args: Any) -> int:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the process dies here (Ctrl-C, or killed)
        return put_many(self, *args)

    monkeypatch.setattr(VerdictCache, "put_many", crash_on_the_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        import_batch(config, [results], chunk_rows=1)
    monkeypatch.setattr(VerdictCache, "put_many", put_many)
    db = sqlite3.connect(config.judge.cache_path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT COUNT(*) FROM replies").fetchone() == (2,)
    db.close()
    resumed = import_batch(config, [results], chunk_rows=1)
    assert (resumed.imported, resumed.already, resumed.still_pending) == (2, 2, 0)


def test_a_changed_configuration_is_refused_with_every_bad_line_and_nothing_written(
    tiny: Tiny,
) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    results = engine(export)
    with results.open("a", encoding="utf-8") as handle:
        handle.write("{broken\n")
    changed = openai_config(tiny, max_tokens=500)
    with pytest.raises(InputError) as raised:
        import_batch(changed, [results])
    fingerprint = read_manifest(export.out_dir / MANIFEST_NAME).fingerprint
    problems = raised.value.problems
    assert problems[0].startswith(
        f"{export.out_dir / MANIFEST_NAME}: exported for judge configuration {fingerprint}, but "
        "judge.openai and the prompt now give h1:"
    )
    assert "(changed: options.max_tokens); the replies were made by another judge" in problems[0]
    assert problems[1:] == [
        f"{results}:5: not valid JSON (Expecting property name enclosed in double quotes at column 2)"
    ]
    assert replies_table(changed) == []


def test_the_manifest_and_the_files_must_be_there(tiny: Tiny, tmp_path: Path) -> None:
    config = openai_config(tiny)
    export = export_batch(config)
    results = engine(export)
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(results.read_bytes())
    with pytest.raises(
        ConfigError, match=r"no manifest.json beside .*elsewhere.jsonl; give --manifest"
    ):
        import_batch(config, [elsewhere])
    assert import_batch(config, [elsewhere], export.out_dir / MANIFEST_NAME).imported == 4
    with pytest.raises(InputError, match=r"missing.jsonl: file not found"):
        import_batch(config, [results, tmp_path / "missing.jsonl"])
    request_file = import_batch(config, [export.paths[0]], export.out_dir / MANIFEST_NAME)
    assert request_file.problems == [
        f"{export.paths[0]}: a request file of this export, not the engine's output; import the "
        "files the engine wrote"
    ]
    (tmp_path / "m.json").write_text('{"format_version": 9}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"manifest format 9 is newer than this judge"):
        import_batch(config, [results], tmp_path / "m.json")


def test_the_fingerprint_is_the_live_backends_without_a_server(tiny: Tiny) -> None:
    config = openai_config(tiny)
    export = export_batch(config)  # nothing listens at judge.openai.base_url
    backend = live_backend(config, [])
    prompt = load_prompt(config.judge.prompt)
    manifest = read_manifest(export.out_dir / MANIFEST_NAME)
    assert manifest.fingerprint == judge_fingerprint(backend.identity, prompt).value


# --- the CLI (tests/test_cli.py would do as well) ------------------------------------------


def test_batch_commands_say_what_they_wrote_and_imported(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.cli import DEFAULT_BATCH_FILE_MB, main
    from judge.judging.backends.openai_batch import BATCH_MAX_FILE_MB

    assert DEFAULT_BATCH_FILE_MB == BATCH_MAX_FILE_MB  # the literal that keeps --help fast
    config = openai_config(tiny)
    assert config.source is not None
    toml = str(config.source)
    out_dir = config.reports.dir / "b"
    assert main(["--config", toml, "batch", "export", "--out", str(out_dir)]) == 0
    said = capsys.readouterr().out
    assert f"wrote 4 pending item(s) in 1 file(s) (0.0 MB) to {out_dir}; 0 of 4" in said
    manifest = read_manifest(out_dir / MANIFEST_NAME)
    export = BatchExport(out_dir, out_dir / MANIFEST_NAME, manifest.files, 4, 0, 4, "", [])
    results = engine(export, q4=lambda r: ENGINE_ERRORS["openai_400"][0](r["custom_id"]))
    assert main(["--config", toml, "batch", "import", str(results)]) == 2
    said, errors = capsys.readouterr()
    assert f"error: {results}:4: question 'q4'" in errors
    assert "imported 3 replies into" in said
    assert "1 items of the export still without a reply" in said
    assert main(["--config", toml, "batch", "export", "--out", str(out_dir / "again")]) == 0
    assert "wrote 1 pending item(s)" in capsys.readouterr().out


def test_after_an_import_a_run_needs_no_server_unless_a_reply_is_missing(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    # The batch engine was elsewhere: no OpenAI-compatible server answers here (port 9).
    from judge.cli import main

    config = openai_config(tiny, base_url="http://127.0.0.1:9/v1")
    assert config.source is not None
    text = config.source.read_text(encoding="utf-8")
    config.source.write_text(
        text + '\n[judge.openai]\nbase_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8"
    )
    toml = str(config.source)
    out_dir = config.reports.dir / "b"
    assert main(["--config", toml, "batch", "export", "--out", str(out_dir)]) == 0
    manifest = read_manifest(out_dir / MANIFEST_NAME)
    export = BatchExport(out_dir, out_dir / MANIFEST_NAME, manifest.files, 4, 0, 4, "", [])
    partial = engine(export, q4=lambda r: ENGINE_ERRORS["openai_400"][0](r["custom_id"]))
    assert main(["--config", toml, "batch", "import", str(partial)]) == 2
    capsys.readouterr()
    # One reply missing: the server is needed, and it is not there.
    assert main(["--config", toml, "run", "--backend", "openai"]) == 3
    assert "127.0.0.1:9" in capsys.readouterr().err
    # Every reply there: the run completes from the cache and says why no server was needed.
    assert main(["--config", toml, "batch", "import", str(engine(export, "all.jsonl"))]) == 0
    capsys.readouterr()
    assert main(["--config", toml, "run", "--backend", "openai"]) == 0
    out, err = capsys.readouterr()
    assert "every reply is in the cache" in out + err
    assert "(4 from the cache)" in out + err


@pytest.mark.parametrize("prompt", ["judge.cited.v1.md", "judge.sentences.v1.md"])
def test_export_in_the_other_modes_sends_what_the_live_backend_sends(
    tiny: Tiny, prompt: str
) -> None:
    # In sentences mode the schema depends on each answer (its sentence count): the bodies are
    # still the live backend's, byte for byte.
    config = openai_config(tiny).with_overrides(judge={"prompt": REPO / "prompts" / prompt})
    export = export_batch(config)
    requests = requests_of(export)
    chats: list[Line] = []
    evaluate(config, backend=live_backend(config, chats))
    assert [r["body"] for r in requests] == chats
    schemas = [r["body"]["response_format"]["json_schema"]["schema"] for r in requests]
    assert all("evidence" not in s["properties"] for s in schemas)


def test_an_export_pauses_the_garbage_collector_and_turns_it_on_again(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector is off while an export from a run file builds its requests (every object
    lives to the end: a collection only walks them again), and on again after it, even when it
    fails; it stays off after an export that started with it off."""
    config = openai_config(tiny)
    render = Prompt.render_json
    enabled: list[bool] = []

    def watched(self: Prompt, *args: Any) -> str:
        enabled.append(gc.isenabled())
        return render(self, *args)

    monkeypatch.setattr(Prompt, "render_json", watched)
    assert gc.isenabled()
    export_batch(config, config.reports.dir / "one")
    assert enabled and not any(enabled)
    assert gc.isenabled()

    def failing(self: Prompt, *args: Any) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(Prompt, "render_json", failing)
    with pytest.raises(KeyboardInterrupt):
        export_batch(config, config.reports.dir / "two")
    assert gc.isenabled()
    gc.disable()
    try:
        monkeypatch.setattr(Prompt, "render_json", render)
        export_batch(config, config.reports.dir / "three")
        assert not gc.isenabled()
    finally:
        gc.enable()
