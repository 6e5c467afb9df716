"""``review.html``: one self-contained page where reviewers triage verdicts and record judgements.

No network, no external scripts or fonts, no server. Corpus text, questions and answers are
untrusted: they travel as JSON inside ``<script type="application/json">`` blocks (with ``<``,
``>`` and ``&`` escaped, so no text can close a block) and reach the page only through
``textContent``, never as HTML. The data is in parts (``judge.report.review_parts``): the first
screen before the script, the list and the items' details after it, so that a page of 100,000
questions shows its first items before the browser has read the rest. A Content-Security-Policy allows exactly the page's own script
(by hash) and no other source, so even an injected handler could not run.

Triage is decided in Python, once per question, by the run record (``judge.results.review``):
the verdict's own flags plus what needs the human labels or the golden chunks; so is the
diagnosis (``QuestionRow.diagnosis``, ``judge.results.diagnosis``). The page only filters,
searches, counts and sorts by them, and its "needs review" count is the record's, the one the
console and report.md show. It opens worst first: the items that need review, then those whose
diagnosis is not ``ok``, then by score.

The prompt the judge was given is shown once per page, read from the prompt file the manifest
names and shown only when its sha256 is the one the run recorded (a prompt edited since is said
to be so, never shown as if it were the run's).

Marks (a reviewer's "agree" or corrected scores, and a comment) live in the browser's local
storage under one key for every page (pages opened from ``file://`` share an origin), keyed by
question id, answer sha256 and judge fingerprint: tomorrow's page of the same answers and judge
shows them; a page where the answer or the judge changed shows them as stale. "Export marks"
downloads them as a file that ``judge.audit.marks`` imports into the labels file
(``docs/review.md``).

The page's script, styles and body template are package files (``judge/report/assets``), where
tools can check them; each page inlines them and hashes the inlined script for its CSP as it
renders, so the page stays one file and its policy always matches its script.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

from judge.audit.types import COMMENT_MAX_CHARS, MARKS_FORMAT, MARKS_VERSION
from judge.hashing import text_sha256
from judge.io.text import text_problem
from judge.judging.types import Verdict
from judge.report.evidence_text import (
    SENTENCE_WORDS,
    answer_pieces,
    cited_pieces,
    evidence_origin,
)
from judge.report.markdown import prompt_label, prompt_path
from judge.report.review_parts import data_blocks, json_for_script, page_parts
from judge.results.diagnosis import DIAGNOSES
from judge.results.item_record import ItemRecord
from judge.results.review import TRIAGE_FLAGS
from judge.textnorm import normalise

if TYPE_CHECKING:
    from judge.record.model import ChunkSummary, QuestionRow, Record

#: One localStorage key for the marks of every page (documented in docs/review.md).
STORE_KEY = "judge-review-marks"

_SCRIPTS = (
    ("ja", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")),  # kana: Japanese
    ("ko", re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),  # hangul: Korean
    ("zh", re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")),  # Han without kana: Chinese
)


def page_language(texts: Iterable[str]) -> str:
    """The page's ``lang``: the script most of the questions are written in (Japanese when
    they hold kana, Korean for hangul, Chinese for Han characters alone), else English."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts[next((lang for lang, script in _SCRIPTS if script.search(text)), "en")] += 1
    return counts.most_common(1)[0][0] if counts else "en"


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    sentences = None
    if verdict.status == "ok" and verdict.sentences is not None:
        sentences = [
            {
                "n": check.n,
                "text": check.text,
                "verdict": check.verdict,
                "cited": bool(check.evidence and check.evidence.cited),
                "cited_n": check.evidence.sentence if check.evidence else None,
                "chunk_id": check.evidence.chunk_id if check.evidence else None,
                "evidence_text": check.evidence_text,
            }
            for check in verdict.sentences
        ]
    return {
        "status": verdict.status,
        "faithfulness": verdict.faithfulness,
        "relevance": verdict.relevance,
        "evidence": verdict.evidence,
        "note": verdict.note,
        "error": verdict.error,
        "match": verdict.match.model_dump(mode="json") if verdict.match else None,
        "mode": verdict.mode,
        "origin": evidence_origin(verdict),
        "sentences": sentences,
        # The judge's reply as it came back (what the scores, quote and note were parsed from).
        "raw_reply": verdict.raw_reply,
        "latency_s": verdict.latency_s,
        "cached": verdict.cached,
        "prompt_tokens": verdict.prompt_tokens,
        "completion_tokens": verdict.completion_tokens,
    }


