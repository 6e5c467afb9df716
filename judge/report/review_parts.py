"""review.html's data as the page carries it: the list first, the rest of each item in blocks.

A page of 100,000 questions holds over a hundred megabytes of data; a browser that had to parse
all of it before drawing took minutes to show the first item. The page therefore carries
``page_data`` in parts (``page_parts``): the list (every item's id, type, question, scores,
flags, diagnosis and answer sha256: what the lines, filters, sorts, counts and marks need), read
before the script runs, and after the script the details of the items in blocks of
``ITEM_BLOCK`` and the chunk texts in blocks of ``TEXT_BLOCK``, each parsed only when an item in
it is opened or searched. Every block is JSON inside ``<script type="application/json">``, with
``<``, ``>`` and ``&`` escaped so that no text can close it (``json_for_script``).
"""

from __future__ import annotations

import heapq
from typing import Any

import pydantic_core

#: The fields of an item that its line in the list, the filters, the sorts, the counts and the
#: marks need: what the page reads before it draws anything. The rest of an item (its answer,
#: chunks, verdict in full, reasons...) is read only when the item is opened.
LIST_FIELDS = (
    "question_id",
    "type",
    "question",
    "answer_sha256",
    "diagnosis",
    "flags",
    "needs_review",
    "gap",
    "confidence",
    "missing_labels",
)
#: What a list row leaves out when it has this value (most rows do: no flag, no gap to a
#: label...), and the page's script (``listRow``) puts back: a tenth of the list's bytes.
LIST_DEFAULTS: dict[str, Any] = {
    "flags": [],
    "gap": 0,
    "confidence": None,
    "missing_labels": [],
    "correctness": None,
    "none_relevant": False,
}
#: The same for the list's short verdict.
VERDICT_DEFAULTS: dict[str, Any] = {"match": None, "unsupported": 0}
#: Items per block of details, and chunk texts per block of texts: one block is what opening one
#: item parses (about a megabyte at most), not the page's whole data.
ITEM_BLOCK = 500
TEXT_BLOCK = 1000
#: The lines the list draws at a time (the page's script reads it from the data): the first
#: screen's items travel before the script, worst first, so that they are drawn before the
#: browser has read the rest of the page.
PAGE = 200


def _list_row(item: dict[str, Any], relevant_grade: int | None) -> dict[str, Any]:
    """An item as the list needs it (``LIST_FIELDS``), its verdict cut to the scores, status,
    quote kind and unsupported sentences the line and the filters show, and whether no chunk
    the judge graded is relevant (the "no chunk graded relevant" filter). A field whose value
    is its default (``LIST_DEFAULTS``, ``VERDICT_DEFAULTS``) is left out."""
    row = {key: item[key] for key in LIST_FIELDS}
    verdict = item["verdict"]
    if verdict is not None:
        match = verdict["match"]
        sentences = verdict["sentences"] or ()
        verdict = {
            "status": verdict["status"],
            "faithfulness": verdict["faithfulness"],
            "relevance": verdict["relevance"],
            "match": None if match is None else {"kind": match["kind"]},
            "unsupported": sum(1 for s in sentences if s["verdict"] == "unsupported"),
        }
        verdict = _without_defaults(verdict, VERDICT_DEFAULTS)
    correctness = item["correctness"]
    grades = item["chunk_grades"].values()
    row |= {
        "verdict": verdict,
        "correctness": None
        if correctness is None
        else {"status": correctness["status"], "score": correctness["score"]},
        "none_relevant": bool(grades)
        and not any(
            g["grade"] is not None and relevant_grade is not None and g["grade"] >= relevant_grade
            for g in grades
        ),
    }
    return _without_defaults(row, LIST_DEFAULTS)


def _without_defaults(row: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value for key, value in row.items() if key not in defaults or value != defaults[key]
    }


def worst_first(rows: list[dict[str, Any]], diagnoses: list[str]) -> list[int]:
    """The positions of the first ``PAGE`` list rows in the order the page opens in, worst
    first (the script's ``sorts.worst``): those that need review, then a diagnosis other than
    ok, then the lowest sum of scores (none at all first), the diagnoses' order, the position."""
    rank = {diagnosis: index for index, diagnosis in enumerate(diagnoses)}

    def key(position: int) -> tuple[bool, bool, int, int, int]:
        row = rows[position]
        verdict = row["verdict"]
        ok = verdict is not None and verdict["status"] == "ok"
        score = verdict["faithfulness"] + verdict["relevance"] if ok else -1
        diagnosis = row["diagnosis"]
        return (
            not row["needs_review"],
            diagnosis == "ok",
            score,
            rank.get(diagnosis, -1),
            position,
        )

    return heapq.nsmallest(PAGE, range(len(rows)), key=key)


def page_parts(
    data: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], list[Any], list[Any]]:
    """``page_data`` as the page carries it, in the order the page holds it:

    - the first screen: every field but the items and the chunk texts, and the first ``PAGE``
      items worst first (``first``, each its ``_list_row`` with its ``position``);
    - the list: ``items``, every item cut to its ``_list_row``, in golden-set order;
    - the items' details in blocks of ``ITEM_BLOCK`` (by position, each one what
      ``LIST_FIELDS`` leaves out);
    - the chunk texts in blocks of ``TEXT_BLOCK`` (by index, as the details name them)."""
    items, texts = data["items"], data["chunk_texts"]
    rows = [_list_row(item, data["relevant_grade"]) for item in items]
    first = {key: value for key, value in data.items() if key not in ("items", "chunk_texts")}
    first |= {
        "n_items": len(items),
        "page": PAGE,
        "item_block": ITEM_BLOCK,
        "text_block": TEXT_BLOCK,
        "first": [rows[p] | {"position": p} for p in worst_first(rows, data["diagnoses"])],
    }
    listed = {"items": rows}
    details = [
        [
            {key: value for key, value in item.items() if key not in LIST_FIELDS}
            for item in items[start : start + ITEM_BLOCK]
        ]
        for start in range(0, len(items), ITEM_BLOCK)
    ]
    text_blocks = [texts[start : start + TEXT_BLOCK] for start in range(0, len(texts), TEXT_BLOCK)]
    return first, listed, details, text_blocks


def data_blocks(listed: dict[str, Any], details: list[Any], texts: list[Any]) -> bytes:
    """The list, the details and the texts as ``<script type="application/json">`` blocks,
    after the page's script: the browser draws the first screen before it has read them."""
    parts = [
        b'<script type="application/json" id="report-data">%s</script>\n' % json_for_script(listed)
    ]
    parts += [
        b'<script type="application/json" id="report-items-%d">%s</script>\n'
        % (index, json_for_script(block))
        for index, block in enumerate(details)
    ]
    parts += [
        b'<script type="application/json" id="report-texts-%d">%s</script>\n'
        % (index, json_for_script(block))
        for index, block in enumerate(texts)
    ]
    return b"".join(parts)


def json_for_script(value: Any) -> bytes:
    """JSON (UTF-8) that cannot end the <script> element it sits in, whatever the strings
    contain.

    Encoded by pydantic-core (about twice as fast as ``json.dumps`` on a 10,000-question page,
    and a NaN becomes null, which the page's JSON.parse would otherwise refuse), and kept as the
    bytes it makes: the page's 16 MB of data are neither decoded nor encoded again."""
    return (
        pydantic_core.to_json(value)
        .replace(b"&", b"\\u0026")
        .replace(b"<", b"\\u003c")
        .replace(b">", b"\\u003e")
        .replace("\u2028".encode(), b"\\u2028")
        .replace("\u2029".encode(), b"\\u2029")
    )
