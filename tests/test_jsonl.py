from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from judge.errors import InputError
from judge.jsonl import (
    IsoDatetime,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictRecord,
    describe_validation_error,
    id_problem,
    read_jsonl,
    write_jsonl,
)


def test_every_bad_line_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": 1}\nnot json\n[1, 2]\n\n{"b": 2}\n{"c": \n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    problems = caught.value.problems
    assert len(problems) == 3
    assert problems[0].startswith(f"{path}:2: not valid JSON")
    assert problems[1] == f"{path}:3: expected a JSON object, got list"
    assert problems[2].startswith(f"{path}:6: not valid JSON")


def test_blank_lines_are_skipped_and_line_numbers_kept(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('\n{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert [line.number for line in read_jsonl(path)] == [2, 4]


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"a": "ok"}\n' + '{"q": "年額"}\n'.encode("shift_jis"))
    with pytest.raises(InputError, match=r"q.jsonl:2: not UTF-8 .*save the file as UTF-8"):
        read_jsonl(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + '{"q": "年額"}\n'.encode())
    assert read_jsonl(path)[0].value == {"q": "年額"}


def test_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": "' + "x" * 2_000_000 + '"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"larger than the 1 MB limit; .*max_file_mb"):
        read_jsonl(path, max_mb=1)


def test_symlink_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text('{"a": 1}\n', encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(InputError, match="symlink"):
        read_jsonl(link)


def test_file_under_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "q.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    with pytest.raises(InputError, match="symlink"):
        read_jsonl(tmp_path / "linked" / "q.jsonl")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_jsonl(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no records"):
        read_jsonl(tmp_path / "empty.jsonl")


def test_write_jsonl_is_atomic_and_readable(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    write_jsonl(path, [{"質問": "年額"}, {"b": 2}])
    assert [line.value for line in read_jsonl(path)] == [{"質問": "年額"}, {"b": 2}]
    assert not list(tmp_path.glob("*.tmp"))


# --- one strict parsing policy for every input model -----------------------------------------


def _input_models() -> list[type[BaseModel]]:
    """Every model a file or a setting is read into: the subclasses of StrictRecord (golden
    set, runs, labels, adapter output) and of the configuration's base, found, not listed."""
    import judge.audit.marks
    import judge.config
    import judge.inputs.adapter
    import judge.inputs.golden
    import judge.inputs.labels
    import judge.inputs.runs
    import judge.pipeline.batch

    def subclasses(base: type[BaseModel]) -> list[type[BaseModel]]:
        found = []
        for sub in base.__subclasses__():
            found += [sub, *subclasses(sub)]
        return found

    return subclasses(StrictRecord) + subclasses(judge.config._Frozen)


def _lax_scalars(schema: Any, path: str = "") -> list[str]:
    """Locations in a core schema of int, float or bool validators that are not strict."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") in ("int", "float", "bool") and not schema.get("strict"):
            found.append(f"{path} ({schema['type']})")
        for key, value in schema.items():
            found += _lax_scalars(value, f"{path}.{key}")
    elif isinstance(schema, list | tuple):
        for index, value in enumerate(schema):
            found += _lax_scalars(value, f"{path}[{index}]")
    return found


def test_every_input_model_reads_numbers_and_bools_strictly() -> None:
    models = _input_models()
    names = {model.__name__ for model in models}
    assert {"GoldenQuestion", "Chunk", "RunRecord", "RunMeta", "HumanLabel", "Config"} <= names
    assert {"RetrievalConfig", "OllamaConfig", "AdapterOutput", "RetrievedChunk"} <= names
    lax = {m.__name__: _lax_scalars(m.__pydantic_core_schema__) for m in models}
    assert {name: where for name, where in lax.items() if where} == {}, (
        "declare scalars with judge.jsonl's StrictInt, StrictFloat, StrictBool"
    )


class _Sample(StrictRecord):
    count: StrictInt = 0
    share: StrictFloat = 0.0
    flag: StrictBool = False
    items: tuple[StrictInt, ...] = ()
    at: IsoDatetime | None = None


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"count": "2"}, 'count: must be an integer such as 2, not "2" (remove the quotes)'),
        ({"count": 2.0}, "count: must be an integer such as 2, not 2.0"),
        ({"count": True}, "count: must be an integer such as 2, not true"),
        ({"share": "0.9"}, 'share: must be a number such as 0.5, not "0.9" (remove the quotes)'),
        ({"share": False}, "share: must be a number such as 0.5, not false"),
        ({"share": float("nan")}, "share: Input should be a finite number"),
        ({"flag": "yes"}, 'flag: must be true or false, not "yes"'),
        ({"flag": "true"}, 'flag: must be true or false, not "true" (remove the quotes)'),
        ({"flag": 1}, "flag: must be true or false, not 1"),
        ({"items": [1, "2"]}, 'items.1: must be an integer such as 2, not "2" (remove the quotes)'),
        ({"at": 1700000000}, 'at: must be an ISO 8601 date-time string such as "2026-11-21'),
    ],
)
def test_strict_scalars_are_refused_with_what_to_write(value: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Sample.model_validate(value)
    assert describe_validation_error(caught.value)[0].startswith(said)


def test_lists_iso_strings_and_integer_numbers_still_validate() -> None:
    sample = _Sample.model_validate(
        {"count": 2, "share": 1, "flag": True, "items": [1, 2], "at": "2026-11-21T09:00:00Z"}
    )
    assert sample.share == 1.0 and isinstance(sample.share, float)  # 1 is a JSON number too
    assert sample.items == (1, 2)
    assert sample.at is not None and sample.at.year == 2026


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("pricing plans", "contains U+0020 (a space) at character 8"),
        ("a\tb", "contains U+0009 (a tab)"),
        ("a\u3000b", "contains U+3000 (IDEOGRAPHIC SPACE)"),
        ("a\u200bb", "contains U+200B (ZERO WIDTH SPACE)"),
        ("\ufeffa", "contains U+FEFF (ZERO WIDTH NO-BREAK SPACE)"),
        ("a\x7fb", "contains U+007F (a control character)"),
        ("a\u2028b", "contains U+2028 (LINE SEPARATOR)"),
    ],
)
def test_ids_with_whitespace_or_control_characters_are_refused(text: str, said: str) -> None:
    problem = id_problem(text)
    assert problem is not None and problem.startswith(said)


@pytest.mark.parametrize("text", ["pricing/plans", "料金/年額プラン", "q01", "a-b_c.d:e#1", "é"])
def test_printable_ids_are_accepted(text: str) -> None:
    assert id_problem(text) is None


def test_union_alternatives_are_said_once() -> None:
    from judge.inputs.runs import RunMeta

    with pytest.raises(ValidationError) as caught:
        RunMeta.model_validate({"chunking": {"max_chars": [450], "overlap": 0}})
    assert describe_validation_error(caught.value) == [
        "chunking.max_chars: must be a string, an integer, a number or true or false, not [450]"
    ]


# --- lines that json cannot read, or should not ----------------------------------------------


def test_nesting_too_deep_for_json_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": 1}\n{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    assert caught.value.problems == [
        f"{path}:2: nested too deeply (arrays or objects inside each other); no record has "
        "more than a few levels: fix the line"
    ]


def test_an_integer_too_long_for_python_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": ' + "7" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"q.jsonl:1: an integer has more than 4300 digits"):
        read_jsonl(path)


def test_a_record_over_the_line_limit_is_refused_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judge.jsonl

    monkeypatch.setattr(judge.jsonl, "MAX_RECORD_MB", 1)
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"a": "small"}\n{"answer": "' + "年" * 400_000 + '"}\n', encoding="utf-8"
    )  # 400,000 characters, 1.2 MB in UTF-8: bytes count, not characters
    with pytest.raises(InputError) as caught:
        read_jsonl(path)
    assert caught.value.problems == [
        f"{path}:2: the line is 1.2 MB, over the 1 MB limit for one record; shorten the long "
        "field (an answer or a chunk text this long is a mistake: see golden/README.md)"
    ]
