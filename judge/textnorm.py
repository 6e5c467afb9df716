"""Text normalisation shared by evidence matching, the leak check and the lexical baseline.

Japanese and English both go through the same steps, none of which assumes word boundaries:

1. Unicode NFKC (full-width ``ＰＲＯ`` → ``PRO``, half-width ``ｶﾞ`` → ``ガ``, ``（`` → ``(``),
2. case folding,
3. quote and bracket characters removed (``「設定」`` and ``"設定"`` and ``設定`` all match),
4. all whitespace removed (a chunk may break a Japanese sentence across lines; an English
   quote that differs from its source only in spacing still matches).

``normalise_with_offsets`` also returns, for each output character, the index of the original
character it came from, so a match found in normalised text maps back to a span of the
original chunk.

Names (model names, question types) are compared by a lighter key, ``name_key`` (NFKC, case,
surrounding spaces), and shown as they were written, cut to a readable length (``shown_name``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from itertools import compress
from typing import NamedTuple

# Quote marks and brackets that judges add, drop or swap when they quote.
_DROP = frozenset(
    "\"'`´‘’‚‛“”„‟«»‹›「」『』〝〞〟＂＇()[]{}（）［］｛｝【】〔〕〈〉《》〖〗〘〙〚〛"
)
# Voiced sound marks and combining characters belong to the character before them.
_JOINERS = frozenset("\uff9e\uff9f\u3099\u309a")


def is_mark(char: str) -> bool:
    """A voiced sound mark or combining character: part of the character before it."""
    return char in _JOINERS or unicodedata.combining(char) != 0


def _clusters(text: str) -> list[tuple[int, str]]:
    """Split ``text`` into (start index, cluster) where a cluster is a base plus its marks."""
    clusters: list[tuple[int, str]] = []
    for index, char in enumerate(text):
        if clusters and is_mark(char):
            start, previous = clusters[-1]
            clusters[-1] = (start, previous + char)
        else:
            clusters.append((index, char))
    return clusters


def _fold(cluster: str) -> str:
    """One cluster normalised: NFKC, case folding, quote marks and whitespace dropped."""
    return "".join(
        char
        for char in unicodedata.normalize("NFKC", cluster).casefold()
        if char not in _DROP and not char.isspace()
    )


def _normalise_by_cluster(text: str) -> tuple[str, list[int]]:
    """The definition: each cluster (a base character and its marks) folded on its own."""
    out: list[str] = []
    offsets: list[int] = []
    for start, cluster in _clusters(text):
        folded = _fold(cluster)
        out.append(folded)
        offsets.extend([start] * len(folded))
    return "".join(out), offsets


#: Stands for "this character needs the cluster-by-cluster path" in the tables below: a mark
#: (it belongs to the character before it), and this character itself (so that a text that
#: holds it is never misread as marked).
_SLOW = "\uffff"


class _Folds(dict[int, str]):
    """``str.translate`` table: each character's ``_fold``, ``_SLOW`` for a mark; filled the
    first time a character is seen (a few thousand distinct characters in any corpus)."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        folded = _SLOW if char == _SLOW or is_mark(char) else _fold(char)
        self[code] = folded
        return folded


class _Widths(dict[int, str]):
    """``str.translate`` table: how many characters each character folds to, as ``"\\x00"``
    (dropped) or ``"\\x01"``, and ``"\\x02"`` for anything else (a mark, an expansion such as
    ``㍿`` → ``株式会社``, ``_SLOW``)."""

    def __missing__(self, code: int) -> str:
        folded = _FOLDS[code]
        width = "\x02" if folded == _SLOW or len(folded) > 1 else chr(len(folded))
        self[code] = width
        return width


_FOLDS = _Folds()
_WIDTHS = _Widths()


