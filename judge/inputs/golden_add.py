"""Adding the candidates a person accepted to the golden questions file (``judge golden accept
CANDIDATES.jsonl``; the candidates come from ``judge golden propose``, docs/golden.md).

The same care as adding chunk labels (``judge.inputs.golden_edit``):

- **Validated first, whole.** Every problem is reported at once with its line, then nothing is
  written: an accepted candidate that verification rejected (the person overrules a check by
  clearing its ``rejected`` list by hand, on purpose), a type that is not configured, a chunk
  that is not in the corpus, an out-of-scope candidate with chunks.
- **Idempotent.** A candidate whose question is already in the golden set (same letters and
  digits, normalised: ``judge.results``-free ``_letters``) is counted ``already`` and not added
  again: a second accept of the same file changes no byte.
- **Appended, every other byte kept.** New questions go after the last line, in the file's
  own line ending (CRLF stays CRLF), with keys in the order golden/README.md shows; nothing
  else moves.
- **New ids never collide**: the most common ``<prefix><number>`` form of the ids (``q07``)
  continues after the highest number in use, as wide as the widest (``q31``), and skips any id
  taken.
- **The split rule keeps tuning and holdout apart.** A new question takes the split of the
  first golden question sharing one of its chunks (a chunk is never tuned on through one
  question and held out through another); one that shares none (out of scope, unlabelled) goes
  to ``holdout`` while its type has less than a third of its questions there, else ``tune``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from judge.config import DataConfig
from judge.errors import InputError
from judge.hashing import tagged_hash
from judge.inputs.candidates import Candidate
from judge.inputs.golden import GoldenQuestion, GoldenSet, load_corpus, load_golden
from judge.textnorm import normalise

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


class CandidateAdd(NamedTuple):
    """What accepting a candidates file does to the questions file."""

    added: tuple[tuple[str, str], ...]
    """(new question id, candidate id), in the candidates file's order."""
    already: int
    """Accepted candidates whose question the golden set holds already."""
    rejected_by_person: int
    undecided: int
    failed_checks: int
    """Candidates verification rejected (never shown for a decision)."""
    text: str
    """The questions file's new text (the old text when nothing is added)."""


def growing_golden(data: DataConfig) -> GoldenSet:
    """The golden set, or an empty one over the corpus while the questions file does not exist
    yet or holds nothing (a first set grows from nothing: propose, review, accept)."""
    path = data.questions
    if path.exists() and not path.is_symlink() and path.is_file() and not path.read_bytes().strip():
        empty = True
    else:
        empty = not path.exists() and not path.is_symlink()
    if not empty:
        return load_golden(data)
    corpus = load_corpus(data.corpus, data.max_file_mb)
    return GoldenSet(
        questions=(),
        corpus=corpus,
        questions_hash=tagged_hash([], 16),
        corpus_hash=tagged_hash([c.model_dump(mode="json") for c in corpus.values()], 16),
    )


def _letters(text: str) -> str:
    return "".join(c for c in normalise(text) if unicodedata.category(c)[0] in "LN")


def new_ids(existing: Sequence[str], count: int) -> list[str]:
    """``count`` ids continuing the most common ``<prefix><number>`` form, none in use."""
    forms = [m for m in (_NUMBERED.match(i) for i in existing) if m]
    prefix = Counter(m.group(1) for m in forms).most_common(1)[0][0] if forms else "q"
    same = [m for m in forms if m.group(1) == prefix]
    width = max((len(m.group(2)) for m in same), default=2)
    number = max((int(m.group(2)) for m in same), default=0)
    taken = set(existing)
    out: list[str] = []
    while len(out) < count:
        number += 1
        candidate = f"{prefix}{number:0{width}d}"
        if candidate not in taken:
            out.append(candidate)
    return out


def assign_split(
    candidate: Candidate, questions: Sequence[GoldenQuestion], added: Sequence[GoldenQuestion]
) -> str:
    """The split of a new question (module docstring: the rule)."""
    everyone = [*questions, *added]
    mine = set(candidate.relevant_chunks or ())
    for question in everyone:
        if mine & set(question.relevant_chunks or ()) and question.split is not None:
            return question.split
    same = [q for q in everyone if q.type == candidate.type]
    held = sum(q.split == "holdout" for q in same)
    return "holdout" if 3 * held < len(same) + 1 else "tune"


def _problems(c: Candidate, where: str, golden: GoldenSet, data: DataConfig) -> list[str]:
    problems = []
    if c.rejected:
        problems.append(
            f"{where}: {c.candidate_id} is accepted but verification rejected it "
            f"({'; '.join(c.rejected)}); decide reject, or empty its rejected list by hand "
            "if you overrule the check"
        )
    if c.type not in data.question_types:
        problems.append(f"{where}: type '{c.type}' is not one of {', '.join(data.question_types)}")
    unknown = [cid for cid in c.relevant_chunks or () if cid not in golden.corpus]
    if unknown:
        problems.append(f"{where}: relevant_chunks not in the corpus: {', '.join(unknown)}")
    if (c.type in data.out_of_scope_types) == c.answerable:
        problems.append(f"{where}: answerable does not fit the type '{c.type}'; fix one of them")
    return problems


def _line(question: GoldenQuestion) -> str:
    record = question.model_dump(mode="json", exclude_defaults=True)
    record["relevant_chunks"] = question.relevant_chunks  # null is a value, never dropped
    order = ("id", "type", "question", "relevant_chunks", "answerable", "split", "tags")
    ordered = {key: record[key] for key in order if key in record}
    if "answerable" not in ordered:
        ordered["answerable"] = question.answerable
    return json.dumps(ordered, ensure_ascii=False)


def plan_candidate_add(
    candidates: Sequence[Candidate], golden: GoldenSet, data: DataConfig, raw: bytes, where: str
) -> CandidateAdd:
    """The new text of the questions file (bytes ``raw``, content ``golden``) with the accepted
    candidates appended, or an ``InputError`` with every problem (``where``: the candidates
    file, ``where:N`` per line)."""
    known = {_letters(q.question) for q in golden.questions}
    accepted = [(n, c) for n, c in enumerate(candidates, start=1) if c.decision == "accept"]
    problems = [p for n, c in accepted for p in _problems(c, f"{where}:{n}", golden, data)]
    if problems:
        raise InputError([*problems, f"nothing was written to {data.questions}"])
    fresh: list[Candidate] = []
    for _, c in accepted:
        if _letters(c.question) not in known:
            known.add(_letters(c.question))
            fresh.append(c)
    ids = new_ids([q.id for q in golden.questions], len(fresh))
    added: list[GoldenQuestion] = []
    for qid, c in zip(ids, fresh, strict=True):
        split = assign_split(c, golden.questions, added)
        added.append(
            GoldenQuestion.model_validate(
                {
                    "id": qid,
                    "type": c.type,
                    "question": c.question,
                    "relevant_chunks": c.relevant_chunks,
                    "answerable": c.answerable,
                    "split": split,
                    "tags": c.tags,
                }
            )
        )
    text = raw.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = "".join(_line(q) + newline for q in added)
    if added and text and not text.endswith("\n"):
        lines = newline + lines
    return CandidateAdd(
        added=tuple((q.id, c.candidate_id) for q, c in zip(added, fresh, strict=True)),
        already=len(accepted) - len(fresh),
        rejected_by_person=sum(c.decision == "reject" for c in candidates),
        undecided=sum(c.decision is None and not c.rejected for c in candidates),
        failed_checks=sum(bool(c.rejected) for c in candidates),
        text=text + lines,
    )
