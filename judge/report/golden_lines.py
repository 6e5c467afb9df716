"""What ``judge golden propose | review | accept`` (of a candidates file) print: pure functions
of the wiring's results (``judge.pipeline.propose``, ``golden_review``, ``golden``), read
through protocols naming only what they read. The counts are the issue's: proposed, rejected
by each check, accepted and rejected by the person."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol


class _Proposed(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def candidates(self) -> Sequence[object]: ...
    @property
    def passed(self) -> int: ...
    @property
    def graded_by(self) -> str: ...
    @property
    def drafted_by(self) -> str: ...
    @property
    def elapsed_s(self) -> float: ...
    def rejected_by(self) -> Mapping[str, int]: ...


def proposed_lines(proposed: _Proposed) -> list[str]:
    """``golden propose``: how many were proposed, passed, and were rejected by each check."""
    total = len(proposed.candidates)
    checks = ", ".join(f"{name} {n}" for name, n in proposed.rejected_by().items()) or "none"
    lines = []
    if proposed.drafted_by:
        lines.append(f"drafted by {proposed.drafted_by} in {proposed.elapsed_s:.1f} s")
    lines += [
        f"proposed {total} candidate(s) to {proposed.path}: {proposed.passed} passed every "
        f"check, {total - proposed.passed} rejected (by check: {checks})",
        f"chunks graded by {proposed.graded_by}",
        f"next: judge golden review {proposed.path}, then judge golden accept {proposed.path}",
    ]
    return lines


class _Reviewed(Protocol):
    @property
    def accepted(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def left(self) -> int: ...


def reviewed_lines(reviewed: _Reviewed, path: Path) -> list[str]:
    """``golden review``: what the person decided in this session, and what is left."""
    return [
        f"accepted {reviewed.accepted}, rejected {reviewed.rejected}; {reviewed.left} left to "
        f"decide in {path}",
        f"next: judge golden accept {path}",
    ]


class _CandidateAdd(Protocol):
    @property
    def added(self) -> Sequence[tuple[str, str]]: ...
    @property
    def already(self) -> int: ...
    @property
    def rejected_by_person(self) -> int: ...
    @property
    def undecided(self) -> int: ...
    @property
    def failed_checks(self) -> int: ...


class _CandidatesAccepted(Protocol):
    @property
    def questions(self) -> Path: ...
    @property
    def add(self) -> _CandidateAdd: ...
    @property
    def written(self) -> bool: ...
    @property
    def questions_hash(self) -> tuple[str, str]: ...


def candidates_accepted_lines(
    accepted: _CandidatesAccepted, *, dry_run: bool, shown: int = 10
) -> list[str]:
    """``golden accept`` of a candidates file: the questions added (the first ``shown`` named),
    those already in the set, the person's rejections, the undecided, the checks' rejections."""
    add = accepted.add
    n = len(add.added)
    listed = ", ".join(f"{qid} ← {cid}" for qid, cid in add.added[:shown])
    more = f", … {n - shown} more" if n > shown else ""
    questions = f"{n} question{'' if n == 1 else 's'}"
    if not n:
        head = f"no questions to add to {accepted.questions}"
    else:
        verb = "would add" if dry_run else "added"
        head = f"{verb} {questions} to {accepted.questions} ({listed}{more})"
    parts = [
        head,
        f"{add.already} already in the golden set",
        f"{add.rejected_by_person} rejected by the person",
        f"{add.undecided} not decided",
        f"{add.failed_checks} rejected by the checks",
    ]
    lines = ["; ".join(parts)]
    if n and dry_run:
        lines.append("nothing written (--dry-run)")
    elif accepted.written:
        before, after = accepted.questions_hash
        lines.append(
            f"the golden set changed ({before} → {after}): the next run is not compared with "
            "runs on the old one (pin a new baseline after it), and an adapter is asked again"
        )
    return lines
