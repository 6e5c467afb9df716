"""The per-type tables as text and Markdown: the weakest type marked, "all" last."""

from collections.abc import Callable

from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.runs import load_run
from judge.pipeline.inputs import measure_retrieval
from judge.report.text_tables import WEAKEST_MARK, render_markdown, render_text

Tiny = Callable[..., Config]


def test_rendered_tables_mark_the_weakest_and_end_with_all(tiny: Tiny) -> None:
    config = tiny()
    golden = load_golden(config.data)
    assert config.data.run is not None
    table = measure_retrieval(config, golden, load_run(config.data.run, golden), "run").retrieval
    text = render_text(table).splitlines()
    assert text[0].split()[:4] == ["type", "n", "excluded", "recall@5"]
    negative = next(line for line in text if line.startswith("negative"))
    assert negative.endswith(WEAKEST_MARK)
    assert text[-1].startswith("all")
    assert "–" in next(line for line in text if line.startswith("out_of_scope"))
    markdown = render_markdown(table).splitlines()
    assert markdown[-1].startswith("| **all** |")
    assert "◀ weakest" in markdown[4]
