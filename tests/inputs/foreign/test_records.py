"""``judge.inputs.foreign.records``: the columns a user names, as the options that named them,
and a value as a message shows it (its JSON, cut to a limit)."""

from __future__ import annotations

import pytest

from judge.inputs.foreign.records import NO_COLUMNS, TOOLS, Columns, ForeignRecord, shown


def test_the_tools_are_the_three_importers() -> None:
    assert TOOLS == ("ragas", "deepeval", "otel")


def test_named_columns_are_keyed_by_their_option_in_order() -> None:
    assert Columns() == NO_COLUMNS and NO_COLUMNS.named() == {}
    assert Columns(id_column="qid").named() == {"--id-column": "qid"}
    assert list(Columns("kind", "qid", "ok").named().items()) == [
        ("--type-column", "kind"),
        ("--id-column", "qid"),
        ("--answerable-column", "ok"),
    ]
    assert Columns(type_column="", answerable_column="a").named() == {
        "--type-column": "",  # named, though empty: the reader says what is wrong with it
        "--answerable-column": "a",
    }


def test_a_record_leaves_the_optional_columns_unset() -> None:
    record = ForeignRecord("f.jsonl:1", "q?", "a.", (), None, None)
    assert (record.qtype, record.answerable, record.source_id, record.failure) == (
        None,
        None,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("x", '"x"'),
        ("日本", '"日本"'),  # not \\u escapes
        (3, "3"),
        (None, "null"),
        ({"a": [1, 2]}, '{"a": [1, 2]}'),
        (float("nan"), "NaN"),
        (b"x", "b'x'"),  # not JSON: its str
        ("x" * 38, '"' + "x" * 38 + '"'),  # 40 characters: kept whole
        ("x" * 39, '"' + "x" * 38 + "…"),  # 41: cut to 39 and an ellipsis
    ],
)
def test_shown_is_the_json_else_the_str_cut_to_the_limit(value: object, expected: str) -> None:
    assert shown(value) == expected
    assert len(shown(value)) <= 40


def test_shown_takes_another_limit() -> None:
    assert shown("abcdef", limit=5) == '"abc…'
    assert shown([1, 2], limit=6) == "[1, 2]"
    circular: list[object] = []
    circular.append(circular)
    assert shown(circular) == "[[...]]"  # json refuses it: its str
