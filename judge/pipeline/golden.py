"""``judge golden accept FILE``: the chunk labels a reviewer confirmed, added to the golden
questions file (``judge.inputs.confirmations`` reads the file, ``judge.inputs.golden_edit``
plans and writes the edit)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.inputs.confirmations import read_confirmations
from judge.inputs.golden import load_golden
from judge.inputs.golden_edit import LabelEdit, plan_label_edit, write_label_edit
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
