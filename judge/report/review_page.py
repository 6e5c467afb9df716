"""``review.html``: one self-contained page for reviewers spot-checking evidence quotes.

No network, no external scripts or fonts. Corpus text, questions and answers are untrusted:
they travel as JSON inside a ``<script type="application/json">`` block (with ``<``, ``>`` and
``&`` escaped, so no text can close the block) and reach the page only through ``textContent``,
never as HTML. A Content-Security-Policy allows exactly the page's own script (by hash) and
no other source, so even an injected handler could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.report.build import Report

STYLE = """
body{font-family:system-ui,-apple-system,"Hiragino Sans","Noto Sans CJK JP",sans-serif;margin:0;color:#1d1d1f;background:#f6f6f8}
header{background:#fff;border-bottom:1px solid #ddd;padding:12px 20px;position:sticky;top:0;z-index:1}
h1{font-size:18px;margin:0 0 6px}
.meta{font-size:12px;color:#555}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin-top:8px;font-size:13px}
main{padding:16px 20px;max-width:1100px}
.item{background:#fff;border:1px solid #ddd;border-radius:8px;margin:0 0 14px;padding:12px 14px}
.item.flagged{border-left:5px solid #d33}
.head{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.qid{font-weight:600}
.badge{font-size:12px;border-radius:10px;padding:1px 8px;background:#eee}
.badge.bad{background:#fde2e2;color:#a00}.badge.warn{background:#fff3cd;color:#7a5b00}.badge.good{background:#def7e5;color:#14632c}
.label{font-size:12px;color:#666;margin-top:8px}
.text{white-space:pre-wrap;margin:2px 0}
.chunk{border:1px solid #e4e4e4;border-radius:6px;padding:6px 8px;margin:6px 0;background:#fafafa}
.chunk.cited{border-color:#3a7;background:#f3fbf6}
.chunk .cid{font-size:12px;color:#666}
mark{background:#ffe066;padding:0 1px}
.quote.absent{color:#a00}
.reasons{color:#a00;font-size:13px}
.count{font-weight:600}
"""

SCRIPT = r"""
'use strict';
const data = JSON.parse(document.getElementById('report-data').textContent);
const storeKey = 'judge-review:' + data.folder;
let marks = {};
try { marks = JSON.parse(localStorage.getItem(storeKey) || '{}'); } catch (e) { marks = {}; }
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function fillSelect(select, values) {
  for (const value of values) select.appendChild(el('option', null, value)).value = value;
}
const matchClass = {exact: 'good', normalised: 'good', partial: 'warn', absent: 'bad', too_short: 'bad', empty: ''};
function highlighted(text, start, end) {
  // Spans are in Unicode code points (Python); JavaScript strings count UTF-16 units.
  const chars = Array.from(text);
  const box = el('div', 'text');
  box.appendChild(document.createTextNode(chars.slice(0, start).join('')));
  box.appendChild(el('mark', null, chars.slice(start, end).join('')));
  box.appendChild(document.createTextNode(chars.slice(end).join('')));
  return box;
}
function render(item) {
  const v = item.verdict;
  const flagged = v.reasons.length > 0;
  const card = el('section', 'item' + (flagged ? ' flagged' : ''));
  card.dataset.qid = item.question_id;
  const head = el('div', 'head');
  head.appendChild(el('span', 'qid', item.question_id));
  head.appendChild(el('span', 'badge', item.type + (item.split ? ' · ' + item.split : '')));
  if (v.status === 'ok') {
    head.appendChild(el('span', 'badge', 'faithfulness ' + v.faithfulness));
    head.appendChild(el('span', 'badge', 'relevance ' + v.relevance));
  } else {
    head.appendChild(el('span', 'badge bad', v.status));
  }
  if (v.match) head.appendChild(el('span', 'badge ' + (matchClass[v.match.kind] || ''), 'quote: ' + v.match.kind));
  for (const label of item.labels) {
    head.appendChild(el('span', 'badge', 'human ' + label.labeller + ': F' + label.faithfulness + ' R' + label.relevance));
  }
  const check = el('label', 'badge');
  const box = el('input');
  box.type = 'checkbox';
  box.className = 'checked-box';
  box.checked = Boolean(marks[item.question_id]);
  box.addEventListener('change', () => {
    if (box.checked) marks[item.question_id] = new Date().toISOString(); else delete marks[item.question_id];
    localStorage.setItem(storeKey, JSON.stringify(marks));
    apply();
  });
  check.appendChild(box);
  check.appendChild(document.createTextNode(' checked'));
  head.appendChild(check);
  card.appendChild(head);
  if (flagged) card.appendChild(el('div', 'reasons', v.reasons.join('; ')));
  card.appendChild(el('div', 'label', 'Question'));
  card.appendChild(el('div', 'text', item.question));
  card.appendChild(el('div', 'label', 'Answer'));
  card.appendChild(el('div', 'text answer', item.answer));
  card.appendChild(el('div', 'label', 'Judge'));
  const absent = v.match && ['absent', 'too_short', 'partial'].includes(v.match.kind);
  card.appendChild(el('div', 'text quote' + (absent ? ' absent' : ''), v.evidence ? '“' + v.evidence + '”' : '(no quote)'));
  if (v.note) card.appendChild(el('div', 'text', v.note));
  if (v.error) card.appendChild(el('div', 'text reasons', v.error));
  card.appendChild(el('div', 'label', 'Chunks the judge saw (rank order)'));
  for (const chunk of item.context) {
    const cited = v.match && v.match.chunk_id === chunk.chunk_id && v.match.start !== null;
    const box = el('div', 'chunk' + (cited ? ' cited' : ''));
    box.dataset.chunk = chunk.chunk_id;
    const relevant = (item.relevant_chunks || []).includes(chunk.chunk_id) ? ' · golden' : '';
    box.appendChild(el('div', 'cid', '#' + chunk.rank + ' ' + chunk.chunk_id + relevant));
    box.appendChild(cited ? highlighted(chunk.text, v.match.start, v.match.end) : el('div', 'text', chunk.text));
    card.appendChild(box);
  }
  return card;
}
function apply() {
  const f = {type: $('f-type').value, status: $('f-status').value, match: $('f-match').value,
             faith: $('f-faith').value, rel: $('f-rel').value, review: $('f-review').checked,
             unchecked: $('f-unchecked').checked};
  let shown = 0;
  for (const item of data.items) {
    const v = item.verdict;
    const kind = v.match ? v.match.kind : 'none';
    const visible = (!f.type || item.type === f.type) && (!f.status || v.status === f.status)
      && (!f.match || kind === f.match) && (!f.faith || String(v.faithfulness) === f.faith)
      && (!f.rel || String(v.relevance) === f.rel) && (!f.review || v.reasons.length > 0)
      && (!f.unchecked || !marks[item.question_id]);
    document.querySelector('[data-qid="' + CSS.escape(item.question_id) + '"]').hidden = !visible;
    if (visible) shown += 1;
  }
  $('shown').textContent = shown + ' of ' + data.items.length + ' shown · ' + Object.keys(marks).length + ' checked';
}
function exportMarks() {
  const payload = {folder: data.folder, checked: Object.entries(marks).map(([question_id, at]) => ({question_id, checked_at: at}))};
  const url = URL.createObjectURL(new Blob([JSON.stringify(payload, null, 2)], {type: 'application/json'}));
  const link = el('a');
  link.href = url;
  link.download = 'review-marks-' + data.folder + '.json';
  document.body.appendChild(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}
fillSelect($('f-type'), data.types);
fillSelect($('f-status'), data.statuses);
fillSelect($('f-match'), data.match_kinds);
const list = $('items');
for (const item of data.items) list.appendChild(render(item));
for (const id of ['f-type', 'f-status', 'f-match', 'f-faith', 'f-rel', 'f-review', 'f-unchecked']) $(id).addEventListener('change', apply);
$('export').addEventListener('click', exportMarks);
apply();
"""

BODY = """<header>
<h1>Evidence review · {folder}</h1>
<div class="meta">{judge}</div>
<div class="filters">
<label>type <select id="f-type"><option value="">all</option></select></label>
<label>status <select id="f-status"><option value="">all</option></select></label>
<label>quote <select id="f-match"><option value="">all</option></select></label>
<label>faithfulness <select id="f-faith"><option value="">any</option><option>0</option><option>1</option><option>2</option></select></label>
<label>relevance <select id="f-rel"><option value="">any</option><option>0</option><option>1</option><option>2</option></select></label>
<label><input type="checkbox" id="f-review"> needs review</label>
<label><input type="checkbox" id="f-unchecked"> not yet checked</label>
<button id="export" type="button">Export marks</button>
<span class="count" id="shown"></span>
</div>
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


def page_data(report: Report) -> dict[str, Any]:
    from judge.judging.verdict import review_reasons

    verdicts = {v.question_id: v for v in report.verdicts}
    items = []
    for item in report.items:
        v = verdicts[item.question_id]
        items.append(
            {
                **item.model_dump(mode="json"),
                "verdict": {
                    "status": v.status,
                    "faithfulness": v.faithfulness,
                    "relevance": v.relevance,
                    "evidence": v.evidence,
                    "note": v.note,
                    "error": v.error,
                    "match": v.match.model_dump(mode="json") if v.match else None,
                    "reasons": review_reasons(v),
                },
            }
        )
    kinds = sorted({i["verdict"]["match"]["kind"] for i in items if i["verdict"]["match"]})
    return {
        "folder": report.manifest.folder,
        "types": [t for t in report.judge.frame.index if t != "all"],
        "statuses": sorted({i["verdict"]["status"] for i in items}),
        "match_kinds": kinds,
        "items": items,
    }


def render_review_page(report: Report) -> str:
    judge = report.manifest.judge
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    meta = f"judge: {judge.describe()} · prompt {judge.prompt}"
    body = BODY.format(folder=html.escape(report.manifest.folder), judge=html.escape(meta))
    return (
        '<!doctype html>\n<html lang="ja">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"<title>Evidence review · {html.escape(report.manifest.folder)}</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n"
        f'<script type="application/json" id="report-data">{_json_for_script(page_data(report))}</script>\n'
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
