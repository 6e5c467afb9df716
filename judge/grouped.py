"""Per-type means of per-question values: the one way a per-type figure is aggregated.

Every per-type number is the same computation: a value per question (a score, a 0/1 outcome,
a retrieval metric), each question's type, and per type the mean over the questions that have
a value, with n, the number of those questions. A question without a value (a verdict that is
not ok has no score) is absent from the mapping: it is never a 0 inside a mean, and it never
makes n smaller quietly, since the caller counts it in its own column. In the spirit of
inspect_ai's ``grouped(metric, group_key)``: the metric is the mean, the group key the type.

Pure Python (no pandas), so the judging layer and the sweep can use it as cheaply as the
tables. A mean is ``sum(values) / n`` with Python's ``sum`` over the values in the mapping's
order, so a figure computed here is the same float as the one computed that way before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

#: The row of every per-type table that holds all questions together.
ALL = "all"


class Group(NamedTuple):
    """One type's (or the overall) aggregate."""

    n: int
    """Questions with a value."""
    total: float
    """The sum of their values (for 0/1 values: how many are 1)."""
    mean: float | None
    """``total / n``; None when no question has a value (never NaN, never 0)."""


def type_order(types: Mapping[str, str], order: Sequence[str] = ()) -> list[str]:
    """The types of ``order``, then any other type in the order the questions have them."""
    seen = dict.fromkeys(order)
    for question_type in types.values():
        seen.setdefault(question_type, None)
    return list(seen)


def grouped(
    values: Mapping[str, float],
    types: Mapping[str, str],
    order: Sequence[str] = (),
    *,
    overall: str | None = None,
) -> dict[str, Group]:
    """Per type, the n and mean of ``values`` (question id → value) over its questions.

    ``types`` maps question id → type (it may hold questions without a value). Every type of
    ``order`` gets a row, then every other type of ``types`` in first-seen order, even with no
    value (n 0, mean None: a type is never left out because nothing in it could be scored);
    ``overall``, if given, names a last row over every question with a value (e.g. ``all``).
    Raises ValueError for a valued question without a type, or an ``overall`` name that is a
    type.
    """
    rows = type_order(types, order)
    if overall is not None and overall in rows:
        raise ValueError(f"the overall row {overall!r} is also a question type")
    members: dict[str, list[float]] = {name: [] for name in rows}
    everything: list[float] = []
    for question_id, value in values.items():
        question_type = types.get(question_id)
        if question_type is None:
            raise ValueError(f"question {question_id!r} has a value but no type")
        members[question_type].append(value)
        everything.append(value)
    if overall is not None:
        members[overall] = everything
    return {name: _group(group) for name, group in members.items()}


def _group(values: list[float]) -> Group:
    total = float(sum(values))
    return Group(len(values), total, total / len(values) if values else None)
