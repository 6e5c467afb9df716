"""Labelling in the terminal: blind, saved item by item, resumable."""

from collections.abc import Callable
from pathlib import Path

from judge.audit.terminal import label_in_terminal
from judge.config import Config
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels
from judge.record.store import ReportFolder


def _typed(*replies: str) -> Callable[[str], str]:
    """Keyboard input: the replies in order, then Ctrl-D (EOFError), as a terminal would."""
    queue = list(replies)

    def ask(prompt: str) -> str:
        if not queue:
            raise EOFError
        return queue.pop(0)

    return ask


def test_terminal_labelling_saves_each_item_and_resumes(
    labelled_setup: tuple[Config, str], tmp_path: Path
) -> None:
    config, _ = labelled_setup
    golden = load_golden(config.data)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    items = list(ReportFolder(folder).items().values())
    labels_path = tmp_path / "labels.jsonl"
    shown: list[str] = []
    ask = _typed("2", "2", "", "x", "1", "2", "too long", "q")
    saved = label_in_terminal(items, labels_path, golden.by_id(), "bo", ask, shown.append)
    assert saved == 2
    assert any("type 0, 1 or 2" in line for line in shown)
    assert not any("faithfulness 2" in line for line in shown)  # blind: no judge scores shown
    labels = load_labels(labels_path, golden.by_id()).current
    assert [(lab.question_id, lab.faithfulness, lab.relevance) for lab in labels] == [
        ("q1", 2, 2),
        ("q2", 1, 2),
    ]
    # Resume: the two labelled items are skipped.
    shown.clear()
    ask = _typed("0", "0", "wrong answer")  # then Ctrl-D on the next item
    assert label_in_terminal(items, labels_path, golden.by_id(), "bo", ask, shown.append) == 1
    assert shown[0] == "2 item(s) to label as 'bo' (2 already done)"


def test_s_at_the_correctness_prompt_keeps_the_scores_already_typed(
    labelled_setup: tuple[Config, str], tmp_path: Path
) -> None:
    config, _ = labelled_setup
    golden = load_golden(config.data)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    items = list(ReportFolder(folder).items().values())
    labels_path = tmp_path / "labels.jsonl"
    shown: list[str] = []
    asked: list[str] = []
    replies = _typed("2", "1", "s", "参照なし", "s", "q")

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return replies(prompt)

    first = items[0].question_id
    saved = label_in_terminal(
        items, labels_path, golden.by_id(), "bo", ask, shown.append, correctness={first}
    )
    assert saved == 1
    assert "correctness 0-2 (s skip correctness only, q quit): " in asked
    assert "  correctness skipped; faithfulness and relevance kept" in shown
    labels = load_labels(labels_path, golden.by_id()).current
    assert [
        (lab.question_id, lab.faithfulness, lab.relevance, lab.correctness, lab.note)
        for lab in labels
    ] == [(first, 2, 1, None, "参照なし")]
    # s at faithfulness still skips the whole item (the second was skipped, then q)
    assert asked[4] == "faithfulness 0-2 (s skip, q quit): "
