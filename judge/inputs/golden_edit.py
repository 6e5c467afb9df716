"""Adding the chunk labels a person confirmed to the golden questions file (``judge golden accept``).

The chunk-relevance judge lists, per report folder, the retrieved chunks it graded relevant that
a labelled golden question does not list (``missing-labels.csv``). A reviewer fills its
``confirmed`` column with yes or no; ``judge.inputs.confirmations`` reads that file back, and
this module adds the confirmed chunks to the questions' ``relevant_chunks``.

The golden set is the one file every number of the harness is measured against, edited by
people, so the edit is conservative:

- **Validated first, whole.** Every bad row of the confirmations file is reported at once
  (``FILE:LINE: what; what to do``), and so is every conflict with the golden set; then
  nothing is written. A conflict is anything a person has to decide: a question or chunk id
  that does not exist, a yes on an unanswerable question (it has no relevant chunks by
  definition) or on an unlabelled one (one added chunk would make its recall look complete),
  the same chunk marked both yes and no, and a no for a chunk the golden set lists (the
  reviewer disagrees with an existing label: that is a hand edit, never a side effect).
- **Idempotent.** A yes for a chunk already listed is nothing to do; a second run of the same
  file changes no byte.
- **Only the changed lines change, and only where the chunk goes.** The new ids are inserted
  after the last listed one, in the separator style of that very line; every other byte of the
  file (other lines, blank lines, a BOM, CRLF endings, key order, escapes) stays as it is, so
  the edit is a one-token diff in review.
- **Never a file the loader would refuse.** The edited text is staged beside the file, loaded
  with ``judge.inputs.golden.load_questions``, and only then moved into place, and only if the
  file has not changed since it was read (an editor saving meanwhile would otherwise lose its
  edit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, NamedTuple

from judge.config import DataConfig
from judge.errors import InputError
from judge.inputs.confirmations import Confirmation, Confirmations
from judge.inputs.golden import Chunk, GoldenQuestion, GoldenSet, load_questions
from judge.io.write import write_atomic


def _by_line(path: Path, problems: list[str]) -> list[str]:
    """``FILE:LINE ...`` problems of ``path`` in line order, whichever check found them."""
    located = re.compile(re.escape(f"{path}:") + r"(\d+)")

    def line_of(problem: str) -> int:
        match = located.match(problem)
        return int(match.group(1)) if match else 0

    return sorted(problems, key=line_of)


class LabelEdit(NamedTuple):
    """What accepting a confirmations file does to the questions file."""

    added: tuple[tuple[str, str], ...]
    """(question id, chunk id) appended to ``relevant_chunks``, in the file's order."""
    already: int
    """Confirmed chunks the golden set already lists: nothing to do."""
    marked_no: int
    """Chunks the reviewer said are not relevant (and the golden set does not list)."""
    undecided: int
    """Rows left empty."""
    text: str
    """The questions file's new text (the old text when nothing is added)."""
    lines: tuple[int, ...]
    """The lines of the questions file that change."""


# --- inserting chunk ids into one line, every other byte kept ---------------------------------

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class _Span(NamedTuple):
    key: str
    key_start: int
    value_start: int
    value_end: int


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _expect(text: str, at: int, char: str) -> int:
    if text[at : at + 1] != char:
        raise ValueError(f"expected {char!r} at column {at + 1}")
    return _skip(text, at + 1)


def _members(text: str, at: int) -> list[_Span]:
    """The members of the JSON object starting at ``at``, with where each key and value are."""
    at = _expect(text, _skip(text, at), "{")
    spans: list[_Span] = []
    if text[at : at + 1] == "}":
        return spans
    while True:
        key_start = at
        key, at = _DECODER.raw_decode(text, at)
        at = _expect(text, _skip(text, at), ":")
        value_start = at
        _, at = _DECODER.raw_decode(text, at)
        spans.append(_Span(str(key), key_start, value_start, at))
        at = _skip(text, at)
        if text[at : at + 1] == "}":
            return spans
        at = _expect(text, at, ",")


def _elements(text: str, at: int) -> list[tuple[int, int]]:
    """Where each element of the JSON array starting at ``at`` begins and ends."""
    at = _expect(text, at, "[")
    spans: list[tuple[int, int]] = []
    if text[at : at + 1] == "]":
        return spans
    while True:
        start = at
        _, at = _DECODER.raw_decode(text, at)
        spans.append((start, at))
        at = _skip(text, at)
        if text[at : at + 1] == "]":
            return spans
        at = _expect(text, at, ",")


