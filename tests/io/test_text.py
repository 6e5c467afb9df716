"""Strict input types and the id and text checks (``judge.io.text``)."""

from typing import Any

import pytest
from pydantic import BaseModel

from judge.io.text import StrictRecord, id_problem

# --- one strict parsing policy for every input model -----------------------------------------


def _input_models() -> list[type[BaseModel]]:
    """Every model a file or a setting is read into: the subclasses of StrictRecord (golden
    set, runs, labels, adapter output, and every section of the configuration), found, not listed
    (the modules that define them imported here, so that their classes exist)."""

    def subclasses(base: type[BaseModel]) -> list[type[BaseModel]]:
        found = []
        for sub in base.__subclasses__():
            found += [sub, *subclasses(sub)]
        return found

    return subclasses(StrictRecord)


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
    assert {"SweepConfig", "OpenAIConfig", "EmbeddedConfig", "LexicalConfig"} <= names
    lax = {m.__name__: _lax_scalars(m.__pydantic_core_schema__) for m in models}
    assert {name: where for name, where in lax.items() if where} == {}, (
        "declare scalars with judge.io.text's StrictInt, StrictFloat, StrictBool"
    )


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
