"""The review page of the shipped sample, judged by the lexical baseline, in headless Chromium:
shared by the browser tests and by the screenshots in ``docs/review.md``.

    .venv/bin/python -m tests.report.review_screens      # writes docs/review-{desktop,phone}.png

The screenshots need a Japanese font for the sample's text (Debian: ``apt-get install
fonts-ipafont-gothic`` or ``fonts-noto-cjk``); without one Chromium draws boxes.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from judge.config import Config, load_config
from judge.pipeline.evaluate import evaluate

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: The two sizes the page is checked and shown at: a laptop, and a phone (an iPhone 12-15's CSS
#: pixels), where the sticky header may take at most a fifth of the height.
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = {
    "desktop": REPO / "docs" / "review-desktop.png",
    "phone": REPO / "docs" / "review-phone.png",
}


def sample_config(tmp: Path) -> Config:
    """The shipped sample (judge.toml at the repository root), with its reports and verdict
    cache under ``tmp`` so that nothing of the work tree changes."""
    config = load_config(REPO / "judge.toml")
    return config.with_overrides(
        judge={"cache_path": tmp / "cache.sqlite3"}, reports={"dir": tmp / "reports"}
    )


def sample_review(tmp: Path) -> Path:
    """The report folder of the shipped sample judged by the lexical baseline."""
    return evaluate(sample_config(tmp), backend="lexical").folder.path


@contextmanager
def chromium(sync_api: Any) -> Iterator[Any]:
    """Headless Chromium (Debian's ``chromium``), driven by Playwright."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield browser
        finally:
            browser.close()


def open_file(
    browser: Any, path: Path, viewport: dict[str, int], ready: str
) -> tuple[Any, list[str]]:
    """The page ``path`` at ``viewport`` once ``ready`` (a selector) is in it, and the console
    errors and warnings it logs."""
    context = browser.new_context(viewport=viewport, device_scale_factor=1)
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_selector(ready)
    return page, problems


def open_page(browser: Any, folder: Path, viewport: dict[str, int]) -> tuple[Any, list[str]]:
    """``folder``'s review.html at ``viewport``, and the console errors and warnings it logs."""
    return open_file(browser, folder / "review.html", viewport, "section.item")


def header_height(page: Any) -> float:
    return float(page.evaluate("document.querySelector('header').getBoundingClientRect().height"))


def take_screenshots(browser: Any, folder: Path, out: dict[str, Path]) -> None:
    """The desktop page with its worst item open (reference, judge, chunks, raw reply), and the
    phone page as it opens (the list, worst first)."""

    def open_worst(page: Any) -> None:
        page.click("section.item .row")
        page.click("section.item details.raw summary")
        # The open item from its top, just below the sticky header.
        page.evaluate(
            "window.scrollTo(0, document.querySelector('section.item').offsetTop"
            " - document.querySelector('header').offsetHeight - 8)"
        )

    desktop_and_phone(browser, folder / "review.html", "section.item", out, open_worst)


def desktop_and_phone(
    browser: Any, path: Path, ready: str, out: dict[str, Path], prepare: Callable[[Any], None]
) -> None:
    """``out["desktop"]``: the page ``path`` at the desktop size once ``prepare`` has acted on
    it; ``out["phone"]``: at the phone's size as it opens (``ready``: ``open_file``'s)."""
    page, _ = open_file(browser, path, DESKTOP, ready)
    prepare(page)
    page.screenshot(path=str(out["desktop"]), full_page=False)
    page.context.close()
    page, _ = open_file(browser, path, PHONE, ready)
    page.screenshot(path=str(out["phone"]), full_page=False)
    page.context.close()


def write_screenshots(
    write: Callable[[Path], Path],
    take: Callable[[Any, Path, dict[str, Path]], None],
    shots: dict[str, Path],
) -> int:
    """A screenshot script's ``main``: the page ``write`` makes in a temporary folder, shot by
    ``take`` into ``shots`` (1 and a line on stderr without chromium)."""
    from playwright import sync_api

    if CHROMIUM is None:
        print("chromium not installed (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp, chromium(sync_api) as browser:
        take(browser, write(Path(tmp)), shots)
    for path in shots.values():
        print(f"wrote {path.relative_to(REPO)}")
    return 0


def main() -> int:
    return write_screenshots(sample_review, take_screenshots, SCREENSHOTS)


if __name__ == "__main__":
    sys.exit(main())
