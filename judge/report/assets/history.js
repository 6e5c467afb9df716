'use strict';
// The season's charts, drawn from the JSON block: text reaches the page only through
// textContent and SVG attributes, never as HTML (see judge/report/history_page.py).
const data = JSON.parse(document.getElementById('season-data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const W = 320, H = 150, LEFT = 34, RIGHT = 8, TOP = 18, BOTTOM = 30;
const SCORES = new Set(['judge:faithfulness', 'judge:relevance', 'judge:correctness']);

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function day(iso) { return String(iso).slice(0, 10); }
function fmt(x) { return x === null || x === undefined ? 'n/a' : Number(x).toFixed(3); }

// The nights shown: the last `span` (0: all).
function shownNights() {
  const span = Number(document.getElementById('span').value);
  const total = data.nights.length;
  const first = span > 0 ? Math.max(0, total - span) : 0;
  return {first, count: total - first};
}

function shape(decision, x, y) {
  const s = 4;
  if (decision === 'collapsed') {
    return svg('path', {class: 'shape', d: `M${x - s} ${y - s}L${x + s} ${y + s}M${x + s} ${y - s}L${x - s} ${y + s}`, 'stroke-width': 2.5});
  }
  if (decision === 'regressed') {
    return svg('path', {class: 'shape', d: `M${x - s} ${y - s}L${x + s} ${y - s}L${x} ${y + s}Z`});
  }
  if (decision === 'season') {
    return svg('path', {class: 'shape', d: `M${x} ${y - s}L${x + s} ${y}L${x} ${y + s}L${x - s} ${y}Z`});
  }
  if (decision === 'listed') {
    return svg('path', {class: 'shape', d: `M${x - s} ${y + s}L${x + s} ${y + s}L${x} ${y - s}Z`});
  }
  return svg('circle', {class: 'shape', cx: x, cy: y, r: 2.5});
}

function scale(metric, cell, first) {
  let top = SCORES.has(metric) ? 2 : 1;
  for (const p of cell.points.slice(first)) if (p && p[2] > top) top = p[2];
  const plotH = H - TOP - BOTTOM;
  return v => TOP + plotH - (Math.max(0, Math.min(top, v)) / top) * plotH;
}

function chart(type, metric, cell, nights) {
  const figure = el('figure', 'chart');
  figure.dataset.type = type;
  figure.dataset.metric = metric;
  const y = scale(metric, cell, nights.first);
  const step = nights.count > 1 ? (W - LEFT - RIGHT) / (nights.count - 1) : 0;
  const x = i => LEFT + (i - nights.first) * step;
  const box = svg('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${type} ${metric}`});
  axes(box, y, metric);
  changeMarks(box, x, nights);
  if (cell.baseline !== null) {
    box.appendChild(svg('line', {class: 'baseline', x1: LEFT, x2: W - RIGHT, y1: y(cell.baseline), y2: y(cell.baseline), 'data-baseline': cell.baseline}));
    box.appendChild(svg('text', {class: 'baseline-label', x: W - RIGHT, y: y(cell.baseline) - 2, 'text-anchor': 'end'}, 'baseline'));
  }
  let path = '';
  for (let i = nights.first; i < data.nights.length; i++) {
    const p = cell.points[i];
    if (p) path += `${path ? 'L' : 'M'}${x(i).toFixed(1)} ${y(p[0]).toFixed(1)}`;
  }
  box.appendChild(svg('path', {class: 'line', d: path}));
  for (let i = nights.first; i < data.nights.length; i++) {
    const p = cell.points[i];
    if (p) box.appendChild(point(type, metric, cell, i, x(i), y));
  }
  const last = lastPoint(cell);
  const caption = last ? `${metric.split(':')[1]} · last ${fmt(last[0])} [${fmt(last[1])}, ${fmt(last[2])}], n ${last[3]}` : metric;
  figure.appendChild(el('figcaption', '', caption));
  figure.appendChild(box);
  return figure;
}

function lastPoint(cell) {
  for (let i = cell.points.length - 1; i >= 0; i--) if (cell.points[i]) return cell.points[i];
  return null;
}

function axes(box, y, metric) {
  const top = SCORES.has(metric) ? [0, 1, 2] : [0, 0.5, 1];
  for (const v of top) {
    box.appendChild(svg('line', {class: 'grid', x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v)}));
    box.appendChild(svg('text', {class: 'tick', x: LEFT - 4, y: y(v) + 3, 'text-anchor': 'end'}, String(v)));
  }
  box.appendChild(svg('line', {class: 'axis', x1: LEFT, x2: W - RIGHT, y1: H - BOTTOM, y2: H - BOTTOM}));
}

function changeMarks(box, x, nights) {
  const shownFirst = nights.first;
  const seen = {};
  for (const [night, kind, mark] of data.changes) {
    if (night < shownFirst) continue;
    const row = seen[night] || 0;
    seen[night] = row + 1;
    if (row === 0) box.appendChild(svg('line', {class: 'change-line', x1: x(night), x2: x(night), y1: TOP, y2: H - BOTTOM}));
    box.appendChild(svg('text', {class: 'change', x: x(night), y: H - BOTTOM + 10 + row * 9, 'text-anchor': 'middle', 'data-night': night, 'data-kind': kind}, mark));
  }
  const first = data.nights[shownFirst], last = data.nights[data.nights.length - 1];
  if (first) box.appendChild(svg('text', {class: 'tick', x: LEFT, y: H - 2}, day(first.date)));
  if (last) box.appendChild(svg('text', {class: 'tick', x: W - RIGHT, y: H - 2, 'text-anchor': 'end'}, day(last.date)));
}

function point(type, metric, cell, i, px, y) {
  const [mean, low, high, n] = cell.points[i];
  const decision = cell.decisions[i];
  const words = data.decisionText[decision];
  const g = svg('g', {class: `pt d-${decision}`, tabindex: 0, role: 'button', 'data-night': i, 'data-decision': decision});
  g.setAttribute('aria-label', `${day(data.nights[i].date)} ${metric}: ${fmt(mean)} [${fmt(low)}, ${fmt(high)}], n ${n}, ${words}`);
  g.appendChild(svg('title', {}, `${day(data.nights[i].date)}: ${fmt(mean)} [${fmt(low)}, ${fmt(high)}], n ${n} · ${words}`));
  if (high > low) g.appendChild(svg('line', {class: 'ci', x1: px, x2: px, y1: y(low), y2: y(high)}));
  g.appendChild(shape(decision, px, y(mean)));
  // One word per run of nights with the same decision (on its first night), so that words of
  // neighbouring nights never overlap; every point still says its decision in its label.
  if (decision !== 'ok' && cell.decisions[i - 1] !== decision) {
    let run = 1;
    while (cell.decisions[i + run] === decision) run++;
    const anchor = px > W - 70 ? 'end' : px < LEFT + 40 ? 'start' : 'middle';
    const text = run > 1 ? `${words} ×${run}` : words;
    g.appendChild(svg('text', {class: 'word', x: px, y: Math.max(9, y(high) - 6), 'text-anchor': anchor}, text));
  }
  const open = () => showDetail(type, metric, cell, i);
  g.addEventListener('click', open);
  g.addEventListener('keydown', event => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); open(); } });
  return g;
}