def _quote_from_reference(verdict: Verdict, reference: str | None) -> bool:
    """A quote that is not in the chunks but is the reference answer's text: a judge that copied
    the reference (which the prompt tells it never to quote). Said on the page, since the
    reference travels in the same prompt as the chunks."""
    match = verdict.match
    if not reference or not verdict.evidence.strip() or match is None or match.found:
        return False
    return " ".join(normalise(verdict.evidence).split()) in " ".join(normalise(reference).split())


def prompt_view(report: Record) -> dict[str, Any]:
    """The prompt the judge was given, shown once per page, and where the reference answer went.

    The record names the prompt file and its sha256, not its text: the text is read from that
    file and shown only when its sha256 is still the recorded one (the page is written by the
    run that loaded it, so it is, unless the file was edited mid-run)."""
    judge = report.manifest.judge
    path = Path(judge.prompt)
    read_by_judge = report.manifest.fingerprints.judge_parts.get("prompt_sha256") is not None
    text: str | None = None
    problem: str | None = None
    try:
        found = path.read_text(encoding="utf-8-sig")  # as load_prompt reads it
    except (OSError, UnicodeDecodeError):
        problem = f"{path.name} cannot be read any more"
    else:
        if text_sha256(found) == judge.prompt_sha256:
            text = found
        else:
            problem = (
                f"{path.name} has changed since this run (its sha256 is no longer the recorded "
                f"{judge.prompt_sha256[:12]}…)"
            )
    sends_reference = None if text is None else "reference" in Template(text).get_identifiers()
    where = "from the golden set (its reference_answer)"
    if not read_by_judge:
        reference_note = (
            f"{where}; this judge ({judge.describe()}) reads no prompt and never saw it"
        )
    elif sends_reference is None:
        reference_note = f"{where}; whether the judge saw it is unknown ({problem})"
    elif sends_reference:
        reference_note = (
            f"{where}, sent to the judge by this run's prompt, {path.name}, as its REFERENCE"
        )
    else:
        reference_note = f"{where}; not sent to the judge: {path.name} has no $reference"
    return {
        "name": path.name,
        # Never the absolute path: the page is shared, and the path names one machine.
        "path": prompt_path(judge.prompt),
        "sha256": judge.prompt_sha256,
        "mode": report.manifest.fingerprints.judge_parts.get("mode"),
        "read_by_judge": read_by_judge,
        "judge": judge.describe(),
        "judge_about": judge.model_about,
        "text": text,
        "problem": problem,
        "reference_note": reference_note,
    }


def _sentence_view(item: ItemRecord, verdict: Verdict) -> dict[str, Any]:
    """In sentence mode, the answer and every chunk already cut into pieces (here, where the
    spans are code points as in Python, not UTF-16 units as in the page's strings): the answer
    at its sentences, each chunk at the context sentences that supported sentences cite."""
    checks = verdict.sentences if verdict.status == "ok" else None
    if checks is None:
        return {"answer_pieces": None, "chunk_pieces": None}
    return {
        "answer_pieces": [
            {"text": text, "n": check.n if check else None}
            for text, check in answer_pieces(item.answer, checks)
        ],
        "chunk_pieces": [
            [
                {"text": text, "citing": list(citing) if citing else None}
                for text, citing in cited_pieces(chunk, checks)
            ]
            for chunk in item.context
        ],
    }


def _chunk_grades(row: QuestionRow, missing: dict[str, set[str]]) -> dict[str, Any]:
    """The judge's grade of each chunk shown (``[judge.chunks]`` on), by chunk id."""
    flagged = missing.get(row.question_id, set())
    return {
        g.chunk_id: {
            "grade": g.grade,
            "status": g.status,
            "reason": g.reason or g.error or "",
            "missing_label": g.chunk_id in flagged,
        }
        for g in row.chunk_grades or ()
    }


def _correctness(row: QuestionRow) -> dict[str, Any] | None:
    """The answer against the reference answer (``[judge.correctness]`` on)."""
    c = row.correctness
    if c is None:
        return None
    return {"status": c.status, "score": c.correctness, "reason": c.reason or c.error or ""}


def _missing_labels(report: Record) -> dict[str, set[str]]:
    """Per question id: the chunks the judge graded relevant that the golden question does not
    list."""
    missing: dict[str, set[str]] = {}
    for m in report.chunks.missing if report.chunks is not None else ():
        missing.setdefault(m.question_id, set()).add(m.chunk_id)
    return missing


