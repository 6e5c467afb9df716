'use strict';
// The page's data in parts (judge/report/review_parts.py). Before this script: the first screen,
// that is the page's settings and its first page of items worst first, drawn at once. After it,
// read while that page is already shown: the whole list (each item's id, type, question, scores,
// flags, diagnosis and answer sha256: what the filters, sorts, counts and marks need), then the
// items' details (answer, chunks, verdict in full) and the chunk texts in blocks, each parsed
// when one of its items is first opened or searched.
const data = JSON.parse(document.getElementById('report-first').textContent);
data.items = [];  // every item's list fields, once the list is read (listArrived)
// A block can be read once the browser has parsed past it: an element follows it, or the page
// is parsed. Until then, what needs it waits (a page of many thousand items takes seconds).
function parsed(id) {
  const node = document.getElementById(id);
  return Boolean(node) && (Boolean(node.nextElementSibling) || document.readyState !== 'loading');
}
function whenParsed(id, then) {
  let done = false;
  const check = () => {
    if (done || !parsed(id)) return;
    done = true;
    then();
  };
  // At the latest when the page is parsed (before its load event), else as soon as it is seen.
  document.addEventListener('DOMContentLoaded', check, {once: true});
  const poll = () => { check(); if (!done) setTimeout(poll, 50); };
  poll();
}
function whenLoaded(then) {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', then, {once: true});
  else then();
}
// A list row leaves out the fields whose value is empty (review_parts.py's LIST_DEFAULTS and
// VERDICT_DEFAULTS): put back as it is read.
function listRow(row) {
  row.flags ??= [];
  row.gap ??= 0;
  row.confidence ??= null;
  row.missing_labels ??= [];
  row.correctness ??= null;
  row.none_relevant ??= false;
  if (row.verdict) {
    row.verdict.match ??= null;
    row.verdict.unsupported ??= 0;
  }
  return row;
}
const blocks = new Map();  // a data block's id → its parsed contents
function dataBlock(id) {
  if (!blocks.has(id)) blocks.set(id, JSON.parse(document.getElementById(id).textContent));
  return blocks.get(id);
}
// Each chunk text is in the data once; a context names it by its index.
const textBlock = (index) => 'report-texts-' + Math.floor(index / data.text_block);
const itemBlock = (entry) => 'report-items-' + Math.floor(entry.position / data.item_block);
function withDetails(entry, then) {
  // An item's details join its list fields the first time it is opened or searched, once the
  // blocks that hold them are parsed.
  if (entry.loaded) { then(); return; }
  if (!parsed(itemBlock(entry))) { whenParsed(itemBlock(entry), () => withDetails(entry, then)); return; }
  const details = dataBlock(itemBlock(entry))[entry.position % data.item_block];
  const chunks = [...details.context, ...details.beyond_context];
  const waiting = chunks.map((chunk) => textBlock(chunk.text)).find((id) => !parsed(id));
  if (waiting) { whenParsed(waiting, () => withDetails(entry, then)); return; }
  Object.assign(entry.item, details);
  for (const chunk of chunks) chunk.text = dataBlock(textBlock(chunk.text))[chunk.text % data.text_block];
  entry.loaded = true;
  then();
}
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
// Times are ISO 8601 in the data; people read them in their own time zone and words.
const timeFormat = new Intl.DateTimeFormat(undefined, {year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit'});
function readable(iso) {
  const when = new Date(String(iso));
  return Number.isNaN(when.getTime()) ? String(iso) : timeFormat.format(when);
}
function duration(seconds) {
  if (seconds === null || seconds === undefined) return '';
  if (seconds < 1) return Math.round(seconds * 1000) + ' ms';
  if (seconds < 60) return seconds.toFixed(1) + ' s';
  return Math.floor(seconds / 60) + ' min ' + Math.round(seconds % 60) + ' s';
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
  // Looked up by question first: a page of many thousand items has marks on few of them.
  if (!item.answer_sha256 || !marksOf(item.question_id).length) return null;
  const mark = store.marks[itemKey(item)];
  return validMark(mark) ? mark : null;
}
// The store's marks by question id, made again when the store is read or saved (a new object).
let marksIndexed = null;
let marksByQuestion = new Map();
function marksOf(qid) {
  if (marksIndexed !== store) {
    marksByQuestion = new Map();
    for (const [k, mark] of Object.entries(store.marks)) {
      if (!validMark(mark)) continue;
      if (!marksByQuestion.has(mark.question_id)) marksByQuestion.set(mark.question_id, []);
      marksByQuestion.get(mark.question_id).push([k, mark]);
    }
    marksIndexed = store;
  }
  return marksByQuestion.get(qid) || [];
}
function staleMark(item) {
  // The newest mark of this question made on another answer or by another judge.
  let newest = null;
  const key = itemKey(item);
  for (const [k, mark] of marksOf(item.question_id)) {
    if (k === key) continue;
    if (!newest || String(mark.marked_at) > String(newest.marked_at)) newest = mark;
  }
  if (!newest) return null;
  const why = [];
  if (newest.answer_sha256 !== item.answer_sha256) why.push('answer changed');
  if (newest.judge_fingerprint !== data.judge_fingerprint) why.push('judge changed');
  return {mark: newest, why};
}
function markText(mark) {
  const correct = mark.correctness === null || mark.correctness === undefined ? '' : ' C' + mark.correctness;
  const scores = 'F' + mark.faithfulness + ' R' + mark.relevance + correct;
  return mark.agree ? 'agree (' + scores + ')' : scores;
}

// --- rendering (textContent only) -----------------------------------------------------------
const matchClass = {exact: 'good', normalised: 'good', partial: 'warn', absent: 'bad', too_short: 'bad', empty: '', cited: ''};
const flagShort = {disagrees: '≠ human', foreign_quote: 'non-golden quote', unverified_quote: 'quote unverified',
                   not_ok: 'not ok', adapter_failed: 'adapter failed', verdict_flags: 'flagged',
                   low_confidence: 'low confidence', unsupported_sentences: 'unsupported sentence',
                   injection: 'instruction to the judge', cited_unrelated: 'cited sentence unrelated',
                   same_position: 'same cited position'};
const diagClass = (diagnosis) => 'badge diag d-' + String(diagnosis).replace(/[^a-z]+/g, '-');
function scoreBadges(v) {
  // Written and coloured: "F0 R2", each score its own colour; the text alone says it all.
  const box = el('span', 'scores');
  box.title = 'faithfulness ' + v.faithfulness + ' of 2, relevance ' + v.relevance + ' of 2';
  box.appendChild(el('span', 'score s' + v.faithfulness, 'F' + v.faithfulness));
  box.appendChild(document.createTextNode(' '));
  box.appendChild(el('span', 'score s' + v.relevance, 'R' + v.relevance));
  return box;
}
// The list's verdict carries the count; an opened item's, its sentences.
const unsupportedCount = (v) => (!v ? 0 : v.sentences ? v.sentences.filter((s) => s.verdict === 'unsupported').length : v.unsupported || 0);
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
// Every item's entry, by question id: {item, position}, and {section, row, detail} once the list
// has shown it (build), {loaded} once its details are read (withDetails). The first page's
// until the whole list is read.
const entries = new Map(data.first.map((item) => [item.question_id, {item: listRow(item), position: item.position, section: null}]));
function fillRow(entry) {
  const item = entry.item;
  const v = item.verdict;
  const row = entry.row;
  row.replaceChildren();
  row.appendChild(el('span', 'qid', item.question_id));
  if (!v) row.appendChild(el('span', 'badge bad', 'adapter failed'));
  else if (v.status === 'ok') row.appendChild(scoreBadges(v));
  else row.appendChild(el('span', 'badge bad', v.status));
  const diagnosis = row.appendChild(el('span', diagClass(item.diagnosis), item.diagnosis));
  diagnosis.title = 'diagnosis: ' + item.diagnosis;
  row.appendChild(el('span', 'badge', item.type));
  if (item.question !== null) row.appendChild(el('span', 'qtext', item.question));
  for (const flag of item.flags) {
    if (flag === 'unsupported_sentences') row.appendChild(el('span', 'badge bad flag', '✗ ' + unsupportedCount(v) + ' unsupported'));
    else if (flag !== 'not_ok' && flag !== 'adapter_failed') row.appendChild(el('span', 'badge warn flag', flagShort[flag] || data.triage[flag] || flag));
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
      + (m.comment ? ' · “' + m.comment + '”' : '') + ' · ' + readable(m.marked_at) + (m.folder ? ' on ' + m.folder : '')));
  }
  const controls = el('div', 'controls');
  const judged = v && v.status === 'ok';
  // Correctness is marked too where the judge gave it (optional: left empty, it is not labelled).
  const c = item.correctness && item.correctness.status === 'ok' ? item.correctness.score : null;
  const agree = el('button', 'agree', judged ? 'Agree with the judge (F' + v.faithfulness + ' R' + v.relevance + (c === null ? '' : ' C' + c) + ')' : 'Agree (no judge scores)');
  agree.type = 'button';
  agree.disabled = !judged;
  const selects = {};
  controls.appendChild(agree);
  for (const axis of item.correctness ? ['faithfulness', 'relevance', 'correctness'] : ['faithfulness', 'relevance']) {
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
    if (selects.correctness) selects.correctness.value = mark && mark.correctness !== null && mark.correctness !== undefined ? String(mark.correctness) : '';
    comment.value = mark ? String(mark.comment || '') : '';
    clear.disabled = !mark;
    state.textContent = mark ? 'Marked: ' + markText(mark) + ' · ' + readable(mark.marked_at) : 'Not marked yet.';
    state.title = mark ? String(mark.marked_at) : '';
  }
  function record(agreeing) {
    const problem = commentProblem(comment.value);
    if (problem) {
      state.textContent = problem;
      return;
    }
    const f = agreeing ? v.faithfulness : Number(selects.faithfulness.value);
    const r = agreeing ? v.relevance : Number(selects.relevance.value);
    const mark = {
      question_id: item.question_id, answer_sha256: item.answer_sha256,
      judge_fingerprint: data.judge_fingerprint, agree: agreeing,
      judge_faithfulness: judged ? v.faithfulness : null, judge_relevance: judged ? v.relevance : null,
      faithfulness: f, relevance: r, comment: comment.value.slice(0, data.comment_max),
      marked_at: new Date().toISOString(), folder: data.folder,
    };
    if (selects.correctness) {
      mark.judge_correctness = c;
      mark.correctness = agreeing ? c : (selects.correctness.value === '' ? null : Number(selects.correctness.value));
    }
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
  const edited = () => {
    const problem = commentProblem(comment.value);
    comment.setAttribute('aria-invalid', problem ? 'true' : 'false');
    if (problem) state.textContent = problem;
    else if (currentMark(item)) state.textContent = 'Changed: press Agree or Save to keep it.';
    else state.textContent = 'Not marked yet.';
  };
  comment.addEventListener('input', edited);
  selects.faithfulness.addEventListener('change', edited);
  selects.relevance.addEventListener('change', edited);
  if (selects.correctness) selects.correctness.addEventListener('change', edited);
  show();
  if (!item.answer_sha256) {
    for (const node of [agree, save, clear, ...Object.values(selects), comment]) node.disabled = true;
    state.textContent = 'No answer, nothing to mark.';
  }
  return box;
}
// A comment may hold no control character (an escape sequence, a bell, a bidirectional
// override): 'judge audit import' would leave the mark out. Refused as it is typed, by the
// importer's own rule (data.comment_refused).
const commentRefused = new RegExp(data.comment_refused);
function commentProblem(text) {
  const found = commentRefused.exec(text);
  if (!found) return null;
  const code = found[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
  const at = Array.from(text.slice(0, found.index)).length + 1;
  return 'The comment holds U+' + code + ', a control character, at character ' + at
    + ': remove it, then press Agree or Save.';
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
  head.appendChild(el('span', diagClass(item.diagnosis), 'diagnosis: ' + item.diagnosis));
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
  if (item.correctness) {
    const c = item.correctness;
    const cls = c.status !== 'ok' ? 'bad' : c.score === 2 ? 'good' : c.score === 0 ? 'bad' : '';
    head.appendChild(el('span', 'badge ' + cls, c.status === 'ok' ? 'correctness ' + c.score + '/2' : 'correctness: ' + c.status));
  }
  if (item.missing_labels.length) {
    head.appendChild(el('span', 'badge bad', 'possible missing label: ' + item.missing_labels.join(', ')));
  }
  for (const below of item.below_since || []) {
    // Below the baseline or the season for two runs or more (docs/gate.md).
    head.appendChild(el('span', 'badge bad', 'below: ' + below));
  }
  for (const label of item.labels) {
    const correct = label.correctness === null || label.correctness === undefined ? '' : ' C' + label.correctness;
    head.appendChild(el('span', 'badge', 'human ' + label.labeller + ': F' + label.faithfulness + ' R' + label.relevance + correct));
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
    // The golden reference, and where it went: the judge sees it only if its prompt sends it.
    detail.appendChild(el('div', 'label', 'Reference answer'));
    detail.appendChild(el('div', 'source reference-note', data.prompt.reference_note));
    const reference = item.reference === null
      ? '(none: the golden set gives no reference answer for this question)' : item.reference;
    detail.appendChild(el('div', 'text reference', reference));
  }
  if (v) {
    detail.appendChild(el('div', 'label', 'Judge'));
    if (bySentence) detail.appendChild(sentenceList(v.sentences));
    else {
      const absent = v.match && ['absent', 'too_short', 'partial'].includes(v.match.kind);
      detail.appendChild(el('div', 'text quote' + (absent ? ' absent' : ''), v.evidence ? '“' + v.evidence + '”' : '(no quote)'));
    }
    if (v.origin) detail.appendChild(el('div', 'origin', 'evidence: ' + v.origin));
    if (item.quote_from_reference) {
      detail.appendChild(el('div', 'from-reference',
        'this quote is not in the chunks but is the reference answer\'s text: the judge copied the reference, which proves nothing'));
    }
    if (v.note) detail.appendChild(el('div', 'text', v.note));
  }
  if (item.correctness) {
    detail.appendChild(el('div', 'label', 'Correctness against the reference answer'));
    detail.appendChild(el('div', 'text', item.correctness.reason || '(no reason given)'));
  }
  if (item.context.length) detail.appendChild(el('div', 'label', 'Chunks the judge saw (rank order)'));
  item.context.forEach((chunk, index) => {
    const pieces = bySentence ? item.chunk_pieces[index] : null;
    const cited = pieces ? pieces.some((piece) => piece.citing)
      : Boolean(v && v.match && v.match.chunk_id === chunk.chunk_id && v.match.start !== null);
    const box = el('div', 'chunk' + (cited ? ' cited' : ''));
    box.dataset.chunk = chunk.chunk_id;
    const golden = (item.relevant_chunks || []).includes(chunk.chunk_id) ? ' · golden' : '';
    const grade = item.chunk_grades[chunk.chunk_id];
    const graded = !grade ? '' : grade.status !== 'ok' ? ' · not graded (' + grade.status + ')'
      : ' · judge grade ' + grade.grade + '/3' + (grade.missing_label ? ' · possible missing label' : '');
    box.appendChild(el('div', 'cid' + (grade && grade.missing_label ? ' missing-label' : ''), '#' + chunk.rank + ' ' + chunk.chunk_id + golden + graded));
    if (grade && grade.reason) box.appendChild(el('div', 'grade-reason', grade.reason));
    if (pieces) box.appendChild(citedText(pieces, citeMarks));
    else box.appendChild(cited ? highlighted(chunk.text, v.match.start, v.match.end) : el('div', 'text', chunk.text));
    detail.appendChild(box);
  });
  // Possible missing labels ranked below what the judge saw: their corpus text, to decide on.
  if ((item.beyond_context || []).length) detail.appendChild(el('div', 'label', 'Possible missing labels ranked below the chunks the judge saw (corpus text)'));
  for (const chunk of item.beyond_context || []) {
    const box = el('div', 'chunk');
    box.dataset.chunk = chunk.chunk_id;
    box.appendChild(el('div', 'cid missing-label', '#' + chunk.rank + ' ' + chunk.chunk_id + ' · judge grade ' + chunk.grade + '/3 · possible missing label'));
    if (chunk.reason) box.appendChild(el('div', 'grade-reason', chunk.reason));
    box.appendChild(el('div', 'text', chunk.text));
    detail.appendChild(box);
  }
  if (v) detail.appendChild(rawReply(v));
  detail.appendChild(markBox(entry));
}
function rawReply(v) {
  // What the judge replied, as it came back; the prompt it answered is shown once, at the top.
  const box = el('details', 'raw');
  const facts = [(v.raw_reply || '').length + ' characters'];
  if (v.cached) facts.push('from the cache');
  if (v.latency_s) facts.push(duration(v.latency_s));
  if (v.prompt_tokens !== null) facts.push(v.prompt_tokens + ' prompt tokens');
  if (v.completion_tokens !== null) facts.push(v.completion_tokens + ' reply tokens');
  box.appendChild(el('summary', null, 'Raw reply of the judge (' + facts.join(' · ') + ')'));
  box.appendChild(el('div', 'source', data.prompt.read_by_judge
    ? 'the reply to the prompt shown at the top of the page (' + data.prompt.name + '), filled with this item'
    : 'this judge reads no prompt (' + data.prompt.judge + ')'));
  box.appendChild(el('pre', 'text raw-reply', v.raw_reply || '(an empty reply)'));
  return box;
}
function setOpen(entry, open) {
  if (open && !entry.loaded) { withDetails(entry, () => setOpen(entry, open)); return; }
  if (open && !entry.detail.childElementCount) fillDetail(entry);
  entry.detail.hidden = !open;
  entry.row.setAttribute('aria-expanded', String(open));
}
let current = null;  // the question id keyboard navigation moves from
function setCurrent(entry) {
  const before = current && entries.get(current);
  if (before && before.section) before.section.classList.remove('current');
  current = entry.item.question_id;
  entry.section.classList.add('current');
  try { history.replaceState(null, '', '#' + encodeURIComponent(current)); } catch (e) { /* file:// quirks */ }
}
function build(entry) {
  // An item's line, made when the list first shows it.
  const item = entry.item;
  const section = el('section', 'item' + (item.flags.length ? ' flagged' : ''));
  section.dataset.qid = item.question_id;
  const row = el('button', 'row');
  row.type = 'button';
  row.setAttribute('aria-expanded', 'false');
  const detail = el('div', 'detail');
  detail.hidden = true;
  section.appendChild(row);
  section.appendChild(detail);
  Object.assign(entry, {section, row, detail});
  row.addEventListener('click', () => {
    const open = detail.hidden;
    setOpen(entry, open);
    if (open) setCurrent(entry);
  });
  fillRow(entry);
}
function changed(entry) {
  fillRow(entry);
  apply();
}
function redrawAll() {
  for (const entry of entries.values()) {
    if (!entry.section) continue;
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
const filterIds = ['f-type', 'f-status', 'f-match', 'f-faith', 'f-rel', 'f-triage', 'f-mark', 'f-diag', 'f-chunks', 'search'];
// The search: every word typed must occur in the question, the answer or a chunk (case, width
// and compatibility forms folded, so "ｉｐａｄ" finds "iPad"). An item's text is folded the first
// time a search reads it (which reads its details).
const fold = (text) => String(text).normalize('NFKC').toLowerCase();
const haystacks = new Map();
function haystack(item) {
  let hay = haystacks.get(item.question_id);
  if (hay === undefined) {
    withDetails(entries.get(item.question_id), () => {});  // the page is parsed: at once
    hay = fold([item.question || '', item.answer || '', ...item.context.map((chunk) => chunk.text)].join('\n'));
    haystacks.set(item.question_id, hay);
  }
  return hay;
}
function filterState() {
  // The filters' values, read once for a pass over every item.
  const f = Object.fromEntries(filterIds.map((id) => [id, $(id).value]));
  f.words = fold(f['search']).split(/\s+/).filter(Boolean);
  return f;
}
function visibleNow(item, f) {
  const v = item.verdict;
  const status = v ? v.status : 'adapter_failed';
  const kind = v && v.match ? v.match.kind : 'none';
  const triage = f['f-triage'];
  const markFilter = f['f-mark'];
  const diag = f['f-diag'];
  return (!f['f-type'] || item.type === f['f-type']) && (!f['f-status'] || status === f['f-status'])
    && (!diag || (diag === '!ok' ? item.diagnosis !== 'ok' : item.diagnosis === diag))
    && (!f['f-match'] || kind === f['f-match'])
    && (!f['f-faith'] || (v && String(v.faithfulness) === f['f-faith']))
    && (!f['f-rel'] || (v && String(v.relevance) === f['f-rel']))
    && (!f['f-chunks'] || (f['f-chunks'] === 'missing' ? item.missing_labels.length > 0
      : f['f-chunks'] === 'none-relevant' ? item.none_relevant
      : item.correctness && item.correctness.status === 'ok' && String(item.correctness.score) === f['f-chunks'].slice(1)))
    && (!triage || (triage === 'any' ? item.flags.length > 0
      : triage === 'needs_review' ? item.needs_review : item.flags.includes(triage)))
    && (!markFilter
        || (markFilter === 'unmarked' && item.answer_sha256 && !currentMark(item))
        || (markFilter === 'marked' && currentMark(item))
        || (markFilter === 'stale' && !currentMark(item) && staleMark(item)))
    && (!f.words.length || f.words.every((word) => haystack(item).includes(word)));
}
function markable() { return data.items.filter((i) => i.answer_sha256); }
// The list shows the first `limit` of the items the filters let through, in the sort's order;
// scrolling to its end (or the button there) shows a page more. A page of 100,000 items draws
// 200 lines, not 100,000.
const PAGE = data.page;
let limit = PAGE;
let sorted = [];  // every entry, in the sort's order
let shown = [];  // the entries the filters let through, in that order
let shownSet = new Set();
let listReady = false;  // the whole list is read: the filters, sorts and counts work on it
function apply() {
  if (!listReady) return;
  if ($('search').value.trim() && document.readyState === 'loading') { whenLoaded(apply); return; }
  const f = filterState();
  shown = sorted.filter((entry) => visibleNow(entry.item, f));
  shownSet = new Set(shown);
  draw();
  const items = markable();
  const marked = items.filter((i) => currentMark(i)).length;
  $('shown').textContent = shown.length + ' of ' + data.items.length + ' shown';
  $('progress').textContent = 'marked ' + marked + ' of ' + items.length;
  const active = filterIds.filter((id) => id !== 'search' && $(id).value).length;
  $('toggle-controls').textContent = 'filters' + (active ? ' (' + active + ' on)' : '');
}
function draw() {
  // The first `limit` shown entries in the list (made when new), in the sort's order; entries
  // made before and not shown now stay in place, hidden. Only what is out of order moves.
  const wanted = new Set(shown.slice(0, limit));
  for (const entry of wanted) if (!entry.section) build(entry);
  let at = list.firstChild;
  for (const entry of sorted) {
    if (!entry.section) continue;
    entry.section.hidden = !wanted.has(entry);
    if (entry.section === at) at = at.nextSibling;
    else list.insertBefore(entry.section, at);
  }
  const more = shown.length - wanted.size;
  $('more').hidden = more <= 0;
  $('show-more').textContent = 'showing ' + wanted.size + ' of ' + shown.length + ': show ' + Math.min(more, PAGE) + ' more';
}
function showMore() {
  if (limit >= shown.length) return;
  limit += PAGE;
  draw();
}
function drawUpTo(entry) {
  // An item opened by a link or a key is drawn, with every shown item before it.
  const rank = shown.indexOf(entry);
  if (rank < limit) return;
  limit = (Math.floor(rank / PAGE) + 1) * PAGE;
  draw();
}
// Worst first: what needs review, then a diagnosis other than ok, then the lowest scores (no
// scores at all first), then the diagnoses in their order.
const diagnosisRank = (item) => data.diagnoses.indexOf(item.diagnosis);
const scoreSum = (item) => (item.verdict && item.verdict.status === 'ok' ? item.verdict.faithfulness + item.verdict.relevance : -1);
const sorts = {
  worst: (a, b) => Number(b.item.needs_review) - Number(a.item.needs_review)
    || Number(a.item.diagnosis === 'ok') - Number(b.item.diagnosis === 'ok')
    || scoreSum(a.item) - scoreSum(b.item) || diagnosisRank(a.item) - diagnosisRank(b.item)
    || a.position - b.position,
  order: (a, b) => a.position - b.position,
  reasons: (a, b) => b.item.flags.length - a.item.flags.length || a.position - b.position,
  gap: (a, b) => b.item.gap - a.item.gap || a.position - b.position,
  // Least confident first; items without a confidence (none reported, or no verdict) last.
  confidence: (a, b) => (a.item.confidence ?? 2) - (b.item.confidence ?? 2) || a.position - b.position,
};
function sortItems() {
  sorted = Array.from(entries.values()).sort(sorts[$('sort').value] || sorts.order);
  limit = PAGE;
  apply();
}

// --- navigation: #qid links, j/k ---------------------------------------------------------------
function scrollToEntry(entry) {
  // Below the sticky header, not behind it.
  const top = entry.section.getBoundingClientRect().top + window.scrollY;
  window.scrollTo({top: Math.max(0, top - document.querySelector('header').offsetHeight - 8)});
  entry.row.focus({preventScroll: true});
}
function reveal(entry) {
  if (!shownSet.has(entry)) {
    // A link must open its item whatever the filters say.
    for (const id of filterIds) $(id).value = '';
    apply();
  }
  drawUpTo(entry);
  openAndShow(entry);
}
function openAndShow(entry) {
  // Opened, current and scrolled to once its details are in: the page below it is as long
  // as it will be, so the scroll puts it under the header.
  withDetails(entry, () => {
    setOpen(entry, true);
    setCurrent(entry);
    scrollToEntry(entry);
  });
}
function openFromHash() {
  const qid = decodeURIComponent(location.hash.slice(1));
  if (!qid) return;
  const entry = entries.get(qid);
  if (entry) reveal(entry); else say('no item "' + qid + '" on this page', true);
}
function step(delta) {
  // From the current item (shown or not) to the next shown one in the sort's order.
  const from = current === null ? -1 : sorted.findIndex((e) => e.item.question_id === current);
  let index = from < 0 ? (delta > 0 ? -1 : sorted.length) : from;
  do { index += delta; } while (index >= 0 && index < sorted.length && !shownSet.has(sorted[index]));
  if (index < 0 || index >= sorted.length) return;
  // One item open at a time while stepping: the one being read.
  if (from >= 0 && sorted[from].section) setOpen(sorted[from], false);
  const entry = sorted[index];
  drawUpTo(entry);
  openAndShow(entry);
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
// A run with correctness also exports the judge's and the reviewer's correctness; a run
// without writes neither (the marks file stays what older pages wrote).
const exportFields = ['question_id', 'answer_sha256', 'judge_fingerprint', 'agree', 'judge_faithfulness',
                      'judge_relevance', 'faithfulness', 'relevance', 'comment', 'marked_at',
                      ...(data.correctness_judged ? ['judge_correctness', 'correctness'] : [])];
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

// --- the overview: the run, the counts by type and diagnosis, the prompt ----------------------
function showRun() {
  const when = $('run-when');
  when.textContent = 'run ' + readable(data.run.started_at) + ' · judged in ' + duration(data.run.judge_seconds);
  when.title = data.run.started_at + ' – ' + data.run.finished_at;
  const items = data.items;
  const review = items.filter((i) => i.needs_review).length;
  const notOk = items.filter((i) => i.diagnosis !== 'ok').length;
  $('summary').textContent = items.length + ' questions · ' + review + ' need review · ' + notOk
    + ' with a diagnosis other than ok · listed worst first (sort to change)';
}
function showFilter(values) {
  // A count was clicked: show exactly what it counts.
  for (const id of filterIds) $(id).value = '';
  for (const [id, value] of Object.entries(values)) $(id).value = value;
  filtered();
}
function countCell(row, count, values, what) {
  const td = row.appendChild(el('td'));
  const button = td.appendChild(el('button', 'cell' + (count ? '' : ' zero'), count));
  button.type = 'button';
  button.dataset.count = what;
  button.title = 'show ' + what;
  button.disabled = !count;
  button.addEventListener('click', () => showFilter(values));
}
function showCounts() {
  const table = $('counts');
  const types = [...data.types];
  for (const item of data.items) if (!types.includes(item.type)) types.push(item.type);
  const head = table.appendChild(el('thead')).appendChild(el('tr'));
  head.appendChild(el('th', 't', 'type'));
  head.appendChild(el('th', null, 'n'));
  head.appendChild(el('th', null, 'needs review'));
  for (const diagnosis of data.diagnoses) head.appendChild(el('th', null, diagnosis));
  const body = table.appendChild(el('tbody'));
  // One pass over the items: per type (and for all), n, needs review and each diagnosis.
  const counts = new Map([...types, null].map((type) => [type, {n: 0, review: 0, diagnoses: new Map()}]));
  for (const item of data.items) {
    for (const type of [item.type, null]) {
      const count = counts.get(type);
      count.n += 1;
      count.review += Number(Boolean(item.needs_review));
      count.diagnoses.set(item.diagnosis, (count.diagnoses.get(item.diagnosis) || 0) + 1);
    }
  }
  for (const type of [...types, null]) {
    const count = counts.get(type);
    const row = body.appendChild(el('tr'));
    row.dataset.type = type === null ? '' : type;
    row.appendChild(el('th', 't', type === null ? 'all' : type));
    const where = type === null ? {} : {'f-type': type};
    const name = type === null ? 'all' : type;
    countCell(row, count.n, where, name);
    countCell(row, count.review, {...where, 'f-triage': 'needs_review'}, name + ', needs review');
    for (const diagnosis of data.diagnoses) {
      countCell(row, count.diagnoses.get(diagnosis) || 0, {...where, 'f-diag': diagnosis}, name + ', ' + diagnosis);
    }
  }
}
function showPrompt() {
  const prompt = data.prompt;
  $('prompt-title').textContent = (prompt.read_by_judge ? 'The prompt the judge was given: ' : 'The prompt file of this run: ')
    + prompt.name + ' (sha256 ' + prompt.sha256.slice(0, 12) + '…' + (prompt.mode ? ', ' + prompt.mode + ' mode' : '') + ')';
  const notes = [];
  if (prompt.read_by_judge) notes.push('one prompt for every item: each item\'s question, reference, chunks and answer fill its $placeholders');
  else notes.push('not given to this judge: ' + prompt.judge + ' reads no prompt' + (prompt.judge_about ? ' (' + prompt.judge_about + ')' : ''));
  if (prompt.problem) notes.push(prompt.problem + ', so it is not shown');
  $('prompt-note').textContent = notes.join(' · ');
  $('prompt-text').textContent = prompt.text === null ? '' : prompt.text;
  $('prompt-text').hidden = prompt.text === null;
}

// --- start ------------------------------------------------------------------------------------
// A phone-sized window gets the compact header (the styles' .narrow rules): the title, the search
// and the counts stay; the filters fold behind a button.
const narrow = window.matchMedia('(max-width: 640px)');
const fitWidth = () => document.documentElement.classList.toggle('narrow', narrow.matches);
narrow.addEventListener('change', fitWidth);
fitWidth();
$('toggle-controls').addEventListener('click', () => {
  const open = document.querySelector('header').classList.toggle('controls-open');
  $('toggle-controls').setAttribute('aria-expanded', String(open));
});
function fillFilters() {
  // Each choice with its count over the whole list.
  fillSelect($('f-type'), data.types.map((t) => [t, t]));
  fillSelect($('f-status'), data.statuses.map((s) => [s, s]));
  fillSelect($('f-match'), data.match_kinds.map((k) => [k, k]));
  // One pass over the items counts every choice.
  const counted = new Map();
  const count = (key) => counted.set(key, (counted.get(key) || 0) + 1);
  for (const i of data.items) {
    count('d:' + i.diagnosis);
    if (i.diagnosis !== 'ok') count('!ok');
    for (const flag of new Set(i.flags)) count('f:' + flag);
    if (i.flags.length) count('any');
    if (i.needs_review) count('needs_review');
    if (i.missing_labels.length) count('missing');
    if (i.none_relevant) count('none-relevant');
    if (i.correctness && i.correctness.status === 'ok') count('c' + i.correctness.score);
  }
  const countOf = (key) => counted.get(key) || 0;
  const diagnosisCount = (d) => countOf('d:' + d);
  fillSelect($('f-diag'), [['!ok', 'anything but ok (' + countOf('!ok') + ')'],
    ...data.diagnoses.map((d) => [d, d + ' (' + diagnosisCount(d) + ')'])]);
  const flagCount = (flag) => countOf('f:' + flag);
  // "needs review" counts what the console and report.md count (the run record's questions
  // that need a look); "any flag" adds the adapter's failures and the judge's findings.
  fillSelect($('f-triage'), [['needs_review', 'needs review (' + countOf('needs_review') + ')'],
    ['any', 'any flag (' + countOf('any') + ')'],
    ...Object.entries(data.triage).map(([flag, text]) => [flag, text + ' (' + flagCount(flag) + ')'])]);
  // The further judgements' filter: possible missing labels and chunk grades, and correctness,
  // offered only when the run has them.
  const chunkChoices = [];
  if (data.chunks_graded) {
    chunkChoices.push(['missing', 'possible missing label (' + countOf('missing') + ')']);
    chunkChoices.push(['none-relevant', 'no chunk graded relevant (' + countOf('none-relevant') + ')']);
  }
  if (data.correctness_judged) {
    for (const score of [0, 1, 2]) {
      chunkChoices.push(['c' + score, 'correctness ' + score + ' (' + countOf('c' + score) + ')']);
    }
  }
  fillSelect($('f-chunks'), chunkChoices);
  $('f-chunks').closest('label').hidden = chunkChoices.length === 0;
}
const list = $('items');
// A filter changed: the list starts again from its first page.
function filtered() {
  limit = PAGE;
  apply();
}
for (const id of filterIds) $(id).addEventListener('change', filtered);
$('search').addEventListener('input', filtered);
$('show-more').addEventListener('click', showMore);
// Scrolling near the end of the list shows the next page.
new IntersectionObserver((seen) => { if (seen.some((one) => one.isIntersecting)) showMore(); },
  {rootMargin: '0px 0px 600px 0px'}).observe($('more'));
$('sort').addEventListener('change', sortItems);
$('reviewer').value = store.reviewer;
$('reviewer').addEventListener('input', () => {
  const name = $('reviewer').value.trim();
  saveStore((s) => { s.reviewer = name; });
});
$('export').addEventListener('click', exportMarks);
$('open-all').addEventListener('click', () => { for (const e of entries.values()) if (e.section && !e.section.hidden) setOpen(e, true); });
$('close-all').addEventListener('click', () => { for (const e of entries.values()) if (e.section) setOpen(e, false); });
window.addEventListener('hashchange', () => { if (listReady) openFromHash(); });
window.addEventListener('storage', (event) => {
  // Marks saved in another tab: show them here too.
  if (event.key !== data.store_key) return;
  store = readStore();
  $('reviewer').value = store.reviewer;
  redrawAll();
});
// The controls that read the whole list wait for it.
const listControls = [...filterIds, 'sort', 'export'].map($);
for (const control of listControls) control.disabled = true;
function listArrived() {
  // The whole list is read: every item gets its entry (the first page's keep theirs, details
  // and all), then the counts, the filters and the sort work on all of them.
  data.items = dataBlock('report-data').items.map((row, position) => {
    const known = entries.get(row.question_id);
    if (known) return known.item;
    entries.set(row.question_id, {item: listRow(row), position, section: null});
    return row;
  });
  listReady = true;
  for (const control of listControls) control.disabled = false;
  showRun();
  showCounts();
  fillFilters();
  sortItems();
  openFromHash();
}
// The first page, drawn before the rest of the page is even read: in the order it came (worst
// first, as the page opens), its count said until the whole list is read.
sorted = data.first.map((item) => entries.get(item.question_id));
shown = sorted;
shownSet = new Set(shown);
draw();
$('shown').textContent = data.n_items + ' items (reading the list…)';
$('more').hidden = true;
showPrompt();
whenParsed('report-data', listArrived);
