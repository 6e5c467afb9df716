"""``judge.report.markdown``: a prompt is shown by its file name and hash, never by the
machine's folders, in report.md and review.html alike (issue 22, item 4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from judge.config import Config
from judge.report.markdown import prompt_label, prompt_path
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def _folder(config: Config) -> str:
    return (config.reports.dir / "latest").read_text(encoding="utf-8").strip()


def test_prompt_paths_are_shown_without_the_machines_folders() -> None:
    sha = "ab" * 32
    assert prompt_path("/home/ana/project/prompts/judge.v1.md") == "judge.v1.md"
    assert prompt_path("prompts/judge.v1.md") == "prompts/judge.v1.md"
    assert prompt_label("/srv/x/prompts/judge.v1.md", sha) == f"judge.v1.md (sha256 {sha[:12]}…)"


def test_report_md_and_review_html_never_name_the_absolute_prompt_path(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    folder = config.reports.dir / _folder(config)
    absolute = str(config.judge.prompt)
    assert Path(absolute).is_absolute()
    report = (folder / "report.md").read_text(encoding="utf-8")
    page = (folder / "review.html").read_text(encoding="utf-8")
    assert absolute not in report
    assert absolute not in page
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    sha = manifest["judge"]["prompt_sha256"]
    assert f"- prompt: judge.v1.md (sha256 {sha[:12]}…) · fingerprint" in report
    assert f"prompt judge.v1.md (sha256 {sha[:12]}…)" in page
