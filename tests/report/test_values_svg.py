"""values.svg: per type, tonight beside the last compatible run, embedded first in report.md;
a changed embedder (here: its canaries under the same name) noted under it."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.report.values_svg import VALUES_SVG, picture_lines, values_svg
from tests.conftest import RUN

Tiny = Callable[..., Config]


def _run_with(**meta: Any) -> list[dict[str, Any]]:
    run = copy.deepcopy(RUN)
    run[0]["run_meta"].update(meta)
    return run


def test_the_first_run_has_no_picture(tiny: Tiny) -> None:
    result = evaluate(tiny(), backend="lexical")
    assert values_svg(result.report) is None and picture_lines(result.report) == []
    assert not (result.folder.path / VALUES_SVG).exists()
    assert f"]({VALUES_SVG})" not in (result.folder.path / "report.md").read_text(encoding="utf-8")


def test_tonight_beside_the_last_run_per_type(tiny: Tiny) -> None:
    config = tiny(run=_run_with(embedding_canaries=[[0.1, 0.2]]))
    evaluate(config, backend="lexical")
    tiny(run=_run_with(embedding_canaries=[[0.2, 0.1]]))
    result = evaluate(config, backend="lexical")
    svg = (result.folder.path / VALUES_SVG).read_text(encoding="utf-8")
    root = ET.fromstring(svg)  # well-formed XML, every text escaped
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    types = {r.type for r in result.report.questions}
    assert types <= set(texts)
    assert "faithfulness" in texts and "recall@5" in texts
    assert any("→" in t and ", n " in t for t in texts)
    report_md = (result.folder.path / "report.md").read_text(encoding="utf-8")
    picture = report_md.index(f"]({VALUES_SVG})")
    assert picture < report_md.index("## Per question type")  # before the tables
    note = report_md[picture:].splitlines()[1]
    assert note.startswith("- the embedding canary changed since the last compatible run (c:")
