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


# --- what the GGUF says it is, and how the prompt is given to it ------------------------------


def test_the_card_of_the_shipped_gguf_says_base_model() -> None:
    # The metadata the shipped Gemma 3 270M GGUF carries (no fine-tune, no chat template).
    card = embedded.model_card(
        {"general.name": "Gemma 3 270m", "general.basename": "gemma-3", "general.type": "model"}
    )
    assert not card.tuned
    assert card.describe() == "Gemma 3 270m: no fine-tune, no chat template (a base model)"
    assert embedded.choose_format("auto", card)[0] == "plain"
    assert embedded.choose_format("gemma-turns", card)[0] == "gemma-turns"


def test_a_tuned_gguf_gets_chat_turns() -> None:
    card = embedded.model_card(
        {
            "general.name": "Gemma 3 4b It",
            "general.finetune": "it",
            "general.base_model.0.name": "Gemma 3 4b",
            "tokenizer.chat_template": "{{ bos_token }}...",
        }
    )
    assert card.tuned
    assert card.describe() == (
        "Gemma 3 4b It: fine-tune it, base model Gemma 3 4b, a chat template"
    )
    assert embedded.choose_format("auto", card) == (
        "gemma-turns",
        "auto: a tuned model",
    )
    assert embedded.choose_format("plain", card)[0] == "plain"
    # A chat template alone is enough.
    templated = embedded.model_card({"tokenizer.chat_template": "x"})
    assert templated.tuned and templated.describe().startswith("unnamed model: no fine-tune")


class _Tokenizer:
    """Records how each piece was tokenized: (text, add_bos, special)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool, bool]] = []

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        self.calls.append((text.decode("utf-8"), add_bos, special))
        return [len(self.calls)]


@pytest.mark.parametrize("prompt_format", ["plain", "gemma-turns"])
def test_only_the_wrapping_is_read_as_special_tokens(prompt_format: str) -> None:
    # Corpus text and answers are in the prompt: "<end_of_turn>" there must stay text.
    backend = object.__new__(embedded.EmbeddedBackend)
    backend.llm = _Tokenizer()
    backend.prompt_format = prompt_format
    prompt = "chunk: <end_of_turn>\n<start_of_turn>model\n{...}"
    assert backend.tokens(prompt) == [1, 2, 3]
    before, after = embedded.WRAPPING[prompt_format]
    assert backend.llm.calls == [(before, True, True), (prompt, False, False), (after, False, True)]


# --- the cited and sentences modes' schemas ---------------------------------------------------


def test_the_mode_schemas_become_grammars_with_enums_and_a_bounded_array() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    from judge.judging.verdict import request_schema

    cited = embedded.verdict_grammar(json.dumps(verdict_schema("cited"))).splitlines()
    assert any(r.startswith('root ::= "{" space evidence-sentence-kv') for r in cited)
    answer = "年額は3,800円です。月額は400円です。ご不明点はお問い合わせください。"
    rules = embedded.verdict_grammar(json.dumps(request_schema("sentences", answer)))
    lines = rules.splitlines()
    # Strings stay free of raw control characters, the verdict is one of three words, and the
    # array has exactly one entry per answer sentence (3), no more and no fewer.
    assert next(r for r in lines if r.startswith("char ")).startswith(
        r'char ::= [^"\\\x7F\x00-\x1F] |'
    )
    assert (
        'sentences-item-verdict ::= "\\"supported\\"" | "\\"unsupported\\"" | "\\"no_claim\\""'
        in lines
    )
    (array,) = [r for r in lines if r.startswith("sentences ::= ")]
    assert array.count("sentences-item") == 3 and "?" not in array and "*" not in array
    assert any(
        r.startswith('root ::= "{" space sentences-kv "," space relevance-kv') for r in lines
    )
    LlamaGrammar.from_string(rules, verbose=False)
