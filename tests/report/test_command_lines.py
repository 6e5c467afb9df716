"""The views of the commands that write files or count things: pure functions of a result."""

from pathlib import Path
from types import SimpleNamespace as NS

from judge.report.command_lines import (
    accepted_lines,
    batch_import_lines,
    cache_stats_lines,
    foreign_import_lines,
    pruned_lines,
    sampled_lines,
)


def test_golden_accept_names_the_first_ten_and_counts_the_rest() -> None:
    edit = NS(
        added=tuple((f"q{i}", f"c{i}") for i in range(12)),
        already=1,
        marked_no=2,
        undecided=3,
        lines=(4, 5),
    )
    accepted = NS(questions=Path("golden/q.jsonl"), edit=edit, written=False)
    lines = accepted_lines(accepted, dry_run=True)
    assert lines[0].startswith("would add 12 labels to golden/q.jsonl (q0 + c0, q1 + c1, ")
    assert ", … 2 more); 1 already listed; 2 marked no; 3 not decided" in lines[0]
    assert lines[1] == "nothing written (--dry-run); line(s) 4, 5 would change"
    none_added = NS(**{**vars(edit), "added": (), "undecided": 0})
    nothing = NS(questions=Path("q.jsonl"), edit=none_added, written=False)
    assert accepted_lines(nothing, dry_run=False) == [
        "no labels to add to q.jsonl; 1 already listed; 2 marked no"
    ]


def test_cache_stats_leaves_out_the_schema_and_separates_configurations() -> None:
    entry = NS(
        fingerprint="sha256:ab",
        label="ollama gemma",
        parts={"model": "gemma", "schema": {"x": 1}},
        replies=4,
        last_used_at="2026-12-01",
    )
    lines = cache_stats_lines(NS(path=Path("c.sqlite"), entries=[entry]))
    assert lines == [
        "cache: c.sqlite · 1 judge configuration(s)",
        "",
        "sha256:ab  4 replies  last used 2026-12-01",
        "  ollama gemma",
        '  model: "gemma"',
    ]


def test_counts_in_words() -> None:
    assert pruned_lines(NS(fingerprints=1, replies=4), 30.0, dry_run=True) == [
        "would remove 1 judge configuration(s) unused for 30 days (4 replies)"
    ]
    sampled = NS(sheet=Path("s.csv"), folder="f", per_type={"factual": 2}, items=2)
    assert sampled_lines(sampled, 3)[1] == "only 2 unlabelled item(s) were left to sample"
    done = NS(lines=3, imported=3, already=0, not_judged={}, problems=[], still_pending=0)
    assert batch_import_lines(done, Path("c.sqlite"))[-1].startswith("every item is in the cache")


def test_foreign_import_ends_with_the_data_table() -> None:
    result = NS(
        questions=Path("imported/questions.jsonl"),
        per_type={"factual": 2, "negative": 0},
        chunks=5,
        failed=1,
        unlabelled=0,
        data_lines=["[data]", 'questions = "imported/questions.jsonl"'],
    )
    lines = foreign_import_lines(result, "x.jsonl", "judge.toml")
    assert lines[0] == (
        "imported 2 question(s) (2 factual), 5 chunk(s) and 1 answer(s) from x.jsonl into imported"
    )
    assert lines[-5:] == [
        "",
        "use it: put this [data] table in judge.toml (replacing its own), then 'judge check':",
        "",
        "[data]",
        'questions = "imported/questions.jsonl"',
    ]
