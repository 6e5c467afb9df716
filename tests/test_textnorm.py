from judge.textnorm import (
    lexical_tokens,
    normalise,
    normalise_with_offsets,
    original_span,
    split_sentences,
)


def test_normalise_japanese_and_english() -> None:
    assert normalise("「ＰＲＯ」プラン　は ４００円") == "proプランは400円"
    assert normalise('Tap  "Restore"\n now') == "taprestorenow"
    assert normalise("ｶﾞｲﾄﾞ") == "ガイド"


def test_offsets_map_back_through_width_and_voicing_marks() -> None:
    text = "まず ｶﾞｲﾄﾞ を見ます"
    normalised, offsets = normalise_with_offsets(text)
    start = normalised.index("ガイド")
    begin, end = original_span(text, offsets, start, start + 3)
    assert text[begin:end] == "ｶﾞｲﾄﾞ"


def test_split_sentences_keeps_numbered_steps_whole() -> None:
    text = "1. 設定を開きます。2. 復元をタップします。\nThe plan costs $4. Version 2. Done!"
    assert split_sentences(text) == [
        "1. 設定を開きます。",
        "2. 復元をタップします。",
        "The plan costs $4.",
        "Version 2.",
        "Done!",
    ]


def test_english_abbreviations_end_no_sentence() -> None:
    text = (
        "The U.S. office closes at 5 p.m. on Fridays. Call Dr. Smith, e.g. by phone. "
        "We ship to the U.S. The office is in Ohio. See Fig. 3 and No. 5."
    )
    assert split_sentences(text) == [
        "The U.S. office closes at 5 p.m. on Fridays.",
        "Call Dr. Smith, e.g. by phone.",
        "We ship to the U.S.",
        "The office is in Ohio.",
        "See Fig. 3 and No. 5.",
    ]
    # Japanese is split at its own marks, whatever Latin text it holds.
    assert split_sentences("U.S.版は未対応です。Dr. Smithに連絡してください。") == [
        "U.S.版は未対応です。",
        "Dr. Smithに連絡してください。",
    ]


def test_examples_and_time_zones_end_no_sentence() -> None:
    # Found on the English sample set: "e.g." and "approx." before a capital or a digit, and
    # "p.m." before a time zone, used to end sentences.
    text = (
        "Buy it from a retailer (e.g. Best Buy or Currys) within 30 days. A 1.5 m (approx. "
        '5 ft) cable is included. Name a profile, e.g. "Sam", and save. Open 8 a.m. to 8 p.m. '
        "ET, and Saturday, 9 a.m. to 5 p.m. ET. Call before 5 p.m. The office closes then."
    )
    assert split_sentences(text) == [
        "Buy it from a retailer (e.g. Best Buy or Currys) within 30 days.",
        "A 1.5 m (approx. 5 ft) cable is included.",
        'Name a profile, e.g. "Sam", and save.',
        "Open 8 a.m. to 8 p.m. ET, and Saturday, 9 a.m. to 5 p.m. ET.",
        "Call before 5 p.m.",
        "The office closes then.",
    ]


def test_lexical_tokens_use_bigrams_for_japanese_and_words_for_latin() -> None:
    assert lexical_tokens("年額プラン is ¥3,800") == [
        "is",
        "3",
        "800",
        "年額",
        "額プ",
        "プラ",
        "ラン",
    ]
    assert lexical_tokens("円") == ["円"]


def test_iteration_marks_and_astral_ideographs_stay_inside_words() -> None:
    assert lexical_tokens("様々な人々") == ["様々", "々な", "な人", "人々"]
    assert lexical_tokens("𠮷野家") == ["𠮷野", "野家"]