function showDetail(type, metric, cell, i) {
  const night = data.nights[i];
  const box = document.getElementById('detail');
  box.replaceChildren();
  box.hidden = false;
  box.dataset.night = i;
  const p = cell.points[i];
  box.appendChild(el('h2', '', `${day(night.date)} · ${type} · ${metric.split(':')[1]}`));
  box.appendChild(el('div', 'meta', `${fmt(p[0])} [${fmt(p[1])}, ${fmt(p[2])}], n ${p[3]} · ${data.decisionText[cell.decisions[i]]}`));
  if (night.verdict) box.appendChild(el('div', 'meta', `gate: ${night.verdict}`));
  const links = el('div');
  for (const [name, href] of [['review.html', night.review], ['report.md', night.report]]) {
    const a = el('a', '', `${night.folder}/${name}`);
    a.href = href;
    links.appendChild(a);
  }
  box.appendChild(links);
  const moved = cell.moved[String(i)] || [];
  box.appendChild(el('div', 'label', moved.length ? `questions that moved (${moved.length}):` : 'no question moved in a way the gate marked'));
  const list = el('ul', 'moved');
  for (const [id, before, after, diagnosis] of moved) {
    list.appendChild(el('li', '', `${id} ${before} → ${after}${diagnosis ? ' · ' + diagnosis : ''}`));
  }
  box.appendChild(list);
  box.scrollIntoView({block: 'nearest'});
}

function changeList(nights) {
  const list = document.getElementById('changes');
  list.replaceChildren();
  for (const [night, kind, mark, text] of data.changes) {
    if (night < nights.first) continue;
    const li = el('li', '');
    li.dataset.night = night;
    li.dataset.kind = kind;
    li.appendChild(el('span', 'k', `${mark} `));
    li.appendChild(document.createTextNode(`${day(data.nights[night].date)} (${data.nights[night].folder}): ${text}`));
    list.appendChild(li);
  }
  if (!list.children.length) list.appendChild(el('li', '', 'nothing changed under the numbers'));
}

function draw() {
  const nights = shownNights();
  const only = document.getElementById('f-type').value;
  const main = document.getElementById('types');
  main.replaceChildren();
  changeList(nights);
  for (const type of data.types) {
    if (only && type !== only) continue;
    const section = el('section', 'type');
    section.dataset.type = type;
    section.appendChild(el('h2', '', type === 'all' ? 'all questions' : type));
    const charts = el('div', 'charts');
    for (const metric of data.metrics) {
      const cell = data.cells[type][metric];
      if (cell) charts.appendChild(chart(type, metric, cell, nights));
    }
    section.appendChild(charts);
    main.appendChild(section);
  }
}

function start() {
  const span = document.getElementById('span');
  span.value = data.nights.length <= 30 ? '30' : '90';
  const select = document.getElementById('f-type');
  for (const type of data.types) {
    const option = el('option', '', type);
    option.value = type;
    select.appendChild(option);
  }
  span.addEventListener('change', draw);
  select.addEventListener('change', draw);
  draw();
}

start();
