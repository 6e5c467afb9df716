"""``review.html``: one self-contained page where reviewers triage verdicts and record judgements.

No network, no external scripts or fonts, no server. Corpus text, questions and answers are
untrusted: they travel as JSON inside a ``<script type="application/json">`` block (with ``<``,
``>`` and ``&`` escaped, so no text can close the block) and reach the page only through
``textContent``, never as HTML. A Content-Security-Policy allows exactly the page's own script
(by hash) and no other source, so even an injected handler could not run.

Triage is decided here, in Python, where the item is at hand: the verdict's own flags
(``judge.judging.verdict.quote_flags``) plus what needs the human labels or the golden chunks
(``triage``). The page only filters and sorts by those flags.

Marks (a reviewer's "agree" or corrected scores, and a comment) live in the browser's local
storage under one key for every page (pages opened from ``file://`` share an origin), keyed by
question id, answer sha256 and judge fingerprint: tomorrow's page of the same answers and judge
shows them; a page where the answer or the judge changed shows them as stale. "Export marks"
downloads them as a file that ``judge.audit.marks`` imports into the labels file
(``docs/review.md``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from judge.audit.marks import COMMENT_MAX_CHARS, MARKS_FORMAT, MARKS_VERSION
from judge.hashing import text_sha256
from judge.judging.confidence import LOW_CONFIDENCE
from judge.judging.items import ContextChunk
from judge.judging.verdict import Verdict, review_reasons
from judge.report.markdown import (
    SENTENCE_WORDS,
    answer_pieces,
    cited_number,
    cited_pieces,
    evidence_origin,
    unsupported,
)
from judge.results.folder import ItemRecord

if TYPE_CHECKING:
    from judge.report.build import Report

#: One localStorage key for the marks of every page (documented in docs/review.md).
STORE_KEY = "judge-review-marks"

#: The triage filters: flag key → what the filter shows (in the page's filter list).
TRIAGE_FLAGS: dict[str, str] = {
    "disagrees": "disagrees with a human label",
    "foreign_quote": "faithfulness 2, quote from a non-golden chunk",
    "unverified_quote": "quote not verified",
    "not_ok": "verdict status not ok",
    "adapter_failed": "adapter failed (no answer)",
    "verdict_flags": "flagged by the verdict's checks",
    "low_confidence": "low judge confidence",
    "unsupported_sentences": "unsupported sentence(s)",
}


#: What a found quote is; anything else with a quote is not verified.
_VERIFIED = ("exact", "normalised")


class Triage(NamedTuple):
    """Why an item deserves a look: flag keys (for filters) and the sentences shown."""

    flags: list[str]
    reasons: list[str]
    gap: int
    """The largest score difference between the judge and one human label (F and R summed)."""


def triage(item: ItemRecord, verdict: Verdict) -> Triage:
    """The triage flags of one judged item (``TRIAGE_FLAGS``)."""
    flags: list[str] = []
    reasons = list(review_reasons(verdict))
    if verdict.status != "ok" or verdict.faithfulness is None or verdict.relevance is None:
        return Triage(["not_ok"], reasons, 0)
    if verdict.review:
        flags.append("verdict_flags")
    bad = unsupported(verdict)
    if bad:
        flags.append("unsupported_sentences")
        numbers = ", ".join(str(check.n) for check in bad)
        reasons.append(
            f"unsupported sentence{'s' if len(bad) > 1 else ''} {numbers} "
            f"(of {len(verdict.sentences or ())})"
        )
    judge_f, judge_r = verdict.faithfulness, verdict.relevance
    differing = [
        label
        for label in item.labels
        if (label.faithfulness, label.relevance) != (judge_f, judge_r)
    ]
    gap = max(
        (abs(lab.faithfulness - judge_f) + abs(lab.relevance - judge_r) for lab in differing),
        default=0,
    )
    if differing:
        flags.append("disagrees")
        humans = ", ".join(
            f"{lab.labeller} F{lab.faithfulness} R{lab.relevance}" for lab in differing
        )
        reasons.append(f"disagrees with a human label: {humans} (judge F{judge_f} R{judge_r})")
    match = verdict.match
    golden = item.relevant_chunks
    # Only where the golden chunks are known and there are some: an unlabelled question or an
    # out-of-scope one says nothing about where the evidence should come from.
    if judge_f == 2 and match and match.chunk_id and golden and match.chunk_id not in golden:
        flags.append("foreign_quote")
        what = "cited sentence" if match.cited else "quote"
        reasons.append(
            f"faithful, but the {what} comes from {match.chunk_id}, not a golden chunk "
            f"({', '.join(golden)})"
        )
    # An empty quote is legitimate (a refusal, or nothing to quote for a 0) unless the
    # verdict's own checks flagged it. Only quotes are verified: a sentence cited by number is
    # context text by construction (whether it supports the verdict is what the reviewer reads;
    # a missing citation is among the verdict's own flags).
    if (
        verdict.mode == "quote"
        and match
        and match.kind not in _VERIFIED
        and (match.kind != "empty" or verdict.review)
    ):
        flags.append("unverified_quote")
        # The verdict's flags are all about the quote: say it once.
        if not verdict.review:
            reasons.append(f"quote not verified ({match.kind.replace('_', ' ')})")
    confidence = verdict.confidence
    if confidence is not None and confidence < LOW_CONFIDENCE:
        flags.append("low_confidence")
        reasons.append(f"low judge confidence: {confidence:.0%} on the scores it gave")
    return Triage(flags, reasons, gap)


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


def _verdict_json(verdict: Verdict, context: list[ContextChunk]) -> dict[str, Any]:
    sentences = None
    if verdict.status == "ok" and verdict.sentences is not None:
        sentences = [
            {
                "n": check.n,
                "text": check.text,
                "verdict": check.verdict,
                "cited": bool(check.evidence and check.evidence.cited),
                "cited_n": cited_number(check.evidence, context) if check.evidence else None,
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
        "origin": evidence_origin(verdict, context),
        "sentences": sentences,
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


def page_data(report: Report) -> dict[str, Any]:
    """Everything the page shows, as JSON (rendered only through ``textContent``)."""
    verdicts = {v.question_id: v for v in report.verdicts}
    items: list[dict[str, Any]] = []
    for item in report.items:
        verdict = verdicts[item.question_id]
        found = triage(item, verdict)
        items.append(
            {
                "question_id": item.question_id,
                "type": item.type,
                "split": item.split,
                "question": item.question,
                "answer": item.answer,
                "answer_sha256": text_sha256(item.answer),
                "context": [
                    {"rank": c.rank, "chunk_id": c.chunk_id, "text": c.text} for c in item.context
                ],
                "relevant_chunks": item.relevant_chunks,
                "labels": [label.model_dump(mode="json") for label in item.labels],
                "verdict": _verdict_json(verdict, item.context),
                "adapter_error": None,
                "flags": found.flags,
                "reasons": found.reasons,
                "gap": found.gap,
                "confidence": verdict.confidence,
                "score_probabilities": verdict.score_probabilities,
                **_sentence_view(item, verdict),
            }
        )
    # No answer, so nothing to judge or mark; listed (with the question) so that a failing RAG
    # system is seen here too.
    for failed in report.adapter_failed:
        items.append(
            {
                "question_id": failed.question_id,
                "type": failed.type,
                "split": "",
                "question": failed.question,
                "answer": None,
                "answer_sha256": None,
                "context": [],
                "relevant_chunks": None,
                "labels": [],
                "verdict": None,
                "adapter_error": failed.error,
                "flags": ["adapter_failed"],
                "reasons": [f"the adapter gave no answer: {failed.error}"],
                "gap": 0,
                "confidence": None,
                "score_probabilities": None,
                "answer_pieces": None,
                "chunk_pieces": None,
            }
        )
    statuses = {v["verdict"]["status"] for v in items if v["verdict"]}
    kinds = {i["verdict"]["match"]["kind"] for i in items if i["verdict"] and i["verdict"]["match"]}
    return {
        "folder": report.manifest.folder,
        "judge_fingerprint": report.manifest.fingerprints.judge,
        "store_key": STORE_KEY,
        "marks_format": MARKS_FORMAT,
        "marks_version": MARKS_VERSION,
        "comment_max": COMMENT_MAX_CHARS,
        "types": [t for t in report.judge.frame.index if t != "all"],
        "statuses": sorted(statuses) + (["adapter_failed"] if report.adapter_failed else []),
        "match_kinds": sorted(kinds),
        "triage": TRIAGE_FLAGS,
        "sentence_words": SENTENCE_WORDS,
        "items": items,
    }


STYLE = """
body{font-family:system-ui,-apple-system,"Hiragino Sans","Noto Sans CJK JP",sans-serif;margin:0;color:#1d1d1f;background:#f6f6f8}
header{background:#fff;border-bottom:1px solid #ddd;padding:10px 20px;position:sticky;top:0;z-index:1}
h1{font-size:18px;margin:0 0 4px}
.meta{font-size:12px;color:#555}
.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:center;margin-top:6px;font-size:13px}
.message{font-size:13px;color:#14632c;min-height:1em}.message.bad{color:#a00}
main{padding:12px 20px;max-width:1100px}
.item{background:#fff;border:1px solid #ddd;border-radius:6px;margin:0 0 4px}
.item.flagged{border-left:5px solid #d33}
.item.current{outline:2px solid #3a6fd8}
.row{display:flex;flex-wrap:wrap;gap:6px;align-items:center;width:100%;text-align:left;background:none;border:0;padding:5px 10px;font:inherit;font-size:13px;cursor:pointer;color:inherit}
.row:focus-visible{outline:2px solid #3a6fd8}
.detail{padding:4px 14px 12px;border-top:1px solid #eee}
.qid{font-weight:600;min-width:3em}
.badge{font-size:12px;border-radius:10px;padding:1px 8px;background:#eee}
.badge.bad{background:#fde2e2;color:#a00}.badge.warn{background:#fff3cd;color:#7a5b00}.badge.good{background:#def7e5;color:#14632c}
.badge.mark{background:#e3ecfd;color:#1c3f8c}.badge.stale{background:#f1e6fa;color:#5b2a86}
.label{font-size:12px;color:#666;margin-top:8px}
.text{white-space:pre-wrap;margin:2px 0}
.chunk{border:1px solid #e4e4e4;border-radius:6px;padding:6px 8px;margin:6px 0;background:#fafafa}
.chunk.cited{border-color:#3a7;background:#f3fbf6}
.chunk .cid{font-size:12px;color:#666}
mark{background:#ffe066;padding:0 1px}
.quote.absent{color:#a00}
.reasons{color:#a00;font-size:13px;margin:4px 0 0;padding-left:18px}
.count{font-weight:600}
.markbox{margin-top:10px;padding:8px 10px;border:1px solid #c9d6f2;border-radius:6px;background:#f7f9fe;font-size:13px}
.markbox .controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.markbox textarea{width:100%;box-sizing:border-box;min-height:3em;font:inherit;margin:6px 0}
.stale-note{color:#5b2a86;margin:4px 0}
.mark-state{color:#1c3f8c}
.sent.unsupported{text-decoration:underline wavy #c00;text-decoration-skip-ink:none;text-underline-offset:3px;background:#fff0f0}
.sent.no_claim{color:#888}
.sent-badge{font-size:11px;border-radius:8px;padding:0 5px;margin:0 3px;background:#fde2e2;color:#a00;white-space:nowrap}
.cite-link{font:inherit;font-size:11px;line-height:1.2;border:0;border-radius:8px;padding:0 5px;margin:0 2px;background:#def7e5;color:#14632c;cursor:pointer;vertical-align:super}
.cite-link:focus-visible{outline:2px solid #3a6fd8}
mark.cite{background:#c9ecd3}
mark.cite.flash{outline:2px solid #3a6fd8}
.origin{font-size:12px;color:#555;margin:2px 0}
ol.sentences{margin:2px 0;padding-left:24px;font-size:13px}
ol.sentences li.unsupported{color:#a00}
ol.sentences li.no_claim{color:#888}
ol.sentences .cites{color:#555;font-size:12px}
"""

SCRIPT = r"""
'use strict';
const data = JSON.parse(document.getElementById('report-data').textContent);
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function fillSelect(select, entries) {
  for (const [value, text] of entries) select.appendChild(el('option', null, text)).value = value;
}
function say(text, bad) {
  $('message').textContent = text;
  $('message').className = 'message' + (bad ? ' bad' : '');
}

// --- marks: one localStorage key for every page, keyed by question, answer and judge --------
function emptyStore() { return {version: 1, reviewer: '', marks: {}}; }
function readStore() {
  let raw = null;
  try { raw = localStorage.getItem(data.store_key); } catch (e) { return emptyStore(); }
  if (!raw) return emptyStore();
  try {
    const parsed = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && parsed.marks && typeof parsed.marks === 'object') {
      return {version: 1, reviewer: typeof parsed.reviewer === 'string' ? parsed.reviewer : '', marks: parsed.marks};
    }
  } catch (e) { /* fall through */ }
  say('the stored marks could not be read; marking here will start a new store', true);
  return emptyStore();
}
let store = readStore();
function saveStore(change) {
  // Read again before writing: another page of the same store may have saved since.
  const fresh = readStore();
  change(fresh);
  try {
    localStorage.setItem(data.store_key, JSON.stringify(fresh));
  } catch (e) {
    say('could not save in the browser (' + e.name + '); export your marks now', true);
    return false;
  }
  store = fresh;
  return true;
}
function validMark(mark) {
  return mark && typeof mark === 'object' && typeof mark.question_id === 'string'
    && typeof mark.answer_sha256 === 'string' && typeof mark.judge_fingerprint === 'string';
}
const keyOf = (qid, sha, fingerprint) => JSON.stringify([qid, sha, fingerprint]);
const itemKey = (item) => keyOf(item.question_id, item.answer_sha256, data.judge_fingerprint);
function currentMark(item) {
  if (!item.answer_sha256) return null;
  const mark = store.marks[itemKey(item)];
  return validMark(mark) ? mark : null;
}
function staleMark(item) {
  // The newest mark of this question made on another answer or by another judge.
  let newest = null;
  const key = itemKey(item);
  for (const [k, mark] of Object.entries(store.marks)) {
    if (k === key || !validMark(mark) || mark.question_id !== item.question_id) continue;
    if (!newest || String(mark.marked_at) > String(newest.marked_at)) newest = mark;
  }
  if (!newest) return null;
  const why = [];
  if (newest.answer_sha256 !== item.answer_sha256) why.push('answer changed');
  if (newest.judge_fingerprint !== data.judge_fingerprint) why.push('judge changed');
  return {mark: newest, why};
}
function markText(mark) {
  const scores = 'F' + mark.faithfulness + ' R' + mark.relevance;
  return mark.agree ? 'agree (' + scores + ')' : scores;
}

// --- rendering (textContent only) -----------------------------------------------------------
const matchClass = {exact: 'good', normalised: 'good', partial: 'warn', absent: 'bad', too_short: 'bad', empty: '', cited: ''};
const flagShort = {disagrees: '≠ human', foreign_quote: 'non-golden quote', unverified_quote: 'quote unverified',
                   not_ok: 'not ok', adapter_failed: 'adapter failed', verdict_flags: 'flagged',
                   low_confidence: 'low confidence', unsupported_sentences: 'unsupported sentence'};
const unsupportedCount = (v) => (v && v.sentences ? v.sentences.filter((s) => s.verdict === 'unsupported').length : 0);
function highlighted(text, start, end) {
  // Spans are in Unicode code points (Python); JavaScript strings count UTF-16 units.
  const chars = Array.from(text);
  const box = el('div', 'text');
  box.appendChild(document.createTextNode(chars.slice(0, start).join('')));
  box.appendChild(el('mark', null, chars.slice(start, end).join('')));
  box.appendChild(document.createTextNode(chars.slice(end).join('')));
  return box;
}
// --- sentence mode: the answer sentence by sentence, each cited sentence in its chunk ---------
// The pieces were cut in Python (spans are code points there); here they are only shown.
function citedWhere(check) {
  return (check.cited_n === null ? 'a sentence' : 'sentence ' + check.cited_n) + ' in ' + check.chunk_id;
}
function citeLink(check, citeMarks) {
  const link = el('button', 'cite-link', '↗' + check.n);
  link.type = 'button';
  link.title = 'sentence ' + check.n + ' cites ' + citedWhere(check) + ': “' + check.evidence_text + '”';
  link.setAttribute('aria-label', 'show the context sentence that sentence ' + check.n + ' cites');
  link.addEventListener('click', () => {
    const mark = citeMarks.get(check.n);
    if (!mark) return;
    for (const other of citeMarks.values()) other.classList.remove('flash');
    mark.classList.add('flash');
    mark.scrollIntoView({block: 'center'});
  });
  return link;
}
function sentenceAnswer(item, citeMarks) {
  const box = el('div', 'text answer');
  const checks = new Map(item.verdict.sentences.map((check) => [check.n, check]));
  for (const piece of item.answer_pieces) {
    const check = piece.n === null ? undefined : checks.get(piece.n);
    if (!check) {
      box.appendChild(document.createTextNode(piece.text));
      continue;
    }
    const span = el('span', 'sent ' + check.verdict, piece.text);
    span.dataset.n = String(check.n);
    span.dataset.verdict = check.verdict;
    span.title = 'sentence ' + check.n + ': ' + data.sentence_words[check.verdict];
    box.appendChild(span);
    if (check.verdict === 'unsupported') box.appendChild(el('span', 'sent-badge', '✗' + check.n + ' unsupported'));
    else if (check.verdict === 'supported' && check.cited) box.appendChild(citeLink(check, citeMarks));
  }
  return box;
}
function sentenceList(sentences) {
  const list = el('ol', 'sentences');
  for (const check of sentences) {
    const entry = el('li', check.verdict);
    entry.value = check.n;
    entry.dataset.n = String(check.n);
    entry.appendChild(el('span', 'sent-verdict', data.sentence_words[check.verdict] + ': '));
    entry.appendChild(el('span', null, check.text));
    if (check.cited) entry.appendChild(el('div', 'cites', 'cites ' + citedWhere(check) + ': “' + check.evidence_text + '”'));
    list.appendChild(entry);
  }
  return list;
}
function citedText(pieces, citeMarks) {
  const box = el('div', 'text');
  for (const piece of pieces) {
    if (!piece.citing) {
      box.appendChild(document.createTextNode(piece.text));
      continue;
    }
    const mark = el('mark', 'cite', piece.text);
    mark.dataset.citedBy = piece.citing.join(' ');
    mark.title = 'cited by answer sentence' + (piece.citing.length > 1 ? 's ' : ' ') + piece.citing.join(', ');
    for (const n of piece.citing) citeMarks.set(n, mark);
    box.appendChild(mark);
  }
  return box;
}
const entries = new Map();  // question id → {item, section, row, detail, position}
function fillRow(entry) {
  const item = entry.item;
  const v = item.verdict;
  const row = entry.row;
  row.replaceChildren();
  row.appendChild(el('span', 'qid', item.question_id));
  row.appendChild(el('span', 'badge', item.type));
  if (!v) row.appendChild(el('span', 'badge bad', 'adapter failed'));
  else if (v.status === 'ok') row.appendChild(el('span', 'badge scores', 'F' + v.faithfulness + ' R' + v.relevance));
  else row.appendChild(el('span', 'badge bad', v.status));
  for (const flag of item.flags) {
    if (flag === 'unsupported_sentences') row.appendChild(el('span', 'badge bad flag', '✗ ' + unsupportedCount(v) + ' unsupported'));
    else if (flag !== 'not_ok' && flag !== 'adapter_failed') row.appendChild(el('span', 'badge warn flag', flagShort[flag]));
  }
  const mark = currentMark(item);
  const stale = mark ? null : staleMark(item);
  if (mark) row.appendChild(el('span', 'badge mark', 'marked: ' + markText(mark)));
  else if (stale) row.appendChild(el('span', 'badge stale', 'stale mark'));
}
function markBox(entry) {
  const item = entry.item;
  const v = item.verdict;
  const box = el('div', 'markbox');
  box.appendChild(el('div', 'label', 'Your judgement'));
  const stale = staleMark(item);
  if (stale && !currentMark(item)) {
    const m = stale.mark;
    box.appendChild(el('div', 'stale-note',
      'Stale mark (' + stale.why.join(', ') + '; not counted): ' + markText(m)
      + (m.comment ? ' · “' + m.comment + '”' : '') + ' · ' + m.marked_at + (m.folder ? ' on ' + m.folder : '')));
  }
  const controls = el('div', 'controls');
  const judged = v && v.status === 'ok';
  const agree = el('button', 'agree', judged ? 'Agree with the judge (F' + v.faithfulness + ' R' + v.relevance + ')' : 'Agree (no judge scores)');
  agree.type = 'button';
  agree.disabled = !judged;
  const selects = {};
  controls.appendChild(agree);
  for (const axis of ['faithfulness', 'relevance']) {
    const label = el('label', null, axis + ' ');
    const select = el('select', 'mark-' + axis);
    fillSelect(select, [['', '–'], ['0', '0'], ['1', '1'], ['2', '2']]);
    label.appendChild(select);
    controls.appendChild(label);
    selects[axis] = select;
  }
  const save = el('button', 'save', 'Save my scores');
  save.type = 'button';
  const clear = el('button', 'clear', 'Remove mark');
  clear.type = 'button';
  controls.appendChild(save);
  controls.appendChild(clear);
  box.appendChild(controls);
  const comment = el('textarea', 'mark-comment');
  comment.maxLength = data.comment_max;
  comment.placeholder = 'comment (optional, up to ' + data.comment_max + ' characters)';
  box.appendChild(comment);
  const state = el('div', 'mark-state');
  box.appendChild(state);
  function show() {
    const mark = currentMark(item);
    selects.faithfulness.value = mark ? String(mark.faithfulness) : '';
    selects.relevance.value = mark ? String(mark.relevance) : '';
    comment.value = mark ? String(mark.comment || '') : '';
    clear.disabled = !mark;
    state.textContent = mark ? 'Marked: ' + markText(mark) + ' · ' + mark.marked_at : 'Not marked yet.';
  }
  function record(agreeing) {
    const f = agreeing ? v.faithfulness : Number(selects.faithfulness.value);
    const r = agreeing ? v.relevance : Number(selects.relevance.value);
    const mark = {
      question_id: item.question_id, answer_sha256: item.answer_sha256,
      judge_fingerprint: data.judge_fingerprint, agree: agreeing,
      judge_faithfulness: judged ? v.faithfulness : null, judge_relevance: judged ? v.relevance : null,
      faithfulness: f, relevance: r, comment: comment.value.slice(0, data.comment_max),
      marked_at: new Date().toISOString(), folder: data.folder,
    };
    if (saveStore((s) => { s.marks[itemKey(item)] = mark; })) { show(); changed(entry); }
  }
  agree.addEventListener('click', () => record(true));
  save.addEventListener('click', () => {
    if (!selects.faithfulness.value || !selects.relevance.value) {
      state.textContent = 'Choose both scores (or Agree) first.';
      return;
    }
    record(false);
  });
  clear.addEventListener('click', () => {
    if (saveStore((s) => { delete s.marks[itemKey(item)]; })) { show(); changed(entry); }
  });
  const edited = () => { if (currentMark(item)) state.textContent = 'Changed: press Agree or Save to keep it.'; };
  comment.addEventListener('input', edited);
  selects.faithfulness.addEventListener('change', edited);
  selects.relevance.addEventListener('change', edited);
  show();
  if (!item.answer_sha256) {
    for (const node of [agree, save, clear, selects.faithfulness, selects.relevance, comment]) node.disabled = true;
    state.textContent = 'No answer, nothing to mark.';
  }
  return box;
}
function fillDetail(entry) {
  const item = entry.item;
  const v = item.verdict;
  const detail = entry.detail;
  const head = el('div', 'head');
  const link = el('a', 'permalink', '#' + item.question_id);
  link.href = '#' + encodeURIComponent(item.question_id);
  head.appendChild(link);
  head.appendChild(document.createTextNode(' '));
  head.appendChild(el('span', 'badge', item.type + (item.split ? ' · ' + item.split : '')));
  if (v && v.match && !v.sentences) head.appendChild(el('span', 'badge ' + (matchClass[v.match.kind] || ''), v.match.kind === 'cited' ? 'cited sentence' : 'quote: ' + v.match.kind));
  if (v && v.sentences) {
    const bad = unsupportedCount(v);
    head.appendChild(el('span', 'badge ' + (bad ? 'bad' : 'good'), 'sentences: ' + bad + ' of ' + v.sentences.length + ' unsupported'));
  }
  if (item.score_probabilities) {
    // The judge's own distribution over 0/1/2 per axis, where its backend reports it.
    for (const [axis, probs] of Object.entries(item.score_probabilities)) {
      head.appendChild(el('span', 'badge', axis + ' P(0/1/2) ' + probs.map((p) => Math.round(p * 100) + '%').join(' / ')));
    }
  }
  for (const label of item.labels) {
    head.appendChild(el('span', 'badge', 'human ' + label.labeller + ': F' + label.faithfulness + ' R' + label.relevance));
  }
  detail.appendChild(head);
  if (item.reasons.length) {
    const list = el('ul', 'reasons');
    for (const reason of item.reasons) list.appendChild(el('li', null, reason));
    detail.appendChild(list);
  }
  if (item.question !== null) {
    detail.appendChild(el('div', 'label', 'Question'));
    detail.appendChild(el('div', 'text question', item.question));
  }
  const citeMarks = new Map();  // answer sentence number → the <mark> of the sentence it cites
  const bySentence = Boolean(v && v.sentences && item.answer_pieces);
  if (item.answer !== null) {
    detail.appendChild(el('div', 'label', 'Answer'));
    detail.appendChild(bySentence ? sentenceAnswer(item, citeMarks) : el('div', 'text answer', item.answer));
  }
  if (v) {
    detail.appendChild(el('div', 'label', 'Judge'));
    if (bySentence) detail.appendChild(sentenceList(v.sentences));
    else {
      const absent = v.match && ['absent', 'too_short', 'partial'].includes(v.match.kind);
      detail.appendChild(el('div', 'text quote' + (absent ? ' absent' : ''), v.evidence ? '“' + v.evidence + '”' : '(no quote)'));
    }
    if (v.origin) detail.appendChild(el('div', 'origin', 'evidence: ' + v.origin));
    if (v.note) detail.appendChild(el('div', 'text', v.note));
  }
  if (item.context.length) detail.appendChild(el('div', 'label', 'Chunks the judge saw (rank order)'));
  item.context.forEach((chunk, index) => {
    const pieces = bySentence ? item.chunk_pieces[index] : null;
    const cited = pieces ? pieces.some((piece) => piece.citing)
      : Boolean(v && v.match && v.match.chunk_id === chunk.chunk_id && v.match.start !== null);
    const box = el('div', 'chunk' + (cited ? ' cited' : ''));
    box.dataset.chunk = chunk.chunk_id;
    const golden = (item.relevant_chunks || []).includes(chunk.chunk_id) ? ' · golden' : '';
    box.appendChild(el('div', 'cid', '#' + chunk.rank + ' ' + chunk.chunk_id + golden));
    if (pieces) box.appendChild(citedText(pieces, citeMarks));
    else box.appendChild(cited ? highlighted(chunk.text, v.match.start, v.match.end) : el('div', 'text', chunk.text));
    detail.appendChild(box);
  });
  detail.appendChild(markBox(entry));
}
function setOpen(entry, open) {
  if (open && !entry.detail.childElementCount) fillDetail(entry);
  entry.detail.hidden = !open;
  entry.row.setAttribute('aria-expanded', String(open));
}
let current = null;  // the question id keyboard navigation moves from
function setCurrent(entry) {
  if (current && entries.has(current)) entries.get(current).section.classList.remove('current');
  current = entry.item.question_id;
  entry.section.classList.add('current');
  try { history.replaceState(null, '', '#' + encodeURIComponent(current)); } catch (e) { /* file:// quirks */ }
}
function build(item, position) {
  const section = el('section', 'item' + (item.flags.length ? ' flagged' : ''));
  section.dataset.qid = item.question_id;
  const row = el('button', 'row');
  row.type = 'button';
  row.setAttribute('aria-expanded', 'false');
  const detail = el('div', 'detail');
  detail.hidden = true;
  section.appendChild(row);
  section.appendChild(detail);
  const entry = {item, section, row, detail, position};
  row.addEventListener('click', () => {
    const open = detail.hidden;
    setOpen(entry, open);
    if (open) setCurrent(entry);
  });
  entries.set(item.question_id, entry);
  fillRow(entry);
  return section;
}
function changed(entry) {
  fillRow(entry);
  apply();
}
function redrawAll() {
  for (const entry of entries.values()) {
    fillRow(entry);
    // Redraw rendered items, except one being typed in (its unsaved comment would be lost).
    if (entry.detail.childElementCount && !entry.detail.contains(document.activeElement)) {
      entry.detail.replaceChildren();
      if (!entry.detail.hidden) fillDetail(entry);
    }
  }
  apply();
}

// --- triage: filters, sort, progress ---------------------------------------------------------
const filterIds = ['f-type', 'f-status', 'f-match', 'f-faith', 'f-rel', 'f-triage', 'f-mark'];
function visibleNow(item) {
  const v = item.verdict;
  const status = v ? v.status : 'adapter_failed';
  const kind = v && v.match ? v.match.kind : 'none';
  const f = Object.fromEntries(filterIds.map((id) => [id, $(id).value]));
  const mark = currentMark(item);
  const triage = f['f-triage'];
  const markFilter = f['f-mark'];
  return (!f['f-type'] || item.type === f['f-type']) && (!f['f-status'] || status === f['f-status'])
    && (!f['f-match'] || kind === f['f-match'])
    && (!f['f-faith'] || (v && String(v.faithfulness) === f['f-faith']))
    && (!f['f-rel'] || (v && String(v.relevance) === f['f-rel']))
    && (!triage || (triage === 'any' ? item.flags.length > 0 : item.flags.includes(triage)))
    && (!markFilter
        || (markFilter === 'unmarked' && item.answer_sha256 && !mark)
        || (markFilter === 'marked' && mark)
        || (markFilter === 'stale' && !mark && staleMark(item)));
}
function markable() { return data.items.filter((i) => i.answer_sha256); }
function apply() {
  let shown = 0;
  for (const entry of entries.values()) {
    const visible = Boolean(visibleNow(entry.item));
    entry.section.hidden = !visible;
    if (visible) shown += 1;
  }
  const items = markable();
  const marked = items.filter((i) => currentMark(i)).length;
  $('shown').textContent = shown + ' of ' + data.items.length + ' shown';
  $('progress').textContent = 'marked ' + marked + ' of ' + items.length;
}
const sorts = {
  order: (a, b) => a.position - b.position,
  reasons: (a, b) => b.item.flags.length - a.item.flags.length || a.position - b.position,
  gap: (a, b) => b.item.gap - a.item.gap || a.position - b.position,
  // Least confident first; items without a confidence (none reported, or no verdict) last.
  confidence: (a, b) => (a.item.confidence ?? 2) - (b.item.confidence ?? 2) || a.position - b.position,
};
function ordered() { return Array.from(entries.values()).sort(sorts[$('sort').value] || sorts.order); }
function sortItems() { for (const entry of ordered()) list.appendChild(entry.section); }

// --- navigation: #qid links, j/k ---------------------------------------------------------------
function scrollToEntry(entry) {
  // Below the sticky header, not behind it.
  const top = entry.section.getBoundingClientRect().top + window.scrollY;
  window.scrollTo({top: Math.max(0, top - document.querySelector('header').offsetHeight - 8)});
  entry.row.focus({preventScroll: true});
}
function reveal(entry) {
  if (entry.section.hidden) {
    // A link must open its item whatever the filters say.
    for (const id of filterIds) $(id).value = '';
    apply();
  }
  setOpen(entry, true);
  setCurrent(entry);
  scrollToEntry(entry);
}
function openFromHash() {
  const qid = decodeURIComponent(location.hash.slice(1));
  if (!qid) return;
  const entry = entries.get(qid);
  if (entry) reveal(entry); else say('no item "' + qid + '" on this page', true);
}
function step(delta) {
  const order = ordered();
  const from = current === null ? -1 : order.findIndex((e) => e.item.question_id === current);
  let index = from < 0 ? (delta > 0 ? -1 : order.length) : from;
  do { index += delta; } while (index >= 0 && index < order.length && order[index].section.hidden);
  if (index < 0 || index >= order.length) return;
  // One item open at a time while stepping: the one being read.
  if (from >= 0) setOpen(order[from], false);
  const entry = order[index];
  setOpen(entry, true);
  setCurrent(entry);
  scrollToEntry(entry);
}
document.addEventListener('keydown', (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (target.closest && target.closest('input, textarea, select, [contenteditable]')) return;
  const onRow = target.classList && target.classList.contains('row');
  if (event.key === 'j' || (onRow && event.key === 'ArrowDown')) step(1);
  else if (event.key === 'k' || (onRow && event.key === 'ArrowUp')) step(-1);
  else return;
  event.preventDefault();
});

// --- export -----------------------------------------------------------------------------------
const exportFields = ['question_id', 'answer_sha256', 'judge_fingerprint', 'agree', 'judge_faithfulness',
                      'judge_relevance', 'faithfulness', 'relevance', 'comment', 'marked_at'];
function exportMarks() {
  const marks = [];
  for (const item of data.items) {
    const mark = currentMark(item);
    if (mark) marks.push(Object.fromEntries(exportFields.map((f) => [f, mark[f] === undefined ? null : mark[f]])));
  }
  const payload = {
    format: data.marks_format, version: data.marks_version, reviewer: store.reviewer.trim() || null,
    folder: data.folder, judge_fingerprint: data.judge_fingerprint,
    exported_at: new Date().toISOString(), marks,
  };
  const url = URL.createObjectURL(new Blob([JSON.stringify(payload, null, 2)], {type: 'application/json'}));
  const link = el('a');
  link.href = url;
  link.download = 'review-marks-' + data.folder + '.json';
  document.body.appendChild(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
  say('exported ' + marks.length + ' mark(s); import with: judge audit import FILE'
      + (payload.reviewer ? '' : ' --labeller NAME (no reviewer name is set)'), !payload.reviewer);
}

// --- start ------------------------------------------------------------------------------------
fillSelect($('f-type'), data.types.map((t) => [t, t]));
fillSelect($('f-status'), data.statuses.map((s) => [s, s]));
fillSelect($('f-match'), data.match_kinds.map((k) => [k, k]));
const flagCount = (flag) => data.items.filter((i) => i.flags.includes(flag)).length;
fillSelect($('f-triage'), [['any', 'needs review (' + data.items.filter((i) => i.flags.length).length + ')'],
  ...Object.entries(data.triage).map(([flag, text]) => [flag, text + ' (' + flagCount(flag) + ')'])]);
const list = $('items');
data.items.forEach((item, position) => list.appendChild(build(item, position)));
for (const id of filterIds) $(id).addEventListener('change', apply);
$('sort').addEventListener('change', sortItems);
$('reviewer').value = store.reviewer;
$('reviewer').addEventListener('input', () => {
  const name = $('reviewer').value.trim();
  saveStore((s) => { s.reviewer = name; });
});
$('export').addEventListener('click', exportMarks);
$('open-all').addEventListener('click', () => { for (const e of entries.values()) if (!e.section.hidden) setOpen(e, true); });
$('close-all').addEventListener('click', () => { for (const e of entries.values()) setOpen(e, false); });
window.addEventListener('hashchange', openFromHash);
window.addEventListener('storage', (event) => {
  // Marks saved in another tab: show them here too.
  if (event.key !== data.store_key) return;
  store = readStore();
  $('reviewer').value = store.reviewer;
  redrawAll();
});
apply();
openFromHash();
"""

BODY = """<header>
<h1>Evidence review · {folder}</h1>
<div class="meta">{judge}</div>
<div class="filters">
<label>show <select id="f-triage"><option value="">all items</option></select></label>
<label>marks <select id="f-mark"><option value="">any</option><option value="unmarked">not yet marked</option><option value="marked">marked</option><option value="stale">stale mark only</option></select></label>
<label>type <select id="f-type"><option value="">all</option></select></label>
<label>status <select id="f-status"><option value="">all</option></select></label>
<label>quote <select id="f-match"><option value="">all</option></select></label>
<label>faithfulness <select id="f-faith"><option value="">any</option><option>0</option><option>1</option><option>2</option></select></label>
<label>relevance <select id="f-rel"><option value="">any</option><option>0</option><option>1</option><option>2</option></select></label>
<label>sort <select id="sort"><option value="order">golden-set order</option><option value="reasons">most reasons first</option><option value="gap">largest disagreement first</option><option value="confidence">least confident first</option></select></label>
</div>
<div class="filters">
<button id="open-all" type="button">Open all shown</button>
<button id="close-all" type="button">Close all</button>
<span class="count" id="shown"></span>
<label>reviewer <input id="reviewer" type="text" maxlength="80" autocomplete="name" placeholder="your name"></label>
<span class="count" id="progress"></span>
<button id="export" type="button">Export marks</button>
<span class="meta">j / k: next / previous item</span>
</div>
<div class="message" id="message" role="status"></div>
</header>
<main id="items"></main>"""


def _json_for_script(value: Any) -> str:
    """JSON that cannot end the <script> element it sits in, whatever the strings contain."""
    text = json.dumps(value, ensure_ascii=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_review_page(report: Report) -> str:
    judge = report.manifest.judge
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    meta = f"judge: {judge.describe()} · prompt {judge.prompt}"
    body = BODY.format(folder=html.escape(report.manifest.folder), judge=html.escape(meta))
    data = page_data(report)
    lang = page_language(
        [*(item.question for item in report.items), *(f.question for f in report.adapter_failed)]
    )
    return (
        f'<!doctype html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"<title>Evidence review · {html.escape(report.manifest.folder)}</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n"
        f'<script type="application/json" id="report-data">{_json_for_script(data)}</script>\n'
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
