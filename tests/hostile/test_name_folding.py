"""Names compared as users mean them, echoed at a readable length, and written where XML can
carry them.

Class of the hardening matrix (issue 34, "names"): model names that differ only by case,
full-width letters or surrounding spaces are one model (no embedding drift, the self-judging
warning still given), with the exact text shown; a 3 MB model name is cut in a message; type
names fold the same way ("ALL" is reserved, "Factual" beside "factual" is refused, a golden
question's "ｆａｃｔｕａｌ" is the configured "factual"); a type or check name holding U+FFFF,
U+FFFE or a C0 control still gives well-formed JUnit XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.inputs.runs import RunMeta, RunSettings
from judge.pipeline.evaluate import evaluate
from judge.report.ci import junit_xml
from judge.results.history import settings_changes
from judge.results.review import self_judging
from judge.textnorm import name_key, same_name, shown_name
from tests.conftest import QUESTIONS

Tiny = Callable[..., Config]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("gemma3:12b", "Gemma3:12B"),
        ("gemma3:12b", " gemma3:12b "),
        ("gemma3:12b", "ｇｅｍｍａ３：１２ｂ"),
        ("bge-m3", "BGE－M3\u3000"),  # a full-width hyphen and a full-width space
        ("ＳＴＲＡＳＳＥ", "strasse"),  # NFKC, then the full case fold (ß-free on purpose)
    ],
)
def test_names_that_differ_only_in_case_width_or_spaces_are_one(first: str, second: str) -> None:
    assert same_name(first, second) and name_key(first) == name_key(second)


def test_different_names_stay_different() -> None:
    assert not same_name("gemma3:12b", "gemma3:27b")
    assert not same_name("bge-m3", "bge-m3-v2")


def test_a_long_value_is_cut_with_its_length_said() -> None:
    assert shown_name("short") == "short"
    shown = shown_name("x" * 3_000_000)
    assert len(shown) < 200 and shown.endswith("… (3,000,000 characters)")


def test_the_embedding_models_of_index_and_queries_compare_as_names() -> None:
    same = RunMeta(index_embedding_model="bge-m3", query_embedding_model="ＢＧＥ－Ｍ３ ")
    assert same.embedding_mismatch() is None
    other = RunMeta(index_embedding_model="bge-m3", query_embedding_model="e5-large")
    message = other.embedding_mismatch()
    assert message is not None and "'bge-m3'" in message and "'e5-large'" in message


def test_the_embedding_drift_message_cuts_a_3_mb_model_name() -> None:
    huge = "m" * 3 * 1024 * 1024
    message = RunMeta(
        index_embedding_model=huge, query_embedding_model="bge-m3"
    ).embedding_mismatch()
    assert message is not None
    assert len(message) < 600 and "(3,145,728 characters)" in message


def test_a_model_name_in_another_case_is_no_settings_change_between_runs() -> None:
    before = RunSettings(embedding_model="bge-m3", generator_model="gemma3:12b")
    after = RunSettings(embedding_model="BGE-M3 ", generator_model="Gemma3:12B")
    assert settings_changes(before, after) == []
    moved = RunSettings(embedding_model="bge-m3", generator_model="gemma3:27b")
    assert settings_changes(before, moved) == ["the generator model (gemma3:12b → gemma3:27b)"]


@pytest.mark.parametrize("generator", ["ｇｅｍｍａ３:12b", "Gemma3:12B ", "GEMMA3"])
def test_the_self_judging_warning_sees_a_generator_named_in_full_width_or_caps(
    generator: str,
) -> None:
    judge = "gemma3:12b" if generator != "GEMMA3" else "gemma3:latest"
    warning = self_judging(judge, generator)
    assert warning is not None and f"(run_meta.generator_model {generator})" in warning


def test_the_self_judging_warning_cuts_a_huge_name() -> None:
    warning = self_judging("g" * 1_000_000, "G" * 1_000_000)
    assert warning is not None and len(warning) < 600


# --- question types ------------------------------------------------------------------------------


@pytest.mark.parametrize("reserved", ["ALL", " all", "ａｌｌ"])
def test_all_in_any_case_or_width_is_reserved(reserved: str, tiny: Tiny) -> None:
    with pytest.raises(ConfigError) as caught:
        tiny(extra_toml=f'question_types = ["factual", "{reserved}"]\n')
    assert f"'{reserved}' is reserved for the overall row" in str(caught.value)


def test_two_types_that_are_one_name_are_refused(tiny: Tiny) -> None:
    with pytest.raises(ConfigError) as caught:
        tiny(extra_toml='question_types = ["factual", "Factual"]\n')
    assert "question types 'factual' and 'Factual' differ only in case" in str(caught.value)


def test_a_golden_type_spelled_otherwise_is_the_configured_type(tiny: Tiny) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["type"] = "ｆａｃｔｕａｌ "
    questions[1]["type"] = "Procedural"
    run = evaluate(tiny(questions=questions), backend="lexical", progress=False)
    types = {row.question_id: row.type for row in run.report.questions}
    assert (types["q1"], types["q2"]) == ("factual", "procedural")


# --- XML -------------------------------------------------------------------------------------


def test_junit_xml_is_well_formed_whatever_a_name_holds(tiny: Tiny) -> None:
    questions = [dict(q) for q in QUESTIONS]
    for question in questions:
        if question["type"] == "factual":
            question["type"] = "fact\uffff"
    config = tiny(
        questions=questions,
        extra_toml='question_types = ["fact\\uFFFF", "procedural", "negative", "out_of_scope"]\n',
    )
    record = evaluate(config, backend="lexical", progress=False).report
    gate = record.gate
    hostile = [
        check._replace(name=f"{check.name} \uffff\ufffe\x01", message="m\x00\x1b[2J\ufffe")
        for check in gate.checks
    ]
    record = record.model_copy(update={"gate": gate._replace(checks=hostile)})
    for fail in (True, False):
        text = junit_xml(record, fail_on_regression=fail, require_baseline=fail)
        suite = ET.fromstring(text.encode("utf-8"))  # well-formed, or this raises
        names = [case.get("name") or "" for case in suite.iter("testcase")]
        assert names and all(name.endswith(" \\uffff\\ufffe\\x01") for name in names)
        for char in ("\uffff", "\ufffe", "\x00", "\x01", "\x1b"):
            assert char not in text
