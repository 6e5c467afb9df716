"""Labelling in the terminal: blind, one item at a time, saved after each, resumable.

For a run that judged correctness, an item the judge gave a correctness verdict also shows its
reference answer and asks for ``correctness`` (0-2) after relevance; other items are asked the
two axes only, as before."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path

from judge.audit.agreement import AXES
from judge.formatting import terminal_text
from judge.hashing import text_sha256
from judge.inputs.golden import GoldenQuestion
from judge.inputs.labels import HumanLabel, load_labels_if_any
from judge.io.lock import locked
from judge.io.write import append_line
from judge.results.item_record import ItemRecord


def label_in_terminal(
    items: list[ItemRecord],
    labels_path: Path,
    questions: dict[str, GoldenQuestion],
    labeller: str,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    correctness: Collection[str] = (),
) -> int:
    """Ask for scores item by item (blind: no judge output shown); save after each, appended
    under the labels file's lock (``judge.io.lock.locked``), held only for that append.

    Items this labeller already labelled for the same answer text are skipped, so stopping
    (q, Ctrl-D) and starting again resumes where it stopped. Returns the labels saved.
    Questions, chunks and answers are shown through ``terminal_text`` (they are data).
    ``correctness``: the question ids with a correctness verdict (empty: the run did not
    judge correctness), asked for correctness too, against their reference answer.
    """

    def word(text: object) -> str:
        return terminal_text(text, one_line=True)

    loaded = load_labels_if_any(labels_path, questions)
    if loaded.warning():
        say(f"warning: {word(loaded.warning())}")
    existing = loaded.current
    done = {(lab.question_id, lab.answer_sha256) for lab in existing if lab.labeller == labeller}
    todo = [i for i in items if (i.question_id, text_sha256(i.answer)) not in done]
    say(
        f"{len(todo)} item(s) to label as '{word(labeller)}' "
        f"({len(items) - len(todo)} already done)"
    )
    saved = 0
    for number, item in enumerate(todo, start=1):
        say(f"\n[{number}/{len(todo)}] {word(item.question_id)} · {word(item.type)}")
        axes = _show(item, correctness, say)
        label = _ask_label(item, axes, labeller, ask, say)
        if label == "q":
            break
        if label == "s":
            continue
        assert isinstance(label, HumanLabel)
        # Under the file's lock, one label at a time: an import meanwhile (which re-reads,
        # merges and replaces the file under the same lock) neither waits for the session nor
        # loses a label, and this line never lands in a file being replaced.
        with locked(labels_path):
            append_line(labels_path, label.model_dump_json(exclude_none=True) + "\n")
        saved += 1
    say(f"saved {saved} label(s) to {word(labels_path)}")
    return saved


def _show(
    item: ItemRecord, correctness: Collection[str], say: Callable[[str], None]
) -> tuple[str, ...]:
    """Show the item as the labeller judges it (question, chunks, answer; the reference answer
    when correctness is asked too) and return the axes to ask for."""
    say(f"question: {terminal_text(item.question)}")
    for chunk in item.context:
        word = terminal_text(chunk.chunk_id, one_line=True)
        say(f"  #{chunk.rank} {word}\n  {terminal_text(chunk.text)}")
    say(f"answer: {terminal_text(item.answer)}")
    if item.question_id not in correctness:
        return AXES
    reference = item.reference_answer or "(none: a correct answer refuses)"
    say(f"reference answer: {terminal_text(reference)}")
    return (*AXES, "correctness")


def _ask_label(
    item: ItemRecord,
    axes: tuple[str, ...],
    labeller: str,
    ask: Callable[[str], str],
    say: Callable[[str], None],
) -> HumanLabel | str:
    """The label of one item, asked axis by axis, then a note; or ``"s"`` (skipped) or ``"q"``
    (quit, or the end of input: Ctrl-D). ``s`` at the correctness prompt skips correctness
    only: the faithfulness and relevance already typed are kept (a label without
    correctness), not thrown away with the item."""
    scores: list[int] = []
    try:
        for axis in axes:
            reply = _ask_score(axis, ask, say)
            if reply == "s" and axis == "correctness":
                say("  correctness skipped; faithfulness and relevance kept")
                break
            if reply in ("s", "q"):
                return reply
            scores.append(int(reply))
        note = ask("note (optional): ").strip()
    except EOFError:
        return "q"
    return HumanLabel(
        question_id=item.question_id,
        answer_sha256=text_sha256(item.answer),
        faithfulness=scores[0],
        relevance=scores[1],
        correctness=scores[2] if len(scores) > 2 else None,
        labeller=labeller,
        note=note,
        labelled_at=datetime.now(UTC),
        source="terminal",
    )


def _ask_score(axis: str, ask: Callable[[str], str], say: Callable[[str], None]) -> str:
    """A score of one axis (``0``, ``1``, ``2``), or ``s`` or ``q``: asked again until it is."""
    while True:
        skip = "s skip correctness only" if axis == "correctness" else "s skip"
        reply = ask(f"{axis} 0-2 ({skip}, q quit): ").strip().lower()
        if reply in ("0", "1", "2", "s", "q"):
            return reply
        say("  type 0, 1 or 2 (or s, q)")
