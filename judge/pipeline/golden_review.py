"""``judge golden review CANDIDATES.jsonl``: a person decides, in the terminal, one candidate at
a time (like ``judge audit label``): each candidate that passed verification and is not decided
yet is shown with what it adds, its chunk and the answer span marked in it, and is accepted,
rejected or skipped. The decision is saved in the candidates file after each (whole and
atomically, under the file's lock), so stopping (q, Ctrl-D) and starting again resumes.
``judge golden accept`` then adds the accepted ones to the golden set.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.formatting import terminal_text
from judge.inputs.candidates import Candidate, ReviewDecision, load_candidates, save_candidates
from judge.inputs.golden import Chunk, load_corpus
from judge.io.lock import locked
from judge.judging.evidence import verify_quote
from judge.judging.types import ContextChunk

_REPLIES: dict[str, ReviewDecision | str] = {"a": "accept", "r": "reject", "s": "s", "q": "q"}


class Reviewed(NamedTuple):
    """What a review session did, and where the file stands."""

    accepted: int
    rejected: int
    left: int
    """Candidates that passed verification still undecided."""


def marked(chunk: Chunk, span: str) -> str:
    """The chunk's text with the span (found as the quote checker finds it) in «»."""
    match = verify_quote(span, [ContextChunk(1, chunk.chunk_id, chunk.text)])
    if match.start is None or match.end is None or match.kind not in ("exact", "normalised"):
        return chunk.text
    text = chunk.text
    return f"{text[: match.start]}«{text[match.start : match.end]}»{text[match.end :]}"


def show(c: Candidate, corpus: dict[str, Chunk], say: Callable[[str], None]) -> None:
    """One candidate as a person decides on it."""
    say(f"question: {terminal_text(c.question)}")
    for why in c.adds:
        say(f"  adds: {terminal_text(why, one_line=True)}")
    chunks = c.relevant_chunks
    if chunks is None:
        say("chunks: none proposed (it would be added unlabelled: relevant_chunks null)")
    elif not chunks:
        say("chunks: none (out of scope: the corpus does not answer it)")
    for cid in chunks or ():
        chunk = corpus.get(cid)
        text = (
            marked(chunk, c.answer_span)
            if chunk and c.answer_span
            else (chunk.text if chunk else "")
        )
        say(f"  {terminal_text(cid, one_line=True)}\n  {terminal_text(text)}")


def review_in_terminal(
    config: Config,
    path: Path,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> Reviewed:
    """Ask for a decision on each verified, undecided candidate of ``path``; save after each."""
    corpus = load_corpus(config.data.corpus, config.data.max_file_mb)
    candidates = load_candidates(path, config.data.max_file_mb)
    todo = [n for n, c in enumerate(candidates) if not c.rejected and c.decision is None]
    failed = sum(bool(c.rejected) for c in candidates)
    say(f"{len(todo)} candidate(s) to decide ({failed} rejected by the checks, not shown)")
    counts = {"accept": 0, "reject": 0}
    for number, index in enumerate(todo, start=1):
        c = candidates[index]
        kind = terminal_text(c.type, one_line=True)
        say(f"\n[{number}/{len(todo)}] {c.candidate_id} · {kind} · from {c.source}")
        show(c, corpus, say)
        reply = _ask(ask, say)
        if reply == "q":
            break
        if reply == "s":
            continue
        assert reply in counts
        with locked(path, doing="reviewing"):
            current = load_candidates(path, config.data.max_file_mb)
            current = [
                x.model_copy(update={"decision": reply}) if x.candidate_id == c.candidate_id else x
                for x in current
            ]
            save_candidates(path, current)
        candidates[index] = c.model_copy(update={"decision": reply})
        counts[reply] += 1
    left = sum(not c.rejected and c.decision is None for c in candidates)
    return Reviewed(counts["accept"], counts["reject"], left)


def _ask(ask: Callable[[str], str], say: Callable[[str], None]) -> str:
    """``accept``, ``reject``, ``s`` or ``q`` (the end of input is ``q``), asked until it is."""
    while True:
        try:
            reply = ask("a accept, r reject (s skip, q quit): ").strip().lower()
        except EOFError:
            return "q"
        if reply in _REPLIES:
            return _REPLIES[reply]
        say("  type a or r (or s, q)")