def insert_chunks(line: str, chunk_ids: Iterable[str]) -> str:
    """``line`` (one question, as JSON) with ``chunk_ids`` appended to its ``relevant_chunks``,
    every other character kept: inserted after the last listed id, with the separator the
    array uses (or, for a one-id array, the one between the object's members), escaped as the
    line escapes. Raises ``ValueError`` when the line is not one this can edit in place."""
    members = _members(line, 0)
    found = [span for span in members if span.key == "relevant_chunks"]
    if not found:
        raise ValueError("no relevant_chunks field")
    elements = _elements(line, found[-1].value_start)  # JSON: the last of duplicate keys counts
    if not elements:
        raise ValueError("relevant_chunks is empty")
    if len(elements) > 1:
        separator = line[elements[0][1] : elements[1][0]]
    elif len(members) > 1:
        separator = line[members[0].value_end : members[1].key_start]
    else:
        separator = ", "
    escaped = line.isascii() and "\\u" in line  # written with ensure_ascii: keep it so
    end = elements[-1][1]
    inserted = "".join(separator + json.dumps(c, ensure_ascii=escaped) for c in chunk_ids)
    return line[:end] + inserted + line[end:]


def _edited_line(line: str, chunk_ids: list[str], where: str) -> str:
    """``insert_chunks``, checked: the same object, its keys in the same order, the ids added."""
    problem = f"{where}: the line cannot be edited in place"
    try:
        edited = insert_chunks(line, chunk_ids)
        before, after = json.loads(line), json.loads(edited)
    except ValueError as exc:
        raise InputError([f"{problem} ({exc}); add {', '.join(chunk_ids)} by hand"]) from None
    expected = {**before, "relevant_chunks": [*before["relevant_chunks"], *chunk_ids]}
    if after != expected or list(after) != list(before):  # pragma: no cover (a bug of ours)
        raise InputError([f"{problem}; add {', '.join(chunk_ids)} by hand"])
    return edited


# --- the edit ---------------------------------------------------------------------------------


def _question_lines(lines: list[str]) -> dict[str, int]:
    """Question id → its line index (0-based) in the questions file (already validated)."""
    found: dict[str, int] = {}
    for index, line in enumerate(lines):
        if line.strip():
            found[str(json.loads(line)["id"])] = index
    return found


def _said(relevant: bool) -> str:
    return "yes" if relevant else "no"


def plan_label_edit(
    confirmations: Confirmations, golden: GoldenSet, data: DataConfig, raw: bytes
) -> LabelEdit:
    """The edit of the questions file (``data.questions``, whose bytes are ``raw`` and whose
    validated content is ``golden``), or an ``InputError`` with every bad row and every
    conflict, in the confirmations file's line order, each pointing at the golden line to fix
    where there is one."""
    text = raw.decode("utf-8")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].split("\n")  # the loader's lines: split on \n only
    line_of = _question_lines(lines)
    tally = _tally(confirmations, golden, data, line_of)
    if tally.problems:
        raise InputError(
            [
                *_by_line(confirmations.path, tally.problems),
                f"nothing was written to {data.questions}; fix the rows above and run again",
            ]
        )
    for qid, chunk_ids in tally.added.items():
        index = line_of[qid]
        lines[index] = _edited_line(lines[index], chunk_ids, f"{data.questions}:{index + 1}")
    return LabelEdit(
        added=tuple(tally.pairs),
        already=tally.already,
        marked_no=tally.marked_no,
        undecided=confirmations.undecided,
        text=bom + "\n".join(lines),
        lines=tuple(sorted(line_of[qid] + 1 for qid in tally.added)),
    )


class _Tally(NamedTuple):
    """What the decided rows come to: the chunks to add per question (and as pairs, in row
    order), the yeses already listed, the noes, and every problem."""

    added: dict[str, list[str]]
    pairs: list[tuple[str, str]]
    already: int
    marked_no: int
    problems: list[str]


def _tally(
    confirmations: Confirmations, golden: GoldenSet, data: DataConfig, line_of: dict[str, int]
) -> _Tally:
    """Each decided row's outcome (``_outcome``), a repeated pair taken once."""
    questions = golden.by_id()
    seen: dict[tuple[str, str], Confirmation] = {}
    added: dict[str, list[str]] = {}
    pairs: list[tuple[str, str]] = []
    counts = {"already": 0, "no": 0}
    problems = list(confirmations.problems)
    for conf in confirmations.decided:
        if _repeated(conf, seen, problems):
            continue
        question = _known(conf, questions, golden, data, problems)
        if question is None:
            continue
        golden_line = f"{data.questions}:{line_of[conf.question_id] + 1}"
        outcome = _outcome(conf, question, golden_line, problems)
        if outcome == "add":
            added.setdefault(conf.question_id, []).append(conf.chunk_id)
            pairs.append((conf.question_id, conf.chunk_id))
        elif outcome in counts:
            counts[outcome] += 1
    return _Tally(added, pairs, counts["already"], counts["no"], problems)


