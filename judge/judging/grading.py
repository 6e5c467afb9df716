"""The asking loop every judgement runs through: items → cache → backend (with retries) →
replies, under a fingerprint (``judge.judging.judge.Judge`` runs it for each task of
``judge.judging.tasks``), and the fingerprints and reading rules the tasks share.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from queue import Empty, SimpleQueue
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_when_event_set,
    wait_exponential_jitter,
)
from tenacity.wait import WaitBaseT

from judge.errors import (
    BackendRequestError,
    BackendUnavailable,
    ConnectionLost,
    PromptTooLong,
    TransientBackendError,
)
from judge.hashing import tagged_hash
from judge.judging.backends.base import BackendIdentity, JudgeBackend, JudgeRequest, should_retry
from judge.judging.cache import VerdictCache
from judge.judging.prompts import Prompt
from judge.judging.sharing import POLL_S, Batch, Shared
from judge.judging.types import MODES, Mode, Status
from judge.judging.verdict import (
    _LENIENT_JSON,
    SCHEMA_VERSION,
    Reply,
    json_problem,
    verdict_schema,
)
from judge.signals import Workers

DEFAULT_RETRY_WAIT: WaitBaseT = wait_exponential_jitter(initial=1, max=30)


class Fingerprint(NamedTuple):
    value: str
    parts: dict[str, Any]


#: The layout of the numbered context sentences of cited and sentences modes: each chunk's id
#: once, above its sentences (issue 22: the id on every sentence cost more tokens than the
#: mode's whole gain).
CONTEXT_LAYOUT = "chunk-once-v1"


def judge_fingerprint(identity: BackendIdentity, prompt: Prompt) -> Fingerprint:
    """Hash of everything that changes the judge's output (and nothing that does not).

    The prompt's mode is in it, with its schema, even for a judge that ignores the prompt's
    text (the lexical baseline answers in the mode asked): the replies of two modes have
    different shapes and must never be served for each other.
    """
    parts = {
        "backend": identity.kind,
        "model": identity.model,
        "digest": identity.digest,
        "options": identity.options,
        "prompt_sha256": prompt.sha256 if identity.reads_prompt else None,
        "schema_version": SCHEMA_VERSION,
        "mode": prompt.mode,
        "schema": verdict_schema(prompt.mode),
    }
    if prompt.mode != "quote":
        # How the numbered sentences are laid out lives in code (judge.judging.prompts), not in
        # the prompt file: a change of it must change the fingerprint of a user's own prompt
        # too, or its cached replies to the old layout would be served for the new one.
        parts["context_layout"] = CONTEXT_LAYOUT
    return Fingerprint(tagged_hash(parts, 16), parts)


def fingerprint_mode(parts: Mapping[str, Any]) -> Mode:
    """The prompt mode a fingerprint's replies were given in (``quote`` for fingerprints made
    before there were modes): what re-deriving their verdicts must parse them as."""
    mode = parts.get("mode", "quote")
    for known in MODES:
        if mode == known:
            return known
    raise ValueError(f"unknown prompt mode {mode!r} in a judge fingerprint")


class JudgeProgress(NamedTuple):
    done: int
    total: int
    cached: int
    not_ok: int


def _ask(
    backend: JudgeBackend,
    request: Callable[[], JudgeRequest],
    max_attempts: int,
    retry_wait: WaitBaseT,
    stopping: threading.Event,
) -> Reply:
    """Render, send, retry the failures the backend says are worth it (``should_retry``:
    transient ones); always returns a Reply unless the server is gone.

    ``request`` renders the prompt: called on the worker thread, so rendering runs in parallel
    with the other requests and is never paid for an item whose reply is cached. The first
    attempt is made directly (tenacity's machinery cost a fast backend as much as a cache
    commit); only a failed one goes to tenacity, which counts it as its own first attempt."""
    rendered = request()
    try:
        try:
            return backend.complete(rendered)
        except Exception as exc:
            first = exc
        retrying = Retrying(
            retry=retry_if_exception(functools.partial(should_retry, backend)),
            # After Ctrl-C no new attempt starts: an in-flight item finishes or fails once.
            stop=stop_after_attempt(max_attempts) | stop_when_event_set(stopping),
            wait=retry_wait,
            reraise=True,
        )
        return retrying(_replaying(first, backend.complete), rendered)
    except PromptTooLong as exc:
        return Reply(kind="truncated", detail=str(exc))
    except ConnectionLost as exc:
        raise BackendUnavailable(
            f"the judge backend stopped answering after {max_attempts} attempts: {exc}"
        ) from exc
    except TransientBackendError as exc:
        return Reply(kind="error", detail=f"{exc} (after {max_attempts} attempts)")
    except BackendRequestError as exc:
        return Reply(kind="error", detail=str(exc))


def _replaying(
    first: Exception, complete: Callable[[JudgeRequest], Reply]
) -> Callable[[JudgeRequest], Reply]:
    """``complete`` whose first call raises ``first`` again instead of asking: the failure of
    the attempt ``_ask`` made itself, so that tenacity decides, waits and stops exactly as if
    it had made that attempt."""
    pending = [first]

    def attempt(request: JudgeRequest) -> Reply:
        if pending:
            raise pending.pop()
        return complete(request)

    return attempt


class Ask(NamedTuple):
    """One request for ``ask_all``: the key its reply is cached under, the question it belongs
    to (the cache's ``question_id`` column) and how to render it."""

    key: str
    question_id: str
    request: Callable[[], JudgeRequest]


def ask_all(
    asks: Sequence[Ask],
    backend: JudgeBackend,
    cache: VerdictCache,
    fingerprint: Fingerprint,
    label: str,
    *,
    reuse: Callable[[Ask, Reply], bool],
    on_reply: Callable[[Ask, Reply, bool], None],
    after_cache: Callable[[], None] = lambda: None,
    concurrency: int = 1,
    max_attempts: int = 4,
    retry_wait: WaitBaseT = DEFAULT_RETRY_WAIT,
) -> bool:
    """Get a reply for every ask, from the cache or the backend: the one loop every judgement
    (every task of ``judge.judging.tasks``) runs through. Returns whether it was interrupted.

    ``reuse(ask, reply)`` says whether a cached reply stands (else it is asked again);
    ``on_reply(ask, reply, cached)`` is called once per ask that got one (cached replies first,
    in order, then new ones as they arrive, each in the cache's open batch before it is
    reported: committed a batch at a time, and always before this returns or raises);
    ``after_cache()`` once the cached ones are reported, before anything is asked.

    On Ctrl-C, asks not yet started are cancelled, those in flight are abandoned (their replies
    are never recorded), and what was asked is kept (the open batch is committed). The requests
    run on daemon threads (``judge.signals.Workers``) so that one still waiting for a server
    does not hold up the exit; an in-process backend's ``close()`` stops and waits for its own
    in-flight call before freeing the model.
    """
    cache.register(fingerprint.value, fingerprint.parts, label)
    todo, seen = _from_cache(asks, cache, fingerprint, reuse, on_reply)
    after_cache()
    # Claimed a few at a time: another run on the same cache asks the rest (judge.judging.sharing).
    shared = Shared(todo, cache, fingerprint.value, seen, block=max(2 * concurrency, 4))
    return _from_backend(
        shared, backend, cache, fingerprint, on_reply, concurrency, max_attempts, retry_wait
    )


def _from_cache(
    asks: Sequence[Ask],
    cache: VerdictCache,
    fingerprint: Fingerprint,
    reuse: Callable[[Ask, Reply], bool],
    on_reply: Callable[[Ask, Reply, bool], None],
) -> tuple[list[Ask], dict[str, Reply]]:
    """``ask_all``'s first pass: every cached reply that stands reported, in order; returns the
    asks still to send, and the cached replies of those that had one (not reused: a reply
    other than these that lands meanwhile is another run's answer, ``Shared``)."""
    cached_replies = cache.get_many(fingerprint.value, (ask.key for ask in asks))
    todo = []
    seen = {}
    for ask in asks:
        reply = cached_replies.get(ask.key)
        if reply is not None and reuse(ask, reply):
            on_reply(ask, reply, True)
        else:
            todo.append(ask)
            if reply is not None:
                seen[ask.key] = reply
    return todo, seen


def _from_backend(
    shared: Shared[Ask],
    backend: JudgeBackend,
    cache: VerdictCache,
    fingerprint: Fingerprint,
    on_reply: Callable[[Ask, Reply, bool], None],
    concurrency: int,
    max_attempts: int,
    retry_wait: WaitBaseT,
) -> bool:
    """``ask_all``'s second pass: the asks sent to the backend, ``concurrency`` at a time, each
    reply added to the cache's open batch (``Batch``), then reported; an ask another run holds
    is reported when its reply lands (``Shared``); returns whether Ctrl-C interrupted it. The
    open batch is committed when due and on every way out (Ctrl-C, an error, the end)."""
    interrupted = failing = False
    stopping = threading.Event()
    pool = Workers(concurrency, "judge")
    pending: dict[Future[Reply], Ask] = {}
    batch = Batch(cache, fingerprint.value)
    ready: SimpleQueue[Future[Reply]] = SimpleQueue()  # the futures done, in the order done

    def fill() -> None:
        # Keep at most `concurrency` requests in flight: more would only queue in the server.
        while len(pending) < concurrency and (ask := shared.next_mine()) is not None:
            future = pool.submit(_ask, backend, ask.request, max_attempts, retry_wait, stopping)
            pending[future] = ask
            future.add_done_callback(ready.put)

    try:
        fill()
        while pending or shared.waiting:
            if pending:
                finished = _ready(ready, batch.left(POLL_S))
            else:
                finished = []
                time.sleep(POLL_S)  # every ask left is another run's: wait for its replies
            for future in finished:
                ask = pending.pop(future)
                reply = future.result()
                batch.add(ask.key, ask.question_id, reply)
                shared.done(ask)
                on_reply(ask, reply, False)
            if batch.due():
                batch.flush()
            for ask, reply in shared.landed():
                on_reply(ask, reply, True)
            fill()
    except KeyboardInterrupt:
        interrupted = True
        stopping.set()
    except BaseException:
        failing = True
        raise
    finally:
        pool.shutdown()  # cancels what has not started; never waits
        try:
            batch.close(failing)  # what was asked is kept
        finally:
            shared.release()
    return interrupted


def _ready(ready: SimpleQueue[Future[Reply]], timeout: float) -> list[Future[Reply]]:
    """The requests done: the first to finish within ``timeout`` seconds, and any others done
    by then (none: the loop looks at the other runs' replies and the batch's age meanwhile)."""
    try:
        finished = [ready.get(timeout=timeout)]
    except Empty:
        return []
    while not ready.empty():
        finished.append(ready.get_nowait())
    return finished


class Read(NamedTuple):
    """A reply of a further judgement read against its payload model: the status, the payload
    (ok only) and why not (otherwise)."""

    status: Status
    payload: BaseModel | None
    error: str | None


def read_payload(reply: Reply, model: type[BaseModel]) -> Read:
    """Parse ``reply`` as ``model``, with exactly ``make_verdict``'s rules for an answer's
    reply: a prompt that did not fit is ``truncated``, a failed backend ``backend_error``, a
    reply cut off at the token limit (finish_reason ``length``) or not valid JSON or breaking
    the schema is a ``parse_error`` saying where; only a complete, valid reply is ``ok``."""
    if reply.kind == "truncated":
        return Read("truncated", None, reply.detail)
    if reply.kind == "error":
        return Read("backend_error", None, reply.detail)
    if reply.finish_reason == "length":
        error = "reply cut off at the token limit (finish_reason 'length'); raise max_tokens"
        return Read("parse_error", None, error)
    try:
        payload = model.model_validate(_LENIENT_JSON.decode(reply.text))
    except json.JSONDecodeError as exc:
        return Read("parse_error", None, f"not JSON: {json_problem(exc)}")
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
        return Read("parse_error", None, f"breaks the schema: {problems}")
    return Read("ok", payload, None)


def task_fingerprint(
    identity: BackendIdentity,
    prompt: Prompt,
    schema: dict[str, Any],
    schema_version: int,
    rules: str | None,
) -> Fingerprint:
    """The fingerprint of a further judgement (``prompt.task``: ``chunk`` or
    ...), built like ``judge_fingerprint``: the backend, model, digest and
    options, the prompt's hash where the backend reads prompts, the reply schema and its
    version, and the task itself, so that it never equals the answer's fingerprint or another
    task's, even for a judge that reads no prompt. ``rules``: the version of a model-free
    judge's own rule for the task (``judge.judging.backends.lexical``), None for a model."""
    parts: dict[str, Any] = {
        "backend": identity.kind,
        "model": identity.model,
        "digest": identity.digest,
        "options": identity.options,
        "prompt_sha256": prompt.sha256 if identity.reads_prompt else None,
        "task": prompt.task,
        "schema_version": schema_version,
        "schema": schema,
    }
    if rules is not None:
        parts["rules"] = rules
    return Fingerprint(tagged_hash(parts, 16), parts)


def task_label(identity: BackendIdentity, prompt: Prompt) -> str:
    """How the cache names a judge configuration: "ollama gemma3:12b · chunk.v1.md"."""
    return f"{identity.kind} {identity.model} · {prompt.name}"


class Keyed(Protocol):
    """An item of a further judgement: its cache key (a hash of all the judge sees) and its
    question."""

    @property
    def key(self) -> str: ...
    @property
    def question_id(self) -> str: ...


Item = TypeVar("Item", bound=Keyed)
Result = TypeVar("Result")


class Graded(NamedTuple, Generic[Result]):
    """What ``ask_each`` got: the result of each item that has a reply, in item order, and
    whether it was interrupted."""

    results: list[Result]
    interrupted: bool
    elapsed_s: float


def ask_each(
    items: Sequence[Item],
    request: Callable[[Item], JudgeRequest],
    derive: Callable[[Item, Reply, bool], Result],
    ok: Callable[[Result], bool],
    backend: JudgeBackend,
    cache: VerdictCache,
    fingerprint: Fingerprint,
    label: str,
    *,
    concurrency: int = 1,
    max_attempts: int = 4,
    retry_wait: WaitBaseT = DEFAULT_RETRY_WAIT,
    on_progress: Callable[[JudgeProgress], None] = lambda _: None,
    rejudge_failed: bool = False,
) -> Graded[Result]:
    """A further judgement's items through ``ask_all``: items of one key (the key hashes
    everything the judge sees) are asked once, and each gets its own result from that reply
    (``derive(item, reply, cached)``: its question id, its rank). ``ok(result)`` says whether a
    cached reply stands when ``rejudge_failed`` asks failed ones again. Progress counts the
    unique keys (``JudgeProgress``); Ctrl-C as ``ask_all``'s: the items without a reply then
    have no result."""
    start = time.perf_counter()
    first: dict[str, Item] = {}
    for item in items:
        first.setdefault(item.key, item)
    got = _Replies(first, derive, ok, rejudge_failed, on_progress)
    interrupted = ask_all(
        [
            Ask(key, item.question_id, functools.partial(request, item))
            for key, item in first.items()
        ],
        backend,
        cache,
        fingerprint,
        label,
        reuse=got.reuse,
        on_reply=got.on_reply,
        after_cache=got.report,
        concurrency=concurrency,
        max_attempts=max_attempts,
        retry_wait=retry_wait,
    )
    # Each item its own result: the first of a key has it already, another (the same question,
    # chunks and answer under another id) derives its own from the same reply.
    results = [
        got.kept[item.key] if item is first[item.key] else derive(item, *got.replies[item.key])
        for item in items
        if item.key in got.replies
    ]
    return Graded(results, interrupted, time.perf_counter() - start)


class _Replies(Generic[Item, Result]):
    """What ``ask_each`` keeps of the replies ``ask_all`` reports: per key, the reply and whether
    it was cached, and the result of the key's first item (derived once); the progress over
    the unique keys."""

    def __init__(
        self,
        first: dict[str, Item],
        derive: Callable[[Item, Reply, bool], Result],
        ok: Callable[[Result], bool],
        rejudge_failed: bool,
        on_progress: Callable[[JudgeProgress], None],
    ) -> None:
        self.first, self.derive, self.ok = first, derive, ok
        self.rejudge_failed, self.on_progress = rejudge_failed, on_progress
        self.replies: dict[str, tuple[Reply, bool]] = {}
        # A cached reply's result, derived once to decide whether it stands, with that reply.
        self.derived: dict[str, tuple[Reply, Result]] = {}
        self.kept: dict[str, Result] = {}  # the first item's result of each key
        self.progress = JudgeProgress(0, len(first), 0, 0)

    def reuse(self, ask: Ask, reply: Reply) -> bool:
        """Whether a cached reply stands: always, but a failed one when failed ones are
        judged again."""
        result = self.derive(self.first[ask.key], reply, True)
        self.derived[ask.key] = (reply, result)
        return not (self.rejudge_failed and not self.ok(result))

    def on_reply(self, ask: Ask, reply: Reply, cached: bool) -> None:
        """Keep a key's reply and its first item's result, and report the progress."""
        key = ask.key
        # The result derived when the reply was read from the cache, if it is this reply; a
        # reply another run asked lands cached but was never derived here (judge.judging.sharing)
        derived = self.derived.pop(key, None)
        if derived is not None and derived[0] is reply:
            result = derived[1]
        else:
            result = self.derive(self.first[key], reply, cached)
        self.replies[key] = (reply, cached)
        self.kept[key] = result
        p = self.progress
        self.progress = JudgeProgress(
            p.done + 1, p.total, p.cached + cached, p.not_ok + (not self.ok(result))
        )
        self.on_progress(self.progress)

    def report(self) -> None:
        """Report the progress as it stands (once the cached replies are in)."""
        self.on_progress(self.progress)