def normalise_with_offsets(text: str) -> tuple[str, list[int]]:
    """Normalise ``text`` for matching; return it and the original index of each character.

    The end of a span ``[i, j)`` in the normalised text maps to ``offsets[j - 1] + 1`` at most,
    so use :func:`original_span` rather than indexing by hand.

    Each character folds on its own unless a mark follows it, so a text without marks and
    without expansions is folded by ``str.translate`` and its offsets are the positions of the
    characters that are kept: the same result as ``_normalise_by_cluster``, which runs for
    every other text, in C instead of a loop over characters (it runs for every answer, chunk
    and quote; ``tests/test_textnorm.py`` compares the two).
    """
    widths = text.translate(_WIDTHS)
    if "\x02" in widths:
        return _normalise_by_cluster(text)
    return text.translate(_FOLDS), list(compress(range(len(text)), widths.encode("ascii")))


def normalise(text: str) -> str:
    """The normalised form of ``text`` (see module docstring)."""
    folded = text.translate(_FOLDS)
    if _SLOW in folded:
        return _normalise_by_cluster(text)[0]
    return folded


def original_span(text: str, offsets: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """Map the normalised span ``[start, end)`` back to ``[begin, stop)`` in ``text``.

    The span is widened to whole source characters (a normalised ``ガ`` covers ``ｶﾞ``).
    """
    begin = offsets[start]
    last = offsets[end - 1]
    stop = last + 1
    # Extend over the marks that were folded into the last character.
    while stop < len(text) and is_mark(text[stop]):
        stop += 1
    return begin, stop


_SENTENCE_END = re.compile(r"(?<=[。．！？!?])|(?<=[.])(?=\s)|\n+")
_STEP_NUMBER = re.compile(r"\d{1,3}[.．]")
#: Words whose period never ends an English sentence: titles and labels that a name or a
#: number follows ("Dr. Smith", "No. 5", "Fig. 3").
_TITLES = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "no", "nos", "fig", "vol", "pp"}
)
#: Words whose period introduces what follows, so never ends a sentence whatever comes next
#: ("e.g. Best Buy", "approx. 5 ft", "i.e. 2.4 GHz").
_INTRODUCERS = frozenset({"e.g", "i.e", "approx", "ca", "cf", "incl", "viz", "esp"})
#: A time zone after "a.m."/"p.m." continues the sentence ("8 p.m. ET, and Saturday").
_TIME_ZONE = re.compile(r"(?:[A-Z]{1,3}T|UTC|GMT)\b")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")


def _ends_sentence(text: str, end: int) -> bool:
    """Whether the period just before ``end`` (followed by whitespace) ends a sentence.

    Not after a title ("Dr. Smith") or a word that introduces an example ("e.g. Best Buy"), not
    after "a.m."/"p.m." when a time zone follows ("8 p.m. ET"), and not where the next word
    starts in lower case: an abbreviation inside a sentence ("the U.S. office", "5 p.m. on
    Fridays"). A sentence that ends with an abbreviation before a capitalised word ("in the
    U.S. The office") still ends there.
    """
    word = _WORD_BEFORE.search(text, max(0, end - 12), end)
    before = word.group(1).lower() if word else ""
    if before in _TITLES or before in _INTRODUCERS:
        return False
    following = text[end:].lstrip()
    if before in ("a.m", "p.m") and _TIME_ZONE.match(following):
        return False
    return not (following[:1].isascii() and following[:1].islower())


def split_sentences(text: str) -> list[str]:
    """Split Japanese or English text into sentences, keeping their end marks.

    A bare step number ("1." of "1. 設定を開きます") is joined to the sentence it numbers; an
    English abbreviation's period ends no sentence (``_ends_sentence``).
    """
    parts, start = [], 0
    for boundary in _SENTENCE_END.finditer(text):
        at = boundary.start()
        after_period = not boundary.group() and text[at - 1 : at] == "."
        if after_period and not _ends_sentence(text, at):
            continue
        parts.append(text[start:at])
        start = boundary.end()
    parts.append(text[start:])
    sentences: list[str] = []
    pending = ""
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if _STEP_NUMBER.fullmatch(part):
            pending = f"{pending} {part}".strip()
            continue
        sentences.append(f"{pending} {part}" if pending else part)
        pending = ""
    if pending:
        sentences.append(pending)
    return sentences


