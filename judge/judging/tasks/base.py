"""What a judgement is: a ``TaskDef`` (the idea of inspect_ai's ``Task``), run by the one
``judge.judging.judge.Judge``.

A task is everything that makes one kind of judgement: its name, its prompt (the placeholders
it needs, the setting naming its file, the file shipped), its reply schema and the fingerprint
its replies are cached under, the items it asks about (built from the golden set, the run and
the configuration, each with a cache ``key`` and a ``question_id``), the request of one item,
the result of one reply (derived anew from the cached reply every time it is used, so a parser
fix applies to old replies), and how its results enter the record (per question: the answer's
verdict, a chunk task's grades in rank order, ...). The model-free baseline's rule for the task
travels with each request (``JudgeRequest.baseline``); its version is in the fingerprint.

Adding a judgement is one task module (``judge.judging.tasks.<name>``, defining one
``TaskDef`` named ``<name>``, which ``judge.judging.tasks.registry`` finds) and its prompt
file; its settings are ``[judge.tasks.<name>]``
(``enabled``, ``prompt``) unless it declares a table of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from judge.config import Config
from judge.hashing import tagged_hash
from judge.inputs.golden import GoldenSet
from judge.inputs.runs import Run
from judge.judging.backends.base import BackendIdentity, JudgeRequest
from judge.judging.grading import Fingerprint, Keyed, Read, task_fingerprint
from judge.judging.prompts import Prompt, TaskPrompt
from judge.judging.types import Status
from judge.judging.verdict import Reply


class HasStatus(Protocol):
    """A task's result for one item: its question and the status its reply was read with."""

    @property
    def question_id(self) -> str: ...
    @property
    def status(self) -> Status: ...


ItemT = TypeVar("ItemT", bound=Keyed)
ResultT = TypeVar("ResultT", bound=HasStatus)
RowT = TypeVar("RowT")


class TaskSettings(NamedTuple):
    """Whether a task is on in a configuration, and its prompt file."""

    enabled: bool
    prompt: Path


@dataclass(frozen=True)
class TaskDef(Generic[ItemT, ResultT, RowT]):
    """One kind of judgement (module docstring). ``RowT``: what one question holds of it in
    the record (``per_question``)."""

    name: str
    table: str
    """Its configuration table: ``judge.chunks``, or ``judge.tasks.<name>`` for a task of the
    generic table (``table_settings``)."""
    prompt: TaskPrompt
    """The placeholders its prompt needs, the setting naming the file, the file shipped."""
    settings: Callable[[Config], TaskSettings]
    items: Callable[[GoldenSet, Run, Config], list[ItemT]]
    """The items of a run, in golden order, each with its key and question id."""
    request: Callable[[Prompt, ItemT], JudgeRequest]
    parse: Callable[[ItemT, Reply, bool, Mapping[str, Any]], ResultT]
    """The result of one reply (``item, reply, cached, fingerprint parts``): anything short of
    a complete, valid reply is a non-ok status (``grading.read_payload``)."""
    fingerprint: Callable[[BackendIdentity, Prompt], Fingerprint]
    per_question: Callable[[Sequence[ResultT]], dict[str, RowT]]
    """The results as the record keeps them, per question id."""
    as_then: Callable[[RowT, RowT], RowT]
    """``(rederived, saved)``: a re-derived result marked cached as it was in the run."""
    describe: Callable[[Sequence[ItemT], Config], str]
    """What it judges, in words (announced before a run, counted by ``judge check``)."""
    progress: Callable[[Sequence[ItemT], Mapping[str, RowT]], str]
    """How far an interrupted run got: "3 of 10 chunks graded"."""
    all_done: str
    """What an interruption of a later task says of this one: "every chunk graded"."""
    row_field: str = "judgements"
    """The record row's field that holds its ``per_question`` value (``chunk_grades``), or
    ``judgements``: then the row keeps it by task name, and the results are
    ``judge.judging.types.TaskJudgement`` (its ``score``), per question a tuple in item order
    (``in_item_order``)."""

    def ok(self, result: ResultT) -> bool:
        """Whether a result stands (a cached one that is not ok is asked again when failed
        ones are re-judged)."""
        return result.status == "ok"

    def unique_keys(self, items: Sequence[ItemT]) -> list[str]:
        """The keys of ``items``, once each: one call per key."""
        return list(dict.fromkeys(item.key for item in items))


#: A task of any items and results (what the registry holds).
AnyTask = TaskDef[Any, Any, Any]


def task_key(task: str, **seen: object) -> str:
    """The cache key of one item: a hash of the task and everything the judge sees."""
    return tagged_hash({"task": task, **seen}, 32)


def rule_version(identity: BackendIdentity, version: str) -> str | None:
    """The model-free baseline's rule version for a task (in its fingerprint), None for a
    model."""
    return version if identity.kind == "lexical" else None


def payload_fingerprint(
    schema: Callable[[], dict[str, Any]], schema_version: int, lexical_rules: str
) -> Callable[[BackendIdentity, Prompt], Fingerprint]:
    """The fingerprint of a task whose replies are one payload model
    (``grading.task_fingerprint``: backend, model, prompt, task, schema and its version, and
    the baseline's rule version for the lexical judge)."""

    def fingerprint(identity: BackendIdentity, prompt: Prompt) -> Fingerprint:
        rules = rule_version(identity, lexical_rules)
        return task_fingerprint(identity, prompt, schema(), schema_version, rules)

    return fingerprint


def table_settings(name: str, shipped: Path) -> Callable[[Config], TaskSettings]:
    """A task's settings from its ``[judge.tasks.<name>]`` table (off when there is none)."""

    def settings(config: Config) -> TaskSettings:
        table = config.judge.tasks.get(name)
        if table is None:
            return TaskSettings(False, shipped)
        return TaskSettings(table.enabled, table.prompt or shipped)

    return settings


def by_question(results: Sequence[ResultT]) -> dict[str, ResultT]:
    """One result per question id (a task of one item per question)."""
    return {result.question_id: result for result in results}


def cached_as_then(rederived: Any, saved: Any) -> Any:
    """A re-derived result, marked cached as the saved one was in the run."""
    return rederived.model_copy(update={"cached": saved.cached})


def in_item_order(results: Sequence[ResultT]) -> dict[str, tuple[ResultT, ...]]:
    """Per question id, its results in item order (a task kept in ``judgements``)."""
    out: dict[str, list[ResultT]] = {}
    for result in results:
        out.setdefault(result.question_id, []).append(result)
    return {qid: tuple(found) for qid, found in out.items()}


def each_as_then(rederived: tuple[Any, ...], saved: tuple[Any, ...]) -> tuple[Any, ...]:
    """Re-derived results, each marked cached as it was in the run (by item key)."""
    before = {result.item_key: result.cached for result in saved}
    return tuple(
        r.model_copy(update={"cached": before[r.item_key]}) if r.item_key in before else r
        for r in rederived
    )


def reply_fields(read: Read, reply: Reply, cached: bool, reason: str) -> dict[str, Any]:
    """What every task's result keeps of its reply, beside its own score: the status it was
    read with and why not ok, the reason the judge gave, the reply's text and cost, and whether
    it came from the cache (``judge.judging.types``: the judgement's common fields)."""
    return {
        "status": read.status,
        "reason": reason,
        "error": read.error,
        "raw_reply": reply.text,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "latency_s": reply.latency_s,
        "cached": cached,
    }
