"""``judge panel`` with real members (slow): the embedded Gemma 3 270M, the same model behind
the loopback llama.cpp server (an OpenAI-compatible backend, a second real backend) and the
lexical baseline, on the English sample's first labelled answers. Every member's verdicts are
cached under its own fingerprint (a second panel asks nothing), every vote says how many voted,
and the next run's report.md shows the panel. The 270M is a base model: no agreement figure is
asserted."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import load_config
from judge.judging.grading import JudgeProgress
from judge.pipeline.panel import panel
from tests.judging.backends.conftest import LLAMA_SERVER_MODEL, llama_server  # noqa: F401
from tests.pipeline.test_align_embedded import _cut

pytestmark = pytest.mark.slow

MEMBERS = ["embedded", "openai", "lexical"]
#: Answers judged: each takes the 270M one to two minutes on this shared 2-core machine.
ANSWERS = 2


def _config(tmp_path: Path, base_url: str) -> Path:
    toml = _cut(tmp_path)
    text = toml.read_text(encoding="utf-8").replace(
        "[reports]",
        (
            f"[judge.panel]\nmembers = {json.dumps(MEMBERS)}\n\n[judge.openai]\n"
            f'base_url = "{base_url}"\nmodel = "{LLAMA_SERVER_MODEL}"\n'
            'response_format = "json_object"\nmax_tokens = 160\n\n[reports]'
        ),
    )
    toml.write_text(text, encoding="utf-8")
    return toml


def test_a_real_panel_caches_each_member_and_marks_its_votes(
    llama_server: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("tests.pipeline.test_align_embedded.ANSWERS", ANSWERS)
    config = load_config(_config(tmp_path, llama_server))
    paneled = panel(config)
    assert paneled.members == tuple(MEMBERS)
    assert not any(j.startswith("not available") for j in paneled.judges.values()), paneled
    assert len(paneled.votes) == ANSWERS
    for vote in paneled.votes:
        voted = [s for s in vote.by_member.values() if s is not None]
        assert vote.members == 3 and vote.voters == len(voted)
        assert (f"{vote.voters} of 3 voted" in vote.flags) == (vote.voters < 3)
        assert vote.voters == 0 or vote.scores is not None
    with sqlite3.connect(config.judge.cache_path) as db:
        judged = db.execute("SELECT COUNT(DISTINCT fingerprint) FROM replies").fetchone()[0]
    assert judged >= 2  # the two model members at least, each under its own fingerprint
    progress: list[JudgeProgress] = []
    again = panel(config, on_judging=progress.append)
    finished = [p for p in progress if p.done == p.total]
    assert sum(p.cached == p.total for p in finished) >= 2  # nothing asked again
    assert [v.by_member for v in again.votes] == [v.by_member for v in paneled.votes]
    # The next run of the same answers shows the panel in report.md.
    assert config.source is not None
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 0
    folder = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    report = (config.reports.dir / folder / "report.md").read_text(encoding="utf-8")
    assert "A panel of 3 judges (embedded, openai, lexical;" in report