_LATIN_WORD = re.compile(r"[0-9a-z]+(?:['.][0-9a-z]+)*")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul syllables
        or 0x20000 <= code <= 0x3134F  # CJK extensions B-G (𠮷)
        or char in "々〆ヶ"  # iteration and abbreviation marks inside words (様々, 〆切)
    )


def lexical_tokens(text: str) -> list[str]:
    """Tokens for overlap scoring: Latin words, and character bigrams inside CJK runs.

    Japanese has no spaces between words, so words cannot be split without a dictionary;
    character bigrams are the standard dictionary-free substitute. A CJK run of one character
    yields that character.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = _LATIN_WORD.findall(folded)
    run: list[str] = []
    for char in [*folded, " "]:
        if _is_cjk(char) or char == "ー":
            run.append(char)
            continue
        if len(run) == 1:
            tokens.append(run[0])
        tokens.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
        run = []
    return tokens


# --- refusals -------------------------------------------------------------------------------

#: The built-in refusal phrases, Japanese and English (``judge.lexical.refusal_phrases``
#: replaces them): what makes an answer "I cannot answer that" for the lexical judge and for
#: the run's diagnosis (``judge.results.diagnosis``), so the two never disagree about what a
#: refusal is.
REFUSAL_MARKERS = (
    "記載がありません",
    "記載がなく",
    "記載されていません",
    "お答えできません",
    "わかりません",
    "分かりません",
    "情報がありません",
    "確認できません",
    "見つかりません",
    "i don't know",
    "i do not know",
    "cannot answer",
    "can't answer",
    "not mentioned",
    "no information",
    "does not say",
    "doesn't say",
    "does not cover",
    "doesn't cover",
    "not covered",
    "no mention",
    "not described",
    "not documented",
    "not specified",
    "unable to answer",
    "cannot find",
    "can't find",
    "could not find",
    "couldn't find",
)


class RefusalMatch(NamedTuple):
    """A refusal phrase found where a refusal stands, and where (for every message about it)."""

    phrase: str
    """The phrase as listed (``REFUSAL_MARKERS`` or ``judge.lexical.refusal_phrases``)."""
    sentence: int
    """The sentence it stands in, from 1."""
    how: str
    """Why it stands where a refusal does: ``at the start of`` its sentence (after words such
    as "Sorry, the manual"), ``after the source named in`` it (「…ヘルプに記載が見当たらずお答え
    できません。」), or ``closing the only claim, in`` it ("The opening hours are not
    mentioned.")."""

    def where(self) -> str:
        """e.g. ``"does not cover" at the start of sentence 2``."""
        return f'"{self.phrase}" {self.how} sentence {self.sentence}'


#: Words that may stand before a refusal phrase in its sentence, or after it: an apology, a
#: connective, a pronoun, a copula, and the names of a source ("Sorry, the provided context
#: does not say", "This is not specified in the manual."). A product's name is none of them, so
#: "The Day Pass does not cover the e-bike surcharge" is no refusal.
def _words(text: str) -> tuple[str, ...]:
    """The words of a list written as one string (a long list stays a few lines)."""
    return tuple(text.split())


REFUSAL_LEAD_WORDS = frozenset(
    _words(
        """sorry unfortunately regrettably apologies i'm im i we you it this that these those they
    there here is are was were be been has have had am but however and so then also as
    currently yes no well ok okay the a an any all my our your its their this exact specific
    further more such detailed details given provided available above below supplied attached
    retrieved context contexts document documents documentation doc docs manual manuals text
    texts passage passages source sources information info material materials data help
    centre center article articles faq faqs knowledge base guide guides page pages reference
    references snippet snippets excerpt excerpts content contents record records question
    questions topic topics point matter case answer in on of about from for regarding within
    here to at by with that's it's there's which what whether how when where who why"""
    )
)
#: Their Japanese counterparts, removed from what stands before or after a phrase (longest
#: first): 「申し訳ありませんが、ご質問の内容はヘルプに」記載がありません.
REFUSAL_LEAD_JA = tuple(
    sorted(
        _words(
            """申し訳ありませんが 申し訳ございませんが 申し訳ありません 申し訳ございません すみませんが
        すみません 恐れ入りますが 残念ながら 大変 あいにく ご質問 質問 お問い合わせ 問い合わせ
        内容 その この これ それ あの 件 点 事項 情報 資料 文書 ドキュメント マニュアル ヘルプセンター
        ヘルプ 提供された 与えられた 参照 コンテキスト 検索結果 記事 ページ 本文 文脈 手元 詳細 具体的
        私 わたし 現在 現時点 については について に関しては に関して には では からは に は で が の も
        や と ため ので"""
        ),
        key=len,
        reverse=True,
    )
)
#: Words that say where else to ask: a sentence of them only ("Please contact support.") is
#: no claim of its own beside a refusal.
_REFERRAL_WORDS = frozenset(
    _words("please contact ask reach call email our customer service support staff team desk")
)
_REFERRAL_JA = ("お問い合わせください", "ご確認ください", "サポート", "窓口", "まで", "ください")
#: Who or what refuses: the speaker, an apology, or a source. Before a phrase, one of them
#: makes it a refusal whatever follows ("I don't know when it opens", "The manual does not
#: cover the surcharge"); a bare "it" does not ("It does not cover the surcharge").
_SOURCE_WORDS = frozenset(
    _words(
        """i i'm im we sorry unfortunately regrettably apologies context contexts document documents
    documentation doc docs manual manuals text texts passage passages source sources
    information info material materials data help centre center article articles faq faqs
    knowledge guide guides page pages reference references snippet snippets excerpt excerpts
    content contents record records"""
    )
)
_SOURCE_JA = _words(
    """申し訳 すみません 恐れ入りますが 残念ながら あいにく 質問 資料 文書 ドキュメント マニュアル ヘルプ
    コンテキスト 検索結果 記事 ページ 本文 文脈 情報 私 わたし"""
)
_WORD = re.compile(r"[0-9a-z]+(?:'[0-9a-z]+)*")
#: A sentence with at least this many words (or CJK characters / 2) of its own is a claim.
_CLAIM_WORDS = 3


def _leftover(text: str, words: frozenset[str], fragments: Sequence[str]) -> str:
    """``text`` without ``words`` (Latin), ``fragments`` (Japanese), punctuation and space:
    empty when ``text`` holds nothing else."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    folded = _WORD.sub(lambda m: "" if m.group() in words else f" {m.group()} ", folded)
    for fragment in fragments:
        folded = folded.replace(fragment, "")
    return "".join(c for c in folded if c.isalnum() or c == " ").strip()


def _names_a_source(before: str) -> bool:
    """Whether the words before a phrase name the speaker, an apology or a source."""
    folded = unicodedata.normalize("NFKC", before).casefold().replace("’", "'")
    return any(w in _SOURCE_WORDS for w in _WORD.findall(folded)) or any(
        f in folded for f in _SOURCE_JA
    )


def _is_claim(sentence: str) -> bool:
    """Whether a sentence says something of its own (not "No.", "Sorry.", "Please contact
    support.")."""
    rest = _leftover(sentence, REFUSAL_LEAD_WORDS | _REFERRAL_WORDS, REFUSAL_LEAD_JA + _REFERRAL_JA)
    latin = len(_WORD.findall(rest))
    cjk = sum(1 for c in rest if _is_cjk(c))
    return latin + cjk // 2 >= _CLAIM_WORDS


def _phrase_in(sentence: str, phrases: Sequence[str]) -> tuple[str, str, str] | None:
    """The first listed phrase in ``sentence``: (phrase, the text before it, after it)."""
    folded, offsets = normalise_with_offsets(sentence)
    for phrase, needle in zip(phrases, _folded_phrases(tuple(phrases)), strict=True):
        at = folded.find(needle) if needle else -1
        if at >= 0:
            begin, stop = original_span(sentence, offsets, at, at + len(needle))
            return phrase, sentence[:begin], sentence[stop:]
    return None


def refusal_match(text: str, phrases: Sequence[str] = REFUSAL_MARKERS) -> RefusalMatch | None:
    """Where ``text`` refuses, by one of ``phrases``; None when it does not.

    Phrases are matched normalised (NFKC, case folding, quote marks and whitespace dropped, so
    「記載が ありません」, ＂I don’t know＂ and "I DON'T KNOW" all match), but a phrase counts
    only where a refusal stands, not anywhere: at the start of a sentence, after nothing but
    an apology, a pronoun or the name of a source ("Sorry, the manual does not cover this.");
    or closing the answer's only claim ("The opening hours are not mentioned.", 「料金について
    は記載がありません。」), with nothing after it but such words. So an answer that says what a
    product does not do ("The Day Pass does not cover the e-bike surcharge") and a long answer
    that adds "the refund policy is not specified" to what it does say are no refusals.
    """
    whole = text.translate(_FOLDS)  # without marks each sentence's fold is a piece of this
    if _SLOW not in whole and not any(n and n in whole for n in _folded_phrases(tuple(phrases))):
        return None  # (a sentence split drops only whitespace, which folds to nothing)
    sentences = split_sentences(text) or [text]
    hits = {n: hit for n, s in enumerate(sentences, 1) if (hit := _phrase_in(s, phrases))}
    if not hits:
        return None
    claimed = False  # a sentence before says something of its own: the answer answers
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


def _refusal_stands(phrase: str, before: str, after: str) -> str:
    """How a phrase found in a sentence stands where a refusal does ("" when it does not)."""
    lead, ja = REFUSAL_LEAD_WORDS, REFUSAL_LEAD_JA
    ends = not _leftover(after, lead, ja)
    if not _leftover(before, lead, ja) and (ends or _names_a_source(f"{before} {phrase}")):
        return "at the start of"
    if ends and _names_a_source(before):
        return "after the source named in"
    return ""


def is_refusal(text: str, phrases: Sequence[str] = REFUSAL_MARKERS) -> bool:
    """Whether ``text`` is a refusal (``refusal_match``)."""
    return refusal_match(text, phrases) is not None


@functools.lru_cache(maxsize=16)
def _folded_phrases(phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The phrases normalised once per list (a run asks about every answer)."""
    return tuple(normalise(phrase) for phrase in phrases)


# --- names ---------------------------------------------------------------------------------------

#: How much of a name a message shows: enough to tell two names apart, never a screenful.
NAME_SHOWN_CHARS = 120


def name_key(name: str) -> str:
    """A name as users mean it, for comparing two names (model names, question types): NFKC
    (full-width ``ｇｅｍｍａ３`` is ``gemma3``), case folded, surrounding spaces (full-width too)
    stripped. Only for comparing: messages show the exact text (``shown_name``)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


def same_name(first: str, second: str) -> bool:
    """Whether two names are the same as users mean them (``name_key``): ``gemma3:12b``,
    ``Gemma3:12B `` and ``ｇｅｍｍａ３:12b`` are one model."""
    return first == second or name_key(first) == name_key(second)


def shown_name(name: object, most: int = NAME_SHOWN_CHARS) -> str:
    """A name or value echoed in a message, cut to ``most`` characters with its full length
    said (a 3 MB model name is not a message): the exact text otherwise."""
    text = str(name)
    if len(text) <= most:
        return text
    return f"{text[: most - 1]}… ({len(text):,} characters)"
