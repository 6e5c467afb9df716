"""``item_key`` writes its canonical JSON by hand: it must be ``tagged_hash`` of the shown
dict, on any text (quotes, backslashes, control and format characters, Japanese, emoji)."""

from __future__ import annotations

import random

import pytest

from judge.hashing import tagged_hash
from judge.judging.items import ContextChunk, item_key

TEXTS = [
    "",
    "plain",
    "年額プランは3,800円です。",
    'He said "yes" \\ no',
    "tab\there\nline\r\nbreak\x00\x1f\x7f",
    "\u2028\u2029\u0085\u200b\ufeff",
    "😀 𠮷野家 ｶﾞ e\u0301",
    "</script><!-- & ' `",
]


def _slow(question: str, context: list[ContextChunk], answer: str, reference: str | None) -> str:
    chunks = [[chunk.chunk_id, chunk.text] for chunk in context]
    shown: dict[str, object] = {"question": question, "context": chunks, "answer": answer}
    if reference:
        shown["reference"] = reference
    return tagged_hash(shown, 32)


@pytest.mark.parametrize("reference", [None, "", " ", "年額は3,800円です。", 'a"b'])
def test_the_key_is_the_tagged_hash_of_what_is_shown(reference: str | None) -> None:
    rng = random.Random(3)
    for _ in range(300):
        context = [
            ContextChunk(rank, rng.choice(["c/1", "章/2", 'odd"id', "x\\y"]), rng.choice(TEXTS))
            for rank in range(1, rng.randint(0, 6) + 1)
        ]
        question, answer = rng.choice(TEXTS), rng.choice(TEXTS) + rng.choice(TEXTS)
        assert item_key(question, context, answer, reference) == _slow(
            question, context, answer, reference
        )


def test_half_a_character_is_refused_as_before() -> None:
    with pytest.raises(UnicodeEncodeError):
        _slow("q", [], "\ud800", None)
    with pytest.raises(UnicodeEncodeError):
        item_key("q", [], "\ud800")
