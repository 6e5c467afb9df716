import pytest

from judge.judging.evidence import verify_quote
from judge.judging.types import ContextChunk

JA = ContextChunk(
    1,
    "backup/auto",
    "自動バックアップは、毎日午前3時ごろに実行されます。\n直近7世代まで保存され、"
    "「設定 > バックアップ」から確認できます。Wi-Fi接続時のみ動作します。",
)
EN = ContextChunk(2, "pricing/en", 'The yearly plan costs ¥3,800. Tap "Restore" to get it back.')
CONTEXT = [JA, EN]


def _span(chunk: ContextChunk, start: int | None, end: int | None) -> str:
    assert start is not None and end is not None
    return chunk.text[start:end]


def test_exact_japanese_quote_records_chunk_and_span() -> None:
    match = verify_quote(" 直近7世代まで保存され、", CONTEXT)
    assert match.kind == "exact" and match.chunk_id == "backup/auto"
    assert _span(JA, match.start, match.end) == "直近7世代まで保存され、"


def test_normalised_japanese_full_width_spaces_and_brackets() -> None:
    # Full-width digits and letters, a line break removed, quote brackets swapped.
    quote = "毎日午前３時ごろに実行されます。直近７世代まで保存され、『設定 > バックアップ』"
    match = verify_quote(quote, CONTEXT)
    assert match.kind == "normalised" and match.chunk_id == "backup/auto"
    # The span runs from the first to the last matched character; a closing bracket that
    # normalisation dropped is not part of it.
    assert _span(JA, match.start, match.end) == (
        "毎日午前3時ごろに実行されます。\n直近7世代まで保存され、「設定 > バックアップ"
    )


def test_normalised_english_case_quotes_and_spacing() -> None:
    match = verify_quote("tap  “restore” to get it back.", CONTEXT)
    assert match.kind == "normalised" and match.chunk_id == "pricing/en"
    assert _span(EN, match.start, match.end) == 'Tap "Restore" to get it back.'


def test_half_width_katakana_maps_back_to_the_whole_source_characters() -> None:
    chunk = ContextChunk(1, "t/k", "まず ﾊﾞｯｸｱｯﾌﾟ を開きます")
    match = verify_quote("バックアップを開きます", [chunk])
    assert match.kind == "normalised"
    assert _span(chunk, match.start, match.end) == "ﾊﾞｯｸｱｯﾌﾟ を開きます"


def test_partial_quote_needs_ninety_percent_in_one_span() -> None:
    # One character changed at the end of a 26-character quote: 25/26 = 96 % found.
    quote = "自動バックアップは、毎日午前3時ごろに実行されるよ"
    match = verify_quote(quote, CONTEXT)
    assert match.kind == "partial" and match.chunk_id == "backup/auto"
    assert match.coverage == pytest.approx(23 / 25, abs=0.05)
    assert _span(JA, match.start, match.end).startswith("自動バックアップは")


def test_absent_quote_keeps_its_best_coverage() -> None:
    match = verify_quote("毎週日曜日にバックアップされます。", CONTEXT)
    assert match.kind == "absent" and match.chunk_id is None
    assert 0 < match.coverage < 0.9
    assert verify_quote("The monthly plan is free.", CONTEXT).kind == "absent"
    assert verify_quote("「」", CONTEXT).kind == "too_short"


def test_empty_quote() -> None:
    assert verify_quote("  ", CONTEXT).kind == "empty"


def test_first_chunk_in_rank_order_wins() -> None:
    twin = ContextChunk(3, "dup/b", JA.text)
    assert verify_quote("Wi-Fi接続時のみ動作します。", [JA, twin]).chunk_id == "backup/auto"
    assert verify_quote("Wi-Fi接続時のみ動作します。", [twin, JA]).chunk_id == "dup/b"


def test_a_quote_too_short_to_identify_a_sentence_proves_nothing() -> None:
    # Each of these occurs in the context, and none of them identifies a sentence.
    for quote in ("1", "はい", "3,800", "Wi-Fi接続"):
        assert verify_quote(quote, CONTEXT).kind == "too_short", quote
    assert verify_quote("Wi-Fi接続時のみ", CONTEXT).kind == "exact"  # 8 characters is enough


def test_an_exact_hit_may_not_end_inside_a_character() -> None:
    # ﾌ + ﾟ is one character (プ); a quote ending at ﾌ quotes a different word (ブ/フ).
    chunk = ContextChunk(1, "t/k", "毎晩ﾊﾞｯｸｱｯﾌﾟを実行します")
    match = verify_quote("毎晩ﾊﾞｯｸｱｯﾌ", [chunk])
    assert match.kind != "exact"
    assert verify_quote("毎晩ﾊﾞｯｸｱｯﾌﾟを実行", [chunk]).kind == "exact"


def test_a_chunk_normalised_once_serves_every_quote_with_its_own_id_and_span() -> None:
    # Chunks are normalised once per text (cached): twins with the same text must still be
    # told apart by rank, and the second quote into a chunk must get its own span.
    twin = ContextChunk(3, "dup/b", JA.text)
    first = verify_quote("毎日午前３時ごろに実行されます。", [JA, twin])
    second = verify_quote("毎日午前３時ごろに実行されます。", [twin, JA])
    assert (first.kind, first.chunk_id) == ("normalised", "backup/auto")
    assert (second.kind, second.chunk_id) == ("normalised", "dup/b")
    assert (first.start, first.end) == (second.start, second.end)
    later = verify_quote("『設定 > バックアップ』から確認できます。", [twin])
    assert later.kind == "normalised" and later.chunk_id == "dup/b"
    # From the first matched character: the opening bracket, dropped by normalising, is not.
    assert _span(twin, later.start, later.end) == "設定 > バックアップ」から確認できます。"


def test_a_cited_sentence_keeps_the_number_the_prompt_showed() -> None:
    from judge.judging.evidence import cite, context_sentences
    from judge.judging.types import ContextChunk

    chunks = [
        ContextChunk(rank=1, chunk_id="a/x", text="First. Second."),
        ContextChunk(rank=2, chunk_id="b/y", text="Third."),
    ]
    third = context_sentences(chunks)[2]
    match = cite(third)
    # Numbered across the chunks: the third sentence is the first of the second chunk.
    assert (match.kind, match.chunk_id, match.start, match.end, match.sentence) == (
        "cited",
        "b/y",
        0,
        6,
        3,
    )