def _beyond_context(
    chunks: ChunkSummary | None, item: ItemRecord, texts: dict[str, int]
) -> list[dict[str, Any]]:
    """The question's possible missing labels ranked below what the judge saw (graded deeper
    than ``context_k``), each with its corpus text (named by index in ``texts``): the reviewer
    decides on a chunk by reading it, whatever its rank."""
    if chunks is None:
        return []
    seen = {c.chunk_id for c in item.context}
    return [
        {
            "rank": m.rank,
            "chunk_id": m.chunk_id,
            "grade": m.grade,
            "reason": m.reason,
            "text": texts.setdefault(chunks.texts.get(m.chunk_id, ""), len(texts)),
        }
        for m in chunks.missing
        if m.question_id == item.question_id and m.chunk_id not in seen
    ]


def _judged_item(
    row: QuestionRow,
    item: ItemRecord,
    verdict: Verdict,
    texts: dict[str, int],
    missing: dict[str, set[str]],
    report_chunks: ChunkSummary | None = None,
) -> dict[str, Any]:
    """A question with an answer and its verdict, as the page shows it.

    Each chunk's text is named by its index in ``texts``, which is added to when a text is new.
    """
    found = row.triage
    reference = item.reference_answer
    return {
        "question_id": item.question_id,
        "type": item.type,
        "split": item.split,
        "question": item.question,
        "answer": item.answer,
        "answer_sha256": text_sha256(item.answer),
        "reference": reference,
        "quote_from_reference": _quote_from_reference(verdict, reference),
        "context": [
            {
                "rank": c.rank,
                "chunk_id": c.chunk_id,
                "text": texts.setdefault(c.text, len(texts)),
            }
            for c in item.context
        ],
        "relevant_chunks": item.relevant_chunks,
        "labels": [label.model_dump(mode="json") for label in item.labels],
        "verdict": _verdict_json(verdict),
        "adapter_error": None,
        "diagnosis": row.diagnosis,
        "flags": found.flags,
        "reasons": found.reasons,
        "needs_review": found.needs_review,
        "gap": found.gap,
        "confidence": verdict.confidence,
        "score_probabilities": verdict.score_probabilities,
        "chunk_grades": _chunk_grades(row, missing),
        "missing_labels": sorted(missing.get(row.question_id, ())),
        "beyond_context": _beyond_context(report_chunks, item, texts),
        "correctness": _correctness(row),
        **_sentence_view(item, verdict),
    }


def _failed_item(row: QuestionRow, failure: str) -> dict[str, Any]:
    """A question the adapter gave no answer for (``failure`` says why): nothing to judge or
    mark, but listed with the question, so that a failing RAG system is seen here too."""
    return {
        "question_id": row.question_id,
        "type": row.type,
        "split": "",
        "question": row.question,
        "answer": None,
        "answer_sha256": None,
        "reference_recorded": False,
        "reference": None,
        "quote_from_reference": False,
        "context": [],
        "relevant_chunks": None,
        "labels": [],
        "verdict": None,
        "adapter_error": failure,
        "diagnosis": row.diagnosis,
        "flags": ["adapter_failed"],
        "reasons": [f"the adapter gave no answer: {failure}"],
        # A failure of the RAG system, listed with the failures (not a verdict to doubt).
        "needs_review": False,
        "gap": 0,
        "confidence": None,
        "score_probabilities": None,
        "answer_pieces": None,
        "chunk_pieces": None,
        "chunk_grades": {},
        "missing_labels": [],
        "beyond_context": [],
        "correctness": None,
    }


#: Where the characters a comment may not hold are: the C0 and C1 controls, and the
#: bidirectional controls (``comment_refused`` keeps those ``text_problem`` refuses).
_CONTROL_CANDIDATES = (
    *map(chr, range(0x20)),
    *map(chr, range(0x7F, 0xA0)),
    "\u061c\u200e\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
)


@cache
def comment_refused() -> str:
    """A regular expression character class (JavaScript's and Python's) of what a reviewer's
    comment may not hold, as ``audit import`` refuses it (``judge.io.text.text_problem``):
    the page refuses it as it is typed, so an exported marks file never holds one."""
    refused = [c for c in _CONTROL_CANDIDATES if text_problem(c, one_line=False)]
    return "[" + "".join(f"\\u{ord(c):04x}" for c in refused) + "]"


def _below_since(report: Record, question_id: str) -> list[str]:
    """The question's answers below the baseline or the season for two runs or more
    (``judge.results.lasting``), e.g. "judge faithfulness 2→1 below the baseline since
    2026-12-01"."""
    return [
        x.describe().removeprefix(f"{question_id} ")
        for x in report.gate.lasting
        if x.question_id == question_id
    ]