def _repeated(
    conf: Confirmation, seen: dict[tuple[str, str], Confirmation], problems: list[str]
) -> bool:
    """Whether an earlier row decided the same pair; a problem when it decided otherwise."""
    first = seen.setdefault((conf.question_id, conf.chunk_id), conf)
    if first is conf:
        return False
    if first.relevant != conf.relevant:
        problems.append(
            f"{conf.where}: {conf.question_id} {conf.chunk_id} is marked "
            f"{_said(conf.relevant)} here and {_said(first.relevant)} at {first.where}; keep "
            "one of the two"
        )
    return True


def _known(
    conf: Confirmation,
    questions: dict[str, GoldenQuestion],
    golden: GoldenSet,
    data: DataConfig,
    problems: list[str],
) -> GoldenQuestion | None:
    """The row's question, when it and the row's chunk are in the golden set; else a problem."""
    qid, chunk, where = conf.question_id, conf.chunk_id, conf.where
    question = questions.get(qid)
    if question is None:
        problems.append(
            f"{where}: question_id '{qid}' is not in {data.questions} (renamed or "
            "removed?); fix the row or clear its confirmed cell"
        )
        return None
    if chunk not in golden.corpus:
        problems.append(
            f"{where}: chunk_id '{chunk}' is not in the corpus {data.corpus} (re-chunked "
            "since the report?); fix the row or clear its confirmed cell"
        )
        return None
    return question


def _outcome(
    conf: Confirmation, question: GoldenQuestion, golden_line: str, problems: list[str]
) -> Literal["add", "already", "no", "refused"]:
    """What one row does: adds its chunk, finds it listed already, is a no (which never
    removes a label), or is refused with a problem (a yes for a question that cannot take
    one more label)."""
    qid, chunk, where = conf.question_id, conf.chunk_id, conf.where
    listed = question.relevant_chunks or ()
    if not conf.relevant:
        if chunk not in listed:
            return "no"
        problems.append(
            f"{where}: {qid} {chunk} is marked no, but {golden_line} lists it as "
            "relevant; accepting never removes a label: if the reviewer is right, "
            "remove it from relevant_chunks there by hand"
        )
    elif not question.answerable:
        problems.append(
            f"{where}: {qid} {chunk} is marked yes, but {qid} is of type "
            f"'{question.type}' (answerable: false, {golden_line}): it has no relevant chunks by "
            "definition; if the corpus does answer it, fix its type and answerable there "
            "first, then run this again"
        )
    elif question.relevant_chunks is None:
        problems.append(
            f"{where}: {qid} {chunk} is marked yes, but {qid} has no chunk labels yet "
            f"(relevant_chunks: null, {golden_line}): one added chunk would make its recall "
            "look complete; label all its relevant chunks there by hand"
        )
    else:
        return "already" if chunk in listed else "add"
    return "refused"


def write_label_edit(
    edit: LabelEdit, original: bytes, corpus: dict[str, Chunk], data: DataConfig
) -> None:
    """Write the edited questions file (``write_questions``)."""
    write_questions(edit.text, original, corpus, data, "the labels were being added")


def write_questions(
    text: str, original: bytes, corpus: dict[str, Chunk], data: DataConfig, doing: str
) -> None:
    """Write the questions file's new ``text`` atomically, and only a file the loader reads:
    the text is staged beside it and loaded with ``load_questions`` before it takes the file's
    place (``judge.io.write.write_atomic``'s ``check``), unless the file no longer holds
    ``original`` (someone saved it since it was read while ``doing``: their edit would be
    lost). The file keeps its permissions; a read-only one is refused before anything is
    written."""
    path = data.questions

    def check(staged: Path) -> None:
        try:
            load_questions(staged, corpus, data)
        except InputError as exc:  # pragma: no cover (a bug of ours: the edit only adds)
            raise InputError(
                [
                    f"{path}: the edited file would not load, so nothing was written "
                    f"({problem.replace(str(staged), str(path))})"
                    for problem in exc.problems
                ]
            ) from None
        if (path.read_bytes() if path.exists() else b"") != original:
            raise InputError(
                [
                    f"{path}: the file changed while {doing} (saved in an "
                    "editor?); nothing was written: run judge golden accept again"
                ]
            )

    write_atomic(path, text, check=check)
