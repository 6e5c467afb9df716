"""manifest.json: read back typed, and another format version or a damaged file is one clear error."""

import json
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.hashing import file_sha256
from judge.inputs.golden import load_golden
from judge.pipeline.evaluate import evaluate
from judge.record.store import read_manifest
from judge.results.manifest import FORMAT_VERSION, Manifest
from tests.conftest import REPO

Tiny = Callable[..., Config]


def test_read_manifest_gives_the_manifest_the_run_wrote(tiny: Tiny) -> None:
    config = tiny()
    result = evaluate(config, backend="lexical")
    manifest = read_manifest(result.folder.path)
    assert isinstance(manifest, Manifest)
    assert manifest == result.report.manifest
    assert manifest.format_version == FORMAT_VERSION == 4
    assert manifest.folder == result.folder.name
    assert manifest.judge.backend == "lexical"
    assert manifest.judge.chosen_because == "backend = lexical"
    prompt = REPO / "prompts" / "judge.v1.md"
    assert manifest.judge.prompt == str(prompt)
    assert manifest.judge.prompt_sha256 == file_sha256(str(prompt))
    golden = load_golden(config.data)
    assert manifest.fingerprints.golden == golden.questions_hash
    assert manifest.fingerprints.corpus == golden.corpus_hash
    assert manifest.fingerprints.judge == result.report.entry.judge_fingerprint
    assert manifest.run.source == str(config.data.run)
    assert manifest.run.meta.system == "test-rag"
    assert manifest.run.meta.chunking == {"method": "heading"}
    assert manifest.status_counts == {"ok": 4, "parse_error": 0, "backend_error": 0, "truncated": 0}
    assert manifest.started_at <= manifest.finished_at
    assert manifest.retrieval_settings() == config.retrieval
    # The configuration the run ran with (its backend given), typed; its file is not part of it.
    ran_with = config.with_overrides(judge={"backend": "lexical"})
    assert manifest.config == ran_with.model_copy(update={"source": None})
    assert manifest.config.reports.dir == config.reports.dir


@pytest.mark.parametrize("version", [1, 5, None])
def test_another_format_version_is_refused_with_what_to_do(tiny: Tiny, version: int | None) -> None:
    folder = evaluate(tiny(), backend="lexical").folder.path
    path = folder / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if version is None:
        del data["format_version"]
    else:
        data["format_version"] = version
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_manifest(folder)
    message = str(caught.value)
    written = "no format version" if version is None else f"format {version}"
    assert message.startswith(f"{folder.name}: a report folder of {written}, ")
    assert "this judge reads format 4 (and 2 and 3)" in message
    assert "run 'judge run'" in message


@pytest.mark.parametrize("version", [2, 3])
def test_a_folder_of_format_2_reads_with_its_configuration_typed(tiny: Tiny, version: int) -> None:
    """Format 2 recorded the configuration as its dump: the same JSON, which validates into
    the typed model. Format 3's manifest is format 4's (only the per-question files differ)."""
    result = evaluate(tiny(), backend="lexical")
    path = result.folder.path / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "format_version": version}), encoding="utf-8")
    manifest = read_manifest(result.folder.path)
    assert manifest.config == result.report.manifest.config
    assert manifest.model_copy(update={"format_version": 4}) == result.report.manifest


def test_a_recorded_configuration_no_longer_valid_is_refused_in_one_line(tiny: Tiny) -> None:
    folder = evaluate(tiny(), backend="lexical").folder.path
    path = folder / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["config"]["retrieval"]["context_k"] = "five"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_manifest(folder)
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{folder.name}: its recorded configuration is no longer valid (")
    assert "context_k" in line


def test_a_damaged_manifest_is_named(tiny: Tiny) -> None:
    folder = evaluate(tiny(), backend="lexical").folder.path
    path = folder / "manifest.json"
    path.write_text('{"format_version": 1, "folder": ', encoding="utf-8")  # cut off mid-write
    with pytest.raises(ConfigError, match="damaged") as caught:
        read_manifest(folder)
    assert str(caught.value).startswith(f"{path}: cannot be read")
    # Valid JSON of the right version, but not a manifest: damaged too, with the field named.
    path.write_text(json.dumps({"format_version": FORMAT_VERSION, "folder": "x"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="damaged") as caught:
        read_manifest(folder)
    assert str(caught.value).startswith(f"{path}: not a valid manifest (")


def test_the_per_task_fingerprints_of_an_older_folder_read_as_tasks() -> None:
    """Folders written before ``Fingerprints.tasks`` kept ``chunks``/``chunks_parts`` and
    ``correctness``/``correctness_parts``: they still read, as the same fingerprints."""
    from judge.results.manifest import Fingerprints, TaskFingerprint

    common = {
        "judge": "h1:a",
        "judge_parts": {"mode": "quote"},
        "retrieval": "h1:r",
        "golden": "h1:g",
        "corpus": "h1:c",
        "run": "h1:u",
    }
    old = Fingerprints.model_validate(
        common
        | {
            "chunks": "h1:k",
            "chunks_parts": {"task": "chunk"},
            "correctness": None,
            "correctness_parts": None,
        }
    )
    assert old.tasks == {"chunk": TaskFingerprint(value="h1:k", parts={"task": "chunk"})}
    assert Fingerprints.model_validate(common).tasks == {}
    both = Fingerprints.model_validate(
        common | {"correctness": "h1:v", "correctness_parts": {"task": "correctness"}}
    )
    assert both.tasks["correctness"].value == "h1:v"
    # What is written now reads back as it is.
    assert Fingerprints.model_validate(both.model_dump()) == both
