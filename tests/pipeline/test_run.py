"""``judge.pipeline.run``: the CI files of a run, their folders made before the judging."""

from pathlib import Path

from judge.pipeline.run import ready_outputs, write_outputs


def test_outputs_get_their_folders_first_and_their_text_after(tmp_path: Path) -> None:
    junit, summary = tmp_path / "ci" / "gate.xml", tmp_path / "out" / "deep" / "s.json"
    ready_outputs([junit, None, summary])
    assert junit.parent.is_dir() and summary.parent.is_dir()
    assert not junit.exists() and not summary.exists()
    write_outputs({junit: "<x/>\n", summary: "{}\n"})
    assert junit.read_text(encoding="utf-8") == "<x/>\n"
    assert summary.read_text(encoding="utf-8") == "{}\n"
