"""``judge golden propose``: candidate golden questions from real questions or drafted from the
corpus, verified, written to a candidates file (never into the golden set; docs/golden.md).

The chunks are graded, and the system's answers judged (weak: faithfulness or relevance below
2), by the judge's tasks when chunk grades are on (``judge.chunks.enabled``: the configured
backend and prompts), else by the lexical judge's rules;
the drafts are asked of the configured judge (``--backend`` overrides it) with the draft task's
prompt. Every reply goes through the verdict cache like any judgement.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.errors import ConfigError
from judge.inputs.candidates import (
    Candidate,
    UserQuestion,
    read_question_log,
    read_run_records,
    rejection_counts,
    save_candidates,
)
from judge.inputs.golden import GoldenQuestion, GoldenSet
from judge.inputs.golden_add import growing_golden
from judge.inputs.runs import RunRecord
from judge.judging.backends.base import JudgeBackend
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.backends.registry import open_backend
from judge.judging.cache import VerdictCache
from judge.judging.items import JudgeItem, context_for, item_key
from judge.judging.judge import Judge
from judge.judging.prompts import load_prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.chunk import CHUNK, ChunkItem, CorpusWeights, chunk_key
from judge.judging.tasks.draft import DRAFT, DraftResult, build_draft_items
from judge.judging.tasks.registry import load_task_prompt
from judge.results.candidates import LEXICAL_ANSWERS, Grades, LexicalIndex, grade_pairs, verify
from judge.results.chunk_grades import RELEVANT_GRADE
from judge.results.propose import candidate_id, from_questions


class Proposed(NamedTuple):
    """What ``propose`` wrote: the file, its candidates (rank order), and how they were judged."""

    path: Path
    candidates: tuple[Candidate, ...]
    graded_by: str
    """The judge of the chunk grades (``lexical rule``, or the backend's description)."""
    drafted_by: str = ""
    elapsed_s: float = 0.0
    """Seconds the drafting took (``--from-corpus``)."""

    @property
    def passed(self) -> int:
        return sum(not c.rejected for c in self.candidates)

    def rejected_by(self) -> dict[str, int]:
        """How many each check rejected."""
        return dict(sorted(rejection_counts(self.candidates).items()))


def _grader(config: Config, given: JudgeBackend | None) -> tuple[JudgeBackend, bool]:
    """The backend grading chunks, and whether it is ours to close."""
    if not config.judge.chunks.enabled:
        return LexicalBackend(config.judge.lexical.refusal_phrases), True
    if given is not None:
        return given, False
    return open_backend(config.judge).backend, True


def task_prompt_path(config: Config, path: Path) -> Path:
    """A task's prompt file: as configured, else the file of that name beside the answer's
    prompt (a configuration in a sub-folder points at the shipped prompts that way)."""
    beside = config.judge.prompt.parent / path.name
    return path if path.is_file() or not beside.is_file() else beside


def grade(
    config: Config, pairs: Sequence[tuple[str, str]], golden: GoldenSet, backend: JudgeBackend
) -> Grades:
    """The grade 0-3 of each (question, chunk id), asked through the cache; a grade that did
    not read is left out (never a silent 0)."""
    # The corpus's token weights, as a run's chunk grades have them (the lexical rule's grades
    # are tuned for weighted shares: without them a word in every chunk would count).
    weights = CorpusWeights([chunk.text for chunk in golden.corpus.values()])
    items = [
        ChunkItem(
            f"p{n}",
            q,
            cid,
            1,
            golden.corpus[cid].text,
            chunk_key(q, cid, golden.corpus[cid].text),
            weights,
        )
        for n, (q, cid) in enumerate(pairs)
        if cid in golden.corpus
    ]
    prompt = load_task_prompt(task_prompt_path(config, config.judge.chunks.prompt), CHUNK)
    judge = Judge(backend, VerdictCache(config.judge.cache_path), config.judge.concurrency)
    outcome = judge.run(CHUNK, prompt, items)
    by_id = {item.question_id: item for item in items}
    return {
        (by_id[r.question_id].question, by_id[r.question_id].chunk_id): r.grade
        for r in outcome.results
        if r.grade is not None
    }


def _finish(
    config: Config,
    golden: GoldenSet,
    candidates: list[Candidate],
    grades: dict[tuple[str, str], int],
    backend: JudgeBackend,
) -> list[Candidate]:
    """Grade what verification needs that is not graded yet, then verify."""
    data = config.data
    pairs = grade_pairs(candidates, LexicalIndex(golden.corpus), data.out_of_scope_types)
    grades.update(grade(config, [p for p in pairs if p not in grades], golden, backend))
    return verify(
        candidates,
        golden.corpus,
        golden.questions,
        grades,
        data.question_types,
        data.out_of_scope_types,
        LEXICAL_ANSWERS if backend.identity.kind == "lexical" else RELEVANT_GRADE,
    )


def weak_answers(
    config: Config,
    questions: Sequence[UserQuestion],
    records: dict[str, RunRecord],
    golden: GoldenSet,
    backend: JudgeBackend,
) -> set[str]:
    """The ids of the answers the judge (``backend``, with the answer's prompt) finds weak:
    faithfulness or relevance below 2, judged on the top ``context_k`` chunks like a run's."""
    items = []
    for user in questions:
        record = records.get(user.id)
        if record is None:
            continue
        question = GoldenQuestion(
            id=user.id,
            type="factual",
            question=user.question,
            relevant_chunks=None,
            answerable=True,
        )
        context = context_for(record, golden.corpus, config.retrieval.context_k)
        items.append(
            JudgeItem(question, record, context, item_key(user.question, context, record.answer))
        )
    if not items:
        return set()
    judge = Judge(backend, VerdictCache(config.judge.cache_path), config.judge.concurrency)
    outcome = judge.run(ANSWER, load_prompt(config.judge.prompt), items)
    return {
        v.question_id
        for v in outcome.results
        if v.status == "ok" and min(v.faithfulness or 0, v.relevance or 0) < 2
    }


def _records(
    config: Config, questions: list[UserQuestion], golden: GoldenSet, run: Path | None
) -> dict[str, RunRecord]:
    """The system's answers to the questions: a run file's, else none (the adapter is not
    asked: a run of the log is made with ``judge run`` on it first)."""
    if run is None:
        return {}
    ids = {q.id for q in questions}
    return read_run_records(run, ids, golden.corpus, config.data.max_file_mb)


def propose_from_questions(
    config: Config,
    log: Path,
    out: Path,
    *,
    run: Path | None = None,
    backend: JudgeBackend | None = None,
    guess_types: bool = False,
) -> Proposed:
    """Candidates from the questions of ``log`` that the golden set does not cover, ranked by
    what they add, the run's (``run``) chunks graded relevant proposed as their chunks.
    ``guess_types``: every type guessed, the file's ignored (an import's default type)."""
    golden = growing_golden(config.data)
    questions = read_question_log(log, config.data.max_file_mb)
    if guess_types:
        questions = [q._replace(type=None) for q in questions]
    records = _records(config, questions, golden, run)
    depth = config.judge.chunks.depth or config.retrieval.context_k
    grader, owned = _grader(config, backend)
    try:
        pairs = [
            (q.question, item.chunk_id)
            for q in questions
            if q.id in records and config.judge.chunks.enabled
            for item in records[q.id].retrieved[:depth]
        ]
        grades = dict(grade(config, pairs, golden, grader))
        refusals = config.judge.lexical.refusal_phrases or LexicalBackend().refusal_phrases
        candidates = from_questions(
            questions,
            records,
            weak_answers(config, questions, records, golden, grader),
            grades if config.judge.chunks.enabled else None,
            golden.questions,
            golden.corpus,
            depth,
            config.data.out_of_scope_types,
            refusals,
        )
        verified = _finish(config, golden, candidates, grades, grader)
    finally:
        if owned:
            grader.close()
    save_candidates(out, verified)
    return Proposed(out, tuple(verified), _named(grader))


def draft_candidate(result: DraftResult, out_of_scope: Sequence[str]) -> Candidate:
    """The candidate of one draft: its kind, its chunk (none when out of scope) and span; a
    reply that did not read is rejected with its error."""
    unanswerable = result.kind in out_of_scope
    question = result.question.strip() or f"(no question: {result.question_id})"
    return Candidate(
        candidate_id=candidate_id("corpus", f"{result.question_id} {result.chunk_id}", question),
        type=result.kind,
        question=question,
        relevant_chunks=() if unanswerable else (result.chunk_id,),
        answerable=not unanswerable,
        answer_span=result.answer_span,
        source="corpus",
        source_id=result.chunk_id,
        tags=(result.chunk_id.split("/")[0],),
        rejected=()
        if result.status == "ok"
        else (f"unread: {result.status} {result.error or ''}".strip(),),
    )


def propose_from_corpus(
    config: Config, out: Path, *, count: int = 30, backend: JudgeBackend | None = None
) -> Proposed:
    """``count`` questions drafted from the corpus by the judge, in the article's mix, verified."""
    if count < 1:
        raise ConfigError(f"--count {count}: ask for 1 or more questions")
    golden = growing_golden(config.data)
    items = build_draft_items(golden.corpus, count)
    settings = DRAFT.settings(config)
    prompt = load_task_prompt(task_prompt_path(config, settings.prompt), DRAFT)
    drafter = backend if backend is not None else open_backend(config.judge).backend
    try:
        judge = Judge(drafter, VerdictCache(config.judge.cache_path), config.judge.concurrency)
        outcome = judge.run(DRAFT, prompt, items)
        out_of_scope = config.data.out_of_scope_types
        candidates = [draft_candidate(r, out_of_scope) for r in outcome.results]
        grader, owned = _grader(config, drafter)
        try:
            verified = _finish(config, golden, candidates, {}, grader)
        finally:
            if owned and grader is not drafter:
                grader.close()
    finally:
        if backend is None:
            drafter.close()
    save_candidates(out, verified)
    return Proposed(out, tuple(verified), _named(grader), _named(drafter), outcome.elapsed_s)


def _named(backend: JudgeBackend) -> str:
    return f"{backend.identity.kind} · {backend.identity.model}"
