"""``judge.report.golden_lines``: the counts the issue asks for, in one line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from judge.report.golden_lines import candidates_accepted_lines, proposed_lines, reviewed_lines


class _Proposed(NamedTuple):
    path: Path
    candidates: tuple[Any, ...]
    passed: int
    graded_by: str
    drafted_by: str
    elapsed_s: float

    def rejected_by(self) -> dict[str, int]:
        return {"covered": 2, "span_absent": 1}


class _Add(NamedTuple):
    added: tuple[tuple[str, str], ...]
    already: int
    rejected_by_person: int
    undecided: int
    failed_checks: int


class _Accepted(NamedTuple):
    questions: Path
    add: _Add
    written: bool
    questions_hash: tuple[str, str]


def test_proposed_says_how_many_passed_and_were_rejected_by_each_check() -> None:
    lines = proposed_lines(
        _Proposed(Path("c.jsonl"), (1, 2, 3, 4), 1, "lexical · v5", "openai · gemma", 12.34)
    )
    assert lines[0] == "drafted by openai · gemma in 12.3 s"
    assert (
        lines[1]
        == "proposed 4 candidate(s) to c.jsonl: 1 passed every check, 3 rejected (by check: covered 2, span_absent 1)"
    )
    assert lines[-1] == "next: judge golden review c.jsonl, then judge golden accept c.jsonl"
    assert proposed_lines(_Proposed(Path("c.jsonl"), (), 0, "x", "", 0.0))[0].startswith(
        "proposed 0"
    )


def test_reviewed_and_accepted_say_what_the_person_decided() -> None:
    class Reviewed(NamedTuple):
        accepted: int
        rejected: int
        left: int

    assert (
        reviewed_lines(Reviewed(2, 1, 3), Path("c.jsonl"))[0]
        == "accepted 2, rejected 1; 3 left to decide in c.jsonl"
    )
    add = _Add((("q31", "c-a"), ("q32", "c-b")), 1, 2, 3, 4)
    lines = candidates_accepted_lines(
        _Accepted(Path("q.jsonl"), add, True, ("h1:a", "h1:b")), dry_run=False
    )
    assert lines[0] == (
        "added 2 questions to q.jsonl (q31 ← c-a, q32 ← c-b); 1 already in the golden set; "
        "2 rejected by the person; 3 not decided; 4 rejected by the checks"
    )
    assert lines[1].startswith("the golden set changed (h1:a → h1:b)")
    dry = candidates_accepted_lines(
        _Accepted(Path("q.jsonl"), add, False, ("h", "h")), dry_run=True, shown=1
    )
    assert dry[0].startswith("would add 2 questions to q.jsonl (q31 ← c-a, … 1 more)")
    assert dry[1] == "nothing written (--dry-run)"
    none = candidates_accepted_lines(
        _Accepted(Path("q.jsonl"), _Add((), 0, 0, 0, 0), False, ("h", "h")), dry_run=False
    )
    assert none == [
        "no questions to add to q.jsonl; 0 already in the golden set; 0 rejected by the person; 0 not decided; 0 rejected by the checks"
    ]
