import pytest

from judge.textnorm import (
    RefusalMatch,
    is_refusal,
    lexical_tokens,
    normalise,
    normalise_with_offsets,
    original_span,
    refusal_match,
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


def _by_cluster_reference(text: str) -> tuple[str, list[int]]:
    """The rule as the module docstring states it, written out with no shortcut: each base
    character with its marks, NFKC, case folding, quote marks and whitespace dropped."""
    import unicodedata

    from judge.textnorm import _DROP, is_mark

    out: list[str] = []
    offsets: list[int] = []
    index = 0
    while index < len(text):
        end = index + 1
        while end < len(text) and is_mark(text[end]):
            end += 1
        for char in unicodedata.normalize("NFKC", text[index:end]).casefold():
            if char not in _DROP and not char.isspace():
                out.append(char)
                offsets.append(index)
        index = end
    return "".join(out), offsets


#: Texts that take each path of ``normalise_with_offsets``: plain, with dropped characters,
#: with expansions (ligatures, ㍿, …), with marks (half-width voicing, combining accents, a
#: mark first), with the fast path's own stand-in character, and empty.
_HOSTILE = [
    "",
    " ",
    "設定は12日ごとに復元されます。",
    "「ＰＲＯ」プラン　は ４００円",
    'Tap  "Restore"\n now',
    "ｶﾞｲﾄﾞ",
    "まず ｶﾞｲﾄﾞ を見ます",
    "\uff9eで始まる",
    "\u0301e",
    "cafe\u0301 CAFÉ Straße ǅ",
    "ﬁle ㍿ … ①② Ⅻ ㌔",
    "sentinel \uffff here",
    "\uffff",
    "tab\there\r\nand\u3000ideographic space\u2028",
    "𠮷野家の様々な人々",
    "İstanbul ΣΑΣ",
    "か\u3099き\u309a",
    "ﾊﾞｯｸｱｯﾌﾟ",
]


def test_the_fast_paths_give_exactly_the_cluster_by_cluster_result() -> None:
    import random

    rng = random.Random(7)
    alphabet = "".join(_HOSTILE) + "abcABC 　「」()ａＺ０"
    generated = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(2000)
    ]
    for text in _HOSTILE + generated:
        expected = _by_cluster_reference(text)
        assert normalise_with_offsets(text) == expected, text
        assert normalise(text) == expected[0], text


# --- refusals: where a refusal stands, not a substring anywhere (issue 33, item 2) -----------

REFUSALS = [
    ("I don't know.", '"i don\'t know" at the start of sentence 1'),
    ("I don't know when the station opens.", '"i don\'t know" at the start of sentence 1'),
    (
        "Sorry, the manual does not cover this. Please contact support.",
        '"does not cover" at the start of sentence 1',
    ),
    ("Sorry. The provided context does not say.", '"does not say" at the start of sentence 2'),
    (
        "The station opening hours are not mentioned in the documents.",
        '"not mentioned" closing the only claim, in sentence 1',
    ),
    (
        "申し訳ありません。ご質問の内容はヘルプに記載がなく、お答えできません。",
        '"記載がなく" at the start of sentence 2',
    ),
    ("分かりません。", '"分かりません" at the start of sentence 1'),
    (
        "料金については記載がありません。",
        '"記載がありません" closing the only claim, in sentence 1',
    ),
    (
        "申し訳ありません。返信の日数については、ヘルプに記載が見当たらずお答えできません。",
        '"お答えできません" after the source named in sentence 2',
    ),
]
NOT_REFUSALS = [
    "No. The Day Pass does not cover the e-bike surcharge; it is charged per ride.",
    "The Day Pass does not cover the e-bike surcharge.",
    "It does not cover the e-bike surcharge.",
    # A long substantive answer that says one detail is not given.
    "The Day Pass costs 12 euros and includes unlimited 30-minute rides. Longer rides cost "
    "1 euro per 15 minutes. The refund policy is not specified.",
    "The plan costs 3,800 yen. Sorry, I don't know about discounts.",
    "デイパスの料金は500円です。延長料金については記載がありません。",
    "デイパスでは電動自転車の追加料金は対象外です。",
    "アプリでは残高を確認できません。残高はウェブサイトのマイページで確認してください。",
    "「ファイルが見つかりません」と表示されたら、アプリを再起動してから再度ログインしてください。",
]


