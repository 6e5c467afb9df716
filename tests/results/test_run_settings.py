"""The run's settings beside its numbers (issue 21 part 5): a change of the RAG system's
embedding model or version, chunking or generator since the compared run is said beside the
comparison; a run whose index and queries were embedded by two models is refused."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.inputs.runs import RunSettings
from judge.results.compare import GateRule, QuestionValues, SectionComparison
from judge.results.history import (
    compare_with_history,
    compared_settings_note,
    load_history,
    settings_changes,
    settings_note,
)
from tests.conftest import RUN, history_entry, latest_report, run_lexical

Tiny = Callable[..., Config]

V1 = RunSettings(embedding_model="e5-small", embedding_version="v1", chunking={"max_chars": 450})


def _with_meta(**meta: Any) -> list[dict[str, Any]]:
    """The tiny run with ``meta`` added to its ``run_meta`` (a value of None removes a key)."""
    run = copy.deepcopy(RUN)
    run[0]["run_meta"].update(meta)
    run[0]["run_meta"] = {k: v for k, v in run[0]["run_meta"].items() if v is not None}
    return run


# --- the note ------------------------------------------------------------------------------


def test_a_changed_embedding_version_is_named_with_both_values() -> None:
    v2 = V1.model_copy(update={"embedding_version": "v2"})
    expected = (
        "the embedding version changed since that run (v1 → v2): a fall below may reflect that"
    )
    assert settings_note(V1, v2) == expected
    assert settings_note(V1, v2, "retrieval") == expected
    assert settings_note(V1, V1) is None


def test_several_changes_are_listed_each_with_its_values() -> None:
    changed = RunSettings(
        embedding_model="e5-base",
        embedding_version="v1",
        chunking={"max_chars": 800, "overlap": 50},
        generator_model="gemma3:4b",
    )
    assert settings_note(V1, changed) == (
        "the embedding model (e5-small → e5-base), the chunking (max_chars 450 → 800, overlap "
        "not stated → 50) and the generator model (not stated → gemma3:4b) changed since that "
        "run: a fall below may reflect that"
    )


def test_the_generator_is_named_beside_the_judge_numbers_only() -> None:
    """Retrieval does not depend on the generator; the verdicts do."""
    other = V1.model_copy(update={"generator_model": "gemma3:4b"})
    assert settings_note(V1, other, "retrieval") is None
    assert settings_note(V1, other, "judge") == (
        "the generator model changed since that run (not stated → gemma3:4b): a fall below may "
        "reflect that"
    )


def test_settings_not_recorded_are_not_compared() -> None:
    """A history line written before the settings were recorded: nothing is known to change."""
    assert settings_changes(None, V1) == []
    assert settings_note(V1, None) is None


def test_a_long_value_is_cut() -> None:
    long = V1.model_copy(update={"embedding_model": "m" * 500})
    (change,) = settings_changes(V1, long)
    assert len(change) < 120 and change.endswith("…)")


# --- the comparison with history ------------------------------------------------------------


def _compare(
    earlier_settings: RunSettings | None, settings: RunSettings, corpus: str = "c"
) -> list[SectionComparison]:
    """Run B compared with run A (no question values: only the notes matter here)."""
    earlier = history_entry("A", settings=earlier_settings)
    entry = history_entry("B", settings=settings, corpus_hash=corpus)
    values = QuestionValues({}, {"retrieval": {}, "judge": {}})
    return compare_with_history(entry, [earlier], values, lambda _: values, GateRule())


def test_the_comparison_notes_the_change_beside_the_numbers_and_still_compares() -> None:
    v2 = V1.model_copy(update={"embedding_version": "v2", "generator_model": "gemma3:4b"})
    retrieval, judge = _compare(V1, v2, corpus="c2")
    assert retrieval.baseline == judge.baseline == "A"  # compared all the same
    assert retrieval.note == (
        "the corpus changed since that run: the numbers measure a different corpus; the "
        "embedding version changed since that run (v1 → v2): a fall below may reflect that"
    )
    assert judge.note.endswith(
        "the embedding version (v1 → v2) and the generator model (not stated → gemma3:4b) "
        "changed since that run: a fall below may reflect that"
    )


def test_an_old_history_line_without_settings_still_reads_and_is_compared_quietly(
    tmp_path: Path,
) -> None:
    line = history_entry("A").model_dump(mode="json")
    del line["settings"]  # a line written before the field existed
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (entry,) = load_history(path).entries
    assert entry.settings is None
    retrieval, judge = _compare(entry.settings, V1)
    assert (retrieval.baseline, retrieval.note, judge.note) == ("A", "", "")


def test_the_note_for_a_line_of_its_own_merges_the_sections() -> None:
    """What the nightly's first line can say: each change once, whatever section saw it."""
    v2 = V1.model_copy(update={"embedding_version": "v2", "generator_model": "g"})
    earlier, entry = history_entry("A", settings=V1), history_entry("B", settings=v2)
    comparisons = _compare(V1, v2)
    baseline = SectionComparison("judge", "baseline", [], "")  # not a history folder: passed over
    assert compared_settings_note(entry, [earlier, entry], [*comparisons, baseline]) == (
        "the embedding version (v1 → v2) and the generator model (not stated → g) changed since "
        "the last compatible run: a fall below may reflect that"
    )
    assert compared_settings_note(entry, [earlier, entry], []) is None
    same = history_entry("B", settings=V1)
    assert compared_settings_note(same, [earlier, same], comparisons) is None


