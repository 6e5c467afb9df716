"""A generated season for the history page: 30 nights on two types, with a collapse on one night,
a fall over the season on three, an embedding change (same name, new canaries) and a judge-prompt
change. Shared by the browser tests, the terminal test and the screenshots in docs/history.md:

    .venv/bin/python -m tests.report.history_screens    # writes docs/history-{desktop,phone}.png
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from judge.inputs.runs import RunSettings
from judge.report.history_page import render_history_page
from judge.results.compare import QuestionValues
from judge.results.history import HistoryEntry
from judge.results.season_view import (
    MovedQuestion,
    NightInput,
    NightMark,
    NightMarks,
    SeasonView,
    build_season,
)
from tests.report.review_screens import (
    REPO,
    desktop_and_phone,
    open_file,
    write_screenshots,
)

NIGHTS = 30
COLLAPSE = 12
"""The night ``factual`` faithfulness collapses (every answer to 0, back the night after)."""
SEASON_FALL = (20, 21, 22)
"""The nights the season calls ``procedural`` recall@5's fall that stays."""
EMBEDDING_CHANGE = 8
"""The night the embedder's canaries change under the same name."""
PROMPT_CHANGE = 16
"""The night the judge's prompt changes."""
SCREENSHOTS = {
    "desktop": REPO / "docs" / "history-desktop.png",
    "phone": REPO / "docs" / "history-phone.png",
}
TYPES = {"factual": [f"f{i:02d}" for i in range(12)], "procedural": [f"p{i:02d}" for i in range(8)]}


def _values(night: int, rng: random.Random) -> QuestionValues:
    types = {qid: t for t, ids in TYPES.items() for qid in ids}
    recall: dict[str, float] = {}
    faith: dict[str, float] = {}
    ok: dict[str, float] = {}
    for qid, type_name in types.items():
        fell = type_name == "procedural" and night >= SEASON_FALL[0]
        recall[qid] = 0.0 if fell and qid in ("p00", "p01", "p02") else float(rng.random() < 0.85)
        collapsed = type_name == "factual" and night == COLLAPSE
        faith[qid] = 0.0 if collapsed else float(rng.choice((1, 2, 2, 2)))
        ok[qid] = 1.0
    return QuestionValues(
        types,
        {
            "retrieval": {"recall@5": recall},
            "judge": {"faithfulness": faith, "ok_share": ok},
        },
    )


def _marks(night: int) -> NightMarks:
    marks = []
    if night == COLLAPSE:
        moved = tuple(
            MovedQuestion(id=q, old=2.0, new=0.0, diagnosis="generation") for q in TYPES["factual"]
        )
        marks.append(
            NightMark(
                section="judge",
                type="factual",
                metric="faithfulness",
                decision="collapsed",
                delta=-1.7,
                low=-1.9,
                high=-1.5,
                n=12,
                moved=moved,
            )
        )
    if night in SEASON_FALL:
        moved = tuple(
            MovedQuestion(id=q, old=1.0, new=0.0, diagnosis="retrieval miss")
            for q in ("p00", "p01", "p02")
        )
        marks.append(
            NightMark(
                section="retrieval",
                type="procedural",
                metric="recall@5",
                decision="season",
                delta=-0.375,
                low=-0.5,
                high=-0.25,
                n=8,
                moved=moved,
            )
        )
    verdict = "REGRESSED: collapsed in factual" if night == COLLAPSE else "ok: no regression"
    return NightMarks(verdict=verdict, marks=tuple(marks))


def _entry(night: int) -> HistoryEntry:
    canaries = "c:aaaaaaaaaaaa" if night < EMBEDDING_CHANGE else "c:bbbbbbbbbbbb"
    prompt = "sha-one" if night < PROMPT_CHANGE else "sha-two"
    return HistoryEntry(
        folder=f"202611{night + 1:02d}T030000Z-abcdef12",
        started_at=f"2026-11-{night + 1:02d}T03:00:00+00:00",
        golden_hash="h1:golden",
        corpus_hash="h1:corpus",
        run_hash=f"h1:run{night}",
        retrieval_fingerprint="h1:retrieval",
        judge_fingerprint="h1:judge" + ("2" if night >= PROMPT_CHANGE else ""),
        judge_parts={"backend": "ollama", "model": "gemma3:27b", "prompt_sha256": prompt},
        metrics={},
        status_counts={"ok": 20},
        settings=RunSettings(
            embedding_model="multilingual-e5-small",
            embedding_version="2024-02",
            embedding_dimension=384,
            embedding_canary=canaries,
        ),
    )


def season_nights(seed: int = 7) -> list[NightInput]:
    """The generated season's nights, oldest first."""
    rng = random.Random(seed)
    return [NightInput(_entry(n), None, _values(n, rng), _marks(n)) for n in range(NIGHTS)]


def season() -> SeasonView:
    return build_season(season_nights())


def write_page(folder: Path) -> Path:
    """The generated season's history.html in ``folder``."""
    path = folder / "history.html"
    path.write_bytes(render_history_page(season(), "reports"))
    return path


#: What history.html shows once it is drawn (``open_file``'s ``ready``).
READY = "figure.chart"


def open_page(browser: Any, path: Path, viewport: dict[str, int]) -> tuple[Any, list[str]]:
    """``path`` at ``viewport``, and the console errors and warnings it logs."""
    return open_file(browser, path, viewport, READY)


def take_screenshots(browser: Any, path: Path, out: dict[str, Path]) -> None:
    """The desktop page with the collapse's point opened, and the phone page as it opens."""

    def open_collapse(page: Any) -> None:
        page.click(
            f'figure[data-type="factual"][data-metric="judge:faithfulness"] '
            f'g.pt[data-night="{COLLAPSE}"]'
        )
        page.evaluate("window.scrollTo(0, 0)")

    desktop_and_phone(browser, path, READY, out, open_collapse)


def main() -> int:
    return write_screenshots(write_page, take_screenshots, SCREENSHOTS)


if __name__ == "__main__":
    sys.exit(main())
