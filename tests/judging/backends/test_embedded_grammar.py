"""The embedded judge's grammar and the verdict parser agree (no model is loaded here)."""

import json

import pytest

from judge.judging.verdict import verdict_schema

embedded = pytest.importorskip("judge.judging.backends.embedded")


def test_the_grammar_forbids_raw_control_characters_in_strings() -> None:
    # llama-cpp-python's own character rule lets U+0000-U+001F into a string (a raw newline in
    # "note"), which a strict JSON parser refuses; ours excludes them as llama.cpp's C++ does.
    from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

    schema = json.dumps(verdict_schema())
    lax = json_schema_to_gbnf(schema).splitlines()
    strict = embedded.verdict_grammar(schema).splitlines()
    assert next(r for r in lax if r.startswith("char ")).startswith(r'char ::= [^"\\] |')
    assert next(r for r in strict if r.startswith("char ")).startswith(
        r'char ::= [^"\\\x7F\x00-\x1F] |'
    )
    # Only the character rule changed, and llama.cpp reads the result.
    assert [r for r in strict if not r.startswith("char ")] == [
        r for r in lax if not r.startswith("char ")
    ]
    LlamaGrammar.from_string("\n".join(strict), verbose=False)


def test_an_unrecognised_character_rule_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_cpp.llama_grammar as grammar

    monkeypatch.setattr(grammar, "json_schema_to_gbnf", lambda _: 'root ::= "{}"\nchar ::= .\n')
    with pytest.raises(RuntimeError, match="no JSON string character rule"):
        embedded.verdict_grammar("{}")