def page_data(report: Record) -> dict[str, Any]:
    """Everything the page shows, as JSON (rendered only through ``textContent``)."""
    # Each chunk text once (a chunk is retrieved for many questions): a context names its text
    # by index into ``chunk_texts``, which the page's script puts back when it loads.
    texts: dict[str, int] = {}
    missing = _missing_labels(report)
    items = [
        _judged_item(row, row.item, row.verdict, texts, missing, report.chunks)
        for row in report.questions
        if row.item is not None and row.verdict is not None
    ]
    # The questions without an answer come after every judged one.
    items += [_failed_item(row, row.failure) for row in report.questions if row.failure is not None]
    for item in items:  # answers below the baseline or the season since a date (the gate's)
        item["below_since"] = _below_since(report, item["question_id"])
    statuses = {v["verdict"]["status"] for v in items if v["verdict"]}
    kinds = {i["verdict"]["match"]["kind"] for i in items if i["verdict"] and i["verdict"]["match"]}
    manifest = report.manifest
    return {
        "folder": manifest.folder,
        "judge_fingerprint": manifest.fingerprints.judge,
        "store_key": STORE_KEY,
        "marks_format": MARKS_FORMAT,
        "marks_version": MARKS_VERSION,
        "comment_max": COMMENT_MAX_CHARS,
        "comment_refused": comment_refused(),
        "types": [row["type"] for row in report.judge.rows if row["type"] != "all"],
        "statuses": sorted(statuses) + (["adapter_failed"] if report.adapter_failed else []),
        "match_kinds": sorted(kinds),
        "triage": TRIAGE_FLAGS,
        "diagnoses": list(DIAGNOSES),
        "chunks_graded": report.chunks is not None,
        "relevant_grade": None if report.chunks is None else report.chunks.relevant_grade,
        "correctness_judged": any(row.correctness is not None for row in report.questions),
        "sentence_words": SENTENCE_WORDS,
        # ISO times, shown in the reader's own time zone and words (the ISO text as a tooltip).
        "run": {
            "started_at": manifest.started_at,
            "finished_at": manifest.finished_at,
            "judge_seconds": manifest.judge_seconds,
        },
        "prompt": prompt_view(report),
        "chunk_texts": list(texts),
        "items": items,
    }


#: The page's files, in ``judge/report/assets``: the body (a template with ``{folder}`` and
#: ``{judge}``), the styles and the script. They are files so that an editor, ``node --check``
#: and a CSS parser can read them (tests/report/test_review_assets.py); the page inlines them.
BODY_ASSET = "review.html"
STYLE_ASSET = "review.css"
SCRIPT_ASSET = "review.js"


@cache
def review_asset(name: str) -> str:
    """The text of one of the page's files, read once per process from the installed package
    (``pyproject.toml`` ships ``judge/report/assets/*`` as package data)."""
    return (resources.files("judge.report") / "assets" / name).read_text(encoding="utf-8")


def _inline(name: str) -> str:
    """An asset as the text of its ``<style>`` or ``<script>`` element: on its own lines, as the
    page always had it. The CSP hash is computed from exactly this text."""
    return "\n" + review_asset(name)


def _csp_hash(text: str) -> str:
    """A CSP source allowing the inline element whose text is ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def render_review_page(report: Record) -> bytes:
    """review.html, as UTF-8: the first screen's data, the script, then the list, the items'
    details and the chunk texts (``page_parts``), so that the first screen is drawn while the
    browser still reads the rest."""
    judge = report.manifest.judge
    style = _inline(STYLE_ASSET)
    script = _inline(SCRIPT_ASSET)
    # Hashed here, from the text inlined below: an edited asset cannot leave a stale hash.
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src {_csp_hash(script)}"
    meta = f"judge: {judge.describe()} · prompt {prompt_label(judge.prompt, judge.prompt_sha256)}"
    body = review_asset(BODY_ASSET).format(
        folder=html.escape(report.manifest.folder), judge=html.escape(meta)
    )
    first, listed, details, texts = page_parts(page_data(report))
    lang = page_language(
        [*(item.question for item in report.items), *(f.question for f in report.adapter_failed)]
    )
    head = (
        f'<!doctype html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        # a phone's browser lays the page out at its own width, not as a shrunk desktop page
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"<title>Evidence review · {html.escape(report.manifest.folder)}</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n{body}"
        '<script type="application/json" id="report-first">'
    )
    return b"".join(
        [
            head.encode("utf-8"),
            json_for_script(first),
            f"</script>\n<script>{script}</script>\n".encode(),
            data_blocks(listed, details, texts),
            b"</body>\n</html>\n",
        ]
    )
