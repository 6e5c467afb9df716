"""``judge golden accept FILE``: the chunk labels a reviewer confirmed, added to the golden
questions file (``judge.inputs.confirmations`` reads the file, ``judge.inputs.golden_edit``
plans and writes the edit); or the candidates a person accepted (a ``judge golden propose``
file: ``judge.inputs.golden_add``)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.inputs.candidates import is_candidates_file, load_candidates
from judge.inputs.confirmations import read_confirmations
from judge.inputs.golden import load_golden
from judge.inputs.golden_add import CandidateAdd, growing_golden, plan_candidate_add
from judge.inputs.golden_edit import LabelEdit, plan_label_edit, write_label_edit, write_questions
from judge.io.lock import locked
from judge.io.text import check_readable


class Accepted(NamedTuple):
    questions: Path
    """The golden questions file (``data.questions``)."""
    edit: LabelEdit
    written: bool
    """False for a dry run, and when nothing was to be added (the file is not touched)."""


def accept_labels(config: Config, file: Path, *, dry_run: bool = False) -> Accepted:
    """Add the chunks ``file`` confirms to the golden questions, or raise with every problem
    and write nothing.

    The questions file is read, planned against and replaced holding its lock
    (``judge.io.lock.locked``), so two accepts at once both land, the second planning on what the
    first wrote; a person's editor takes no lock, so the write is also refused when the file's
    bytes changed since they were read. After the write the golden set is loaded again with
    the loader every command uses: the file on disk is proved valid, not assumed."""
    data = config.data
    confirmations = read_confirmations(file, data.max_file_mb)  # its problems first, alone
    check_readable(data.questions, data.max_file_mb)  # before its lock is made beside it
    with nullcontext() if dry_run else locked(data.questions, doing="editing"):
        original = data.questions.read_bytes()
        golden = load_golden(data)
        edit = plan_label_edit(confirmations, golden, data, original)
        if dry_run or not edit.added:
            return Accepted(data.questions, edit, written=False)
        write_label_edit(edit, original, golden.corpus, data)
        load_golden(data)
    return Accepted(data.questions, edit, written=True)


class CandidatesAccepted(NamedTuple):
    questions: Path
    """The golden questions file (``data.questions``)."""
    add: CandidateAdd
    written: bool
    """False for a dry run, and when nothing was to be added (the file is not touched)."""
    questions_hash: tuple[str, str]
    """The golden set's fingerprint before and after (the same when nothing was written)."""


def accept_candidates(config: Config, file: Path, *, dry_run: bool = False) -> CandidatesAccepted:
    """Add the candidates ``file`` marks accepted to the golden questions, or raise with every
    problem and write nothing (``judge.inputs.golden_add``: validated, idempotent, appended,
    new ids, the split rule); locked, checked and reloaded like ``accept_labels``."""
    data = config.data
    candidates = load_candidates(file, data.max_file_mb)
    if data.questions.exists() or data.questions.is_symlink():
        check_readable(data.questions, data.max_file_mb)
    with nullcontext() if dry_run else locked(data.questions, doing="editing"):
        original = data.questions.read_bytes() if data.questions.exists() else b""
        golden = growing_golden(data)
        add = plan_candidate_add(candidates, golden, data, original, str(file))
        before = golden.questions_hash
        if dry_run or not add.added:
            return CandidatesAccepted(data.questions, add, False, (before, before))
        write_questions(add.text, original, golden.corpus, data, "the candidates were being added")
        after = load_golden(data).questions_hash
    return CandidatesAccepted(data.questions, add, True, (before, after))


def accept(config: Config, file: Path, *, dry_run: bool = False) -> Accepted | CandidatesAccepted:
    """``judge golden accept FILE``: a candidates file (``judge golden propose``'s) adds
    questions, a missing-labels file adds chunk labels."""
    if is_candidates_file(file, config.data.max_file_mb):
        return accept_candidates(config, file, dry_run=dry_run)
    return accept_labels(config, file, dry_run=dry_run)