# --- judge run and judge nightly ---------------------------------------------------------------

NOTE = "the embedding version changed since that run (v1 → v2): a fall below may reflect that"


def test_judge_run_says_the_embedding_version_changed_beside_the_numbers(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_lexical(tiny(run=_with_meta(embedding_version="v1"))) == 0
    capsys.readouterr()
    config = tiny(run=_with_meta(embedding_version="v2"))
    assert run_lexical(config) == 0
    out = capsys.readouterr().out
    retrieval = next(line for line in out.splitlines() if line.startswith("retrieval vs "))
    judge = next(line for line in out.splitlines() if line.startswith("judge vs "))
    assert retrieval.endswith(f"({NOTE})") and judge.endswith(f"({NOTE})")
    report = latest_report(config)
    assert [c["note"] for c in report["comparisons"]] == [NOTE, NOTE]
    assert report["entry"]["settings"]["embedding_version"] == "v2"
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    markdown = (config.reports.dir / folder / "report.md").read_text(encoding="utf-8")
    assert "the embedding version changed since that run (v1 → v2)" in markdown
    # The same settings again: nothing to say.
    assert run_lexical(config) == 0
    assert "changed since that run" not in capsys.readouterr().out


def test_judge_nightly_says_the_embedding_version_changed_on_its_comparison_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tiny(run=_with_meta(embedding_version="v1"))
    assert first.source is not None
    nightly = ["--config", str(first.source), "nightly", "--backend", "lexical"]
    assert main(nightly) == 1  # no baseline yet: nothing compared
    capsys.readouterr()
    tiny(run=_with_meta(embedding_version="v2"))
    assert main(nightly) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("nightly: ")  # the verdict stays first, the note beside it
    assert out[0] == (
        "nightly: ok: no regression; the embedding version changed since the last compatible "
        "run (v1 → v2): a fall below may reflect that"
    )
    comparison = [line for line in out if line.startswith(("retrieval vs ", "judge vs "))]
    assert len(comparison) == 2 and all(line.endswith(f"({NOTE})") for line in comparison)


# --- index and queries embedded apart ----------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "named"),
    [
        (
            {"index_embedding_model": "e5-small", "query_embedding_model": "e5-base"},
            "model 'e5-small' (index_embedding_model) and the queries with 'e5-base' "
            "(query_embedding_model)",
        ),
        (  # the shared field stands for the side not stated apart
            {"index_embedding_version": "2024-02", "embedding_version": "2024-06"},
            "version '2024-02' (index_embedding_version) and the queries with '2024-06' "
            "(embedding_version)",
        ),
    ],
)
def test_a_run_whose_index_and_queries_were_embedded_apart_is_refused_before_scoring(
    tiny: Tiny, capsys: pytest.CaptureFixture[str], meta: dict[str, str], named: str
) -> None:
    config = tiny(run=_with_meta(**meta))
    assert run_lexical(config) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"error: {config.data.run}:1: run_meta: the index was embedded with ")
    assert named in line
    assert not (config.reports.dir / "latest").exists()  # nothing was scored or written
    assert not (config.reports.dir / "history.jsonl").exists()


def test_both_sides_stated_alike_are_one_setting(tiny: Tiny) -> None:
    config = tiny(
        run=_with_meta(
            embedding_model=None,
            index_embedding_model="e5-small",
            query_embedding_model="e5-small",
            embedding_version="v1",
        )
    )
    assert run_lexical(config) == 0
    settings = latest_report(config)["entry"]["settings"]
    assert settings == {
        "embedding_model": "e5-small",
        "embedding_version": "v1",
        "chunking": {"method": "heading"},
        "generator_model": None,
    }


def test_a_side_not_stated_apart_is_the_shared_field() -> None:
    from judge.inputs.runs import RunMeta

    meta = RunMeta(embedding_model="e5", query_embedding_version="v2", embedding_version="v2")
    assert meta.embedding_mismatch() is None
    assert meta.settings() == RunSettings(embedding_model="e5", embedding_version="v2")
    only_index = RunMeta(index_embedding_model="e5")  # the query side unknown: nothing to refuse
    assert only_index.embedding_mismatch() is None
    assert only_index.settings().embedding_model == "e5"
    apart = RunMeta(embedding_model="e5", query_embedding_model="bge")
    assert apart.embedding_mismatch() == (
        "run_meta: the index was embedded with model 'e5' (embedding_model) and the queries "
        "with 'bge' (query_embedding_model): their vectors are not comparable, so retrieval "
        "would be measured on a broken index; embed both with one model (or correct run_meta)"
    )