@pytest.mark.parametrize(("text", "where"), REFUSALS)
def test_a_refusal_is_found_where_it_stands_and_says_where(text: str, where: str) -> None:
    match = refusal_match(text)
    assert match is not None and match.where() == where
    assert is_refusal(text)


@pytest.mark.parametrize("text", NOT_REFUSALS)
def test_a_phrase_that_does_not_stand_where_a_refusal_does_is_no_refusal(text: str) -> None:
    assert refusal_match(text) is None
    assert not is_refusal(text)


def test_a_projects_own_phrases_follow_the_same_rule() -> None:
    mine = ("outside what the docs say", "対象外")
    assert refusal_match("That is outside what the docs say.", mine) == RefusalMatch(
        "outside what the docs say", 1, "at the start of"
    )
    assert refusal_match("ご質問は対象外です。", mine) is not None
    assert (
        refusal_match("デイパスでは電動自転車の追加料金は対象外です。料金は1回100円です。", mine)
        is None
    )


def _refusal_reference(text: str) -> RefusalMatch | None:
    """``refusal_match`` as it was before it stopped early (issue 35): every sentence folded
    with its offsets and every sentence weighed as a claim, whatever was found."""
    from judge.textnorm import (
        REFUSAL_LEAD_JA,
        REFUSAL_LEAD_WORDS,
        REFUSAL_MARKERS,
        _folded_phrases,
        _is_claim,
        _leftover,
        _refusal_stands,
    )

    def phrase_in(sentence: str) -> tuple[str, str, str] | None:
        folded, offsets = normalise_with_offsets(sentence)
        for phrase, needle in zip(REFUSAL_MARKERS, _folded_phrases(REFUSAL_MARKERS), strict=True):
            at = folded.find(needle) if needle else -1
            if at >= 0:
                begin, stop = original_span(sentence, offsets, at, at + len(needle))
                return phrase, sentence[:begin], sentence[stop:]
        return None

    sentences = split_sentences(text) or [text]
    hits = {n: hit for n, s in enumerate(sentences, 1) if (hit := phrase_in(s))}
    claimed = False
    for n, sentence in enumerate(sentences, 1):
        if n in hits and not claimed and (how := _refusal_stands(*hits[n])):
            return RefusalMatch(hits[n][0], n, how)
        claimed = claimed or _is_claim(sentence)
    claims = [n for n, s in enumerate(sentences, 1) if n not in hits and _is_claim(s)]
    if len(hits) == 1 and not claims:
        ((n, (phrase, _, after)),) = hits.items()
        if not _leftover(after, REFUSAL_LEAD_WORDS, REFUSAL_LEAD_JA):
            return RefusalMatch(phrase, n, "closing the only claim, in")
    return None


def test_refusal_match_gives_what_the_full_weighing_gives() -> None:
    """Stopping early (no phrase found; a claim already made) changes no answer: generated
    answers of listed refusals, non-refusals and short fragments (Japanese and English, with
    full-width and voicing-mark text), against the reference that weighs everything."""
    import random

    rng = random.Random(35)
    pieces = (
        [text for text, _ in REFUSALS]
        + NOT_REFUSALS
        + [
            "Sorry.",
            "No.",
            "申し訳ありません。",
            "ｶﾞｲﾄﾞを見ます。",
            "I DON’T KNOW!",
            "詳細は不明",
            "Please contact support.",
            "料金は500円です。",
            "記載がありません",
            "The plan costs $4.",
            "Sorry, I don\u0301t know.",  # a combining mark: each sentence folded alone
            "記載か\u3099ありません。",
            "ｶﾞｲﾄﾞに記載がありません。",
        ]
    )
    texts = [" ".join(rng.sample(pieces, rng.randint(1, 4))) for _ in range(600)]
    for text in [*pieces, *texts]:
        assert refusal_match(text) == _refusal_reference(text), text
