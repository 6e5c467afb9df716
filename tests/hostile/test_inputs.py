"""Hostile inputs: every file the harness reads, damaged in one way per line of ``CASES``.

Each case damages one file of a copy of the tiny golden set (questions, corpus, run, labels,
``judge.toml``, ``reports/history.jsonl``, the verdict cache), runs the CLI on it and checks
what the user gets: the exit code (2 for bad input), a message that names the file and the line
(or the setting) and says what to do, and no traceback. Where a run had already judged
something, a check after the command makes sure nothing judged was lost (the cache still
answers every item).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from judge.cli import main
from judge.config import Config
from judge.io.jsonl import MAX_RECORD_MB
from judge.judging.cache import VerdictCache
from judge.results.history import read_history
from tests.conftest import CORPUS, QUESTIONS, RUN, run_lexical, write_jsonl

Tiny = Callable[..., Config]

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000
BIG_TEXT = "あ" * (MAX_RECORD_MB * 1024 * 1024 // 3 + 1000)  # just over the limit in UTF-8


class Env:
    """The tiny set's files, and ways to damage them."""

    def __init__(self, config: Config, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        assert config.source is not None
        self.config = config
        self.toml = config.source
        self.folder = folder
        self.monkeypatch = monkeypatch
        self.labels = folder / "labels.jsonl"
        self.cache = config.judge.cache_path
        self.history = config.reports.dir / "history.jsonl"

    def file(self, name: str) -> Path:
        return self.folder / name

    def replace_line(self, name: str, number: int, raw: bytes) -> None:
        """Replace line ``number`` (1-based) of a file with raw bytes."""
        lines = self.file(name).read_bytes().split(b"\n")
        lines[number - 1] = raw
        self.file(name).write_bytes(b"\n".join(lines))

    def set_toml(self, section: str, line: str) -> None:
        """Add ``line`` to the table ``[section]`` of judge.toml (created when absent)."""
        text = self.toml.read_text(encoding="utf-8")
        header = f"[{section}]\n"
        if header in text:
            text = text.replace(header, header + line + "\n", 1)
        else:
            text += f"\n{header}{line}\n"
        self.toml.write_text(text, encoding="utf-8")

    def judged(self) -> int:
        """How many replies the cache holds (it must still answer after a failed command)."""
        cache = VerdictCache(self.cache)
        try:
            return sum(entry.replies for entry in cache.stats())
        finally:
            cache.close()


Damage = Callable[[Env], None]


class Case(NamedTuple):
    id: str
    damage: Damage
    said: tuple[str, ...]
    """Fragments of what the user is told: where (file:line or the setting), and what to do."""
    command: tuple[str, ...] = ("check", "--no-judge")
    code: int = 2
    never_said: tuple[str, ...] = ()
    after: Callable[[Env], None] | None = None


# --- damage makers ---------------------------------------------------------------------------


def _records(name: str, base: list[dict[str, Any]], index: int, **changes: Any) -> Damage:
    def damage(env: Env) -> None:
        records = copy.deepcopy(base)
        records[index].update(changes)
        write_jsonl(env.file(name), records)

    return damage


def question(index: int, **changes: Any) -> Damage:
    return _records("questions.jsonl", QUESTIONS, index, **changes)


def chunk(index: int, **changes: Any) -> Damage:
    return _records("corpus.jsonl", CORPUS, index, **changes)


def record(index: int, **changes: Any) -> Damage:
    """Change run line ``index + 1`` (line 1 is the run_meta header)."""
    return _records("run.jsonl", RUN, index, **changes)


def retrieved(index: int, rank: int, **changes: Any) -> Damage:
    def damage(env: Env) -> None:
        run = copy.deepcopy(RUN)
        run[index]["retrieved"][rank].update(changes)
        write_jsonl(env.file("run.jsonl"), run)

    return damage


def meta(**changes: Any) -> Damage:
    def damage(env: Env) -> None:
        run = copy.deepcopy(RUN)
        run[0]["run_meta"].update(changes)
        write_jsonl(env.file("run.jsonl"), run)

    return damage


def raw_line(name: str, number: int, raw: str | bytes) -> Damage:
    def damage(env: Env) -> None:
        env.replace_line(name, number, raw.encode() if isinstance(raw, str) else raw)

    return damage


def _good_label() -> dict[str, Any]:
    answer = RUN[1]["answer"]
    return {
        "question_id": "q1",
        "answer_sha256": hashlib.sha256(answer.encode("utf-8")).hexdigest(),
        "faithfulness": 2,
        "relevance": 2,
        "labeller": "reviewer-a",
    }


def label(**changes: Any) -> Damage:
    """A labels file (named in judge.toml) whose second line is the good label changed."""

    def damage(env: Env) -> None:
        write_jsonl(env.labels, [_good_label(), {**_good_label(), "labeller": "b", **changes}])
        env.set_toml("data", f'labels = "{env.labels}"')

    return damage


def raw_label(raw: str) -> Damage:
    def damage(env: Env) -> None:
        env.labels.write_text(json.dumps(_good_label()) + "\n" + raw + "\n", encoding="utf-8")
        env.set_toml("data", f'labels = "{env.labels}"')

    return damage


def missing_labels(env: Env) -> None:
    env.set_toml("data", f'labels = "{env.folder / "lables.jsonl"}"')


def setting(section: str, line: str) -> Damage:
    return lambda env: env.set_toml(section, line)


def toml_text(text: str) -> Damage:
    def damage(env: Env) -> None:
        env.toml.write_text(env.toml.read_text(encoding="utf-8") + text, encoding="utf-8")

    return damage


def prompt_file(content: bytes | None, name: str = "bad.md") -> Damage:
    """judge.prompt pointed at ``name`` holding ``content`` (None: a folder; b"-": no file)."""

    def damage(env: Env) -> None:
        path = env.file(name)
        if content is None:
            path.mkdir()
        elif content != b"-":
            path.write_bytes(content)
        text = env.toml.read_text(encoding="utf-8")
        start = text.index("prompt = ")
        end = text.index("\n", start)
        env.toml.write_text(text[:start] + f'prompt = "{path}"' + text[end:], encoding="utf-8")

    return damage


def after_a_run(then: Callable[[Env], None]) -> Damage:
    """Judge the tiny set once (history and cache filled), then damage."""

    def damage(env: Env) -> None:
        assert run_lexical(env.config) == 0
        then(env)

    return damage


def history_tail(raw: bytes) -> Callable[[Env], None]:
    """Append a torn last line (no newline), as a crash mid-append leaves it."""

    def damage(env: Env) -> None:
        with env.history.open("ab") as handle:
            handle.write(raw)

    return damage


def history_head(raw: bytes) -> Callable[[Env], None]:
    """Put a damaged line before the good one: damage in the middle of the history."""

    def damage(env: Env) -> None:
        env.history.write_bytes(raw + b"\n" + env.history.read_bytes())

    return damage


def cache_pages(keep: int) -> Callable[[Env], None]:
    """Overwrite the cache file after its first ``keep`` bytes with garbage (header kept)."""

    def damage(env: Env) -> None:
        raw = env.cache.read_bytes()
        page = int.from_bytes(raw[16:18], "big") if keep < 0 else keep
        env.cache.write_bytes(raw[:page] + b"\xa5" * (len(raw) - page))

    return damage


def cache_read_only(env: Env) -> None:
    # Tests may run as root, whom file modes do not stop: open the file read-only the way
    # SQLite opens a file the user cannot write (tests/judging/test_cache.py uses chmod).
    connect = sqlite3.connect

    def read_only(path: Any, **kwargs: Any) -> sqlite3.Connection:
        if Path(path) == env.cache:
            return connect(f"file:{path}?mode=ro", uri=True, **kwargs)
        return connect(path, **kwargs)

    env.monkeypatch.setattr(sqlite3, "connect", read_only)


def cache_is_a_folder(env: Env) -> None:
    env.cache.mkdir(parents=True)


# --- checks after the command ----------------------------------------------------------------


def still_judged(env: Env) -> None:
    """Everything the first run judged is still in the cache."""
    env.monkeypatch.undo()
    assert env.judged() == len(QUESTIONS)


def history_repaired(env: Env) -> None:
    """The torn line was replaced by the new run's line; nothing judged was lost."""
    assert len(read_history(env.history)) == 2
    assert env.history.read_bytes().endswith(b"}\n")
    still_judged(env)


RUN_LEXICAL = ("run", "--backend", "lexical")

CASES = [
    # --- questions.jsonl ---------------------------------------------------------------------
    Case(
        "question-answerable-yes",
        question(0, answerable="yes"),
        ('questions.jsonl:1: answerable: must be true or false, not "yes"',),
    ),
    Case(
        "question-answerable-1",
        question(0, answerable=1),
        ("questions.jsonl:1: answerable: must be true or false, not 1",),
    ),
    Case(
        "question-relevant-chunk-with-space",
        question(1, relevant_chunks=["backup/restore", "backup auto"]),
        ("questions.jsonl:2: relevant_chunks.1: contains U+0020 (a space)", "golden/README.md"),
    ),
    Case(
        "question-id-with-tab",
        question(0, id="q\t1"),
        ("questions.jsonl:1: id: contains U+0009 (a tab)", "may not contain whitespace"),
    ),
    Case(
        "question-relevant-chunks-a-string",
        question(0, relevant_chunks="pricing/plans"),
        ("questions.jsonl:1: relevant_chunks: must be a list",),
    ),
    Case(
        "question-nested-100000-deep",
        raw_line("questions.jsonl", 2, '{"id": "q2", "tags": ' + DEEP + "}"),
        ("questions.jsonl:2: nested too deeply", "fix the line"),
    ),
    Case(
        "question-5000-digit-integer",
        raw_line("questions.jsonl", 3, '{"id": "q3", "split": ' + HUGE_INT + "}"),
        ("questions.jsonl:3: an integer has more than 4300 digits", "fix the value"),
    ),
    Case(
        "question-not-utf8",
        raw_line("questions.jsonl", 1, '{"question": "年額"}'.encode("shift_jis")),
        ("questions.jsonl:1: not UTF-8", "save the file as UTF-8"),
    ),
    Case(
        "question-lone-surrogate",
        raw_line("questions.jsonl", 1, '{"id": "q1", "question": "cut \\ud83d"}'),
        ("questions.jsonl:1: a \\u escape encodes half a character", "cut in the middle"),
    ),
    Case(
        "question-line-over-the-record-limit",
        question(2, reference_answer=BIG_TEXT),
        ("questions.jsonl:3: the line is 4.1 MB, over the 4 MB limit for one record",),
    ),
    Case(
        "question-unknown-field",
        question(0, relevent_chunks=["pricing/plans"]),
        ("questions.jsonl:1: unknown field 'relevent_chunks'",),
    ),
    # --- corpus.jsonl ------------------------------------------------------------------------
    Case(
        "chunk-id-with-line-break",
        chunk(0, chunk_id="pricing/\nplans"),
        ("corpus.jsonl:1: chunk_id: contains U+000A (a line break) at character 9",),
    ),
    Case(
        "chunk-id-with-zero-width-space",
        chunk(1, chunk_id="pricing/\u200btrial"),
        ("corpus.jsonl:2: chunk_id: contains U+200B (ZERO WIDTH SPACE)", "golden/README.md"),
    ),
    Case(
        "chunk-id-with-ideographic-space",
        chunk(2, chunk_id="backup\u3000auto"),
        ("corpus.jsonl:3: chunk_id: contains U+3000 (IDEOGRAPHIC SPACE)",),
    ),
    Case(
        "chunk-id-with-nul",
        chunk(3, chunk_id="backup/\x00restore"),
        ("corpus.jsonl:4: chunk_id: contains U+0000 (a control character)",),
    ),
    Case(
        "chunk-text-a-number",
        chunk(4, text=5),
        ("corpus.jsonl:5: text: must be a string, not 5",),
    ),
    Case(
        "chunk-nested-100000-deep",
        raw_line("corpus.jsonl", 5, '{"chunk_id": ' + DEEP + "}"),
        ("corpus.jsonl:5: nested too deeply",),
    ),
    Case(
        "chunk-5000-digit-integer",
        raw_line("corpus.jsonl", 1, '{"heading": -' + HUGE_INT + "}"),
        ("corpus.jsonl:1: an integer has more than 4300 digits",),
    ),
    # --- run.jsonl ---------------------------------------------------------------------------
    Case(
        "run-score-a-string",
        retrieved(1, 0, score="0.9"),
        ('run.jsonl:2: retrieved.0.score: must be a number such as 0.5, not "0.9"', "quotes"),
    ),
    Case(
        "run-score-true",
        retrieved(2, 1, score=True),
        ("run.jsonl:3: retrieved.1.score: must be a number such as 0.5, not true",),
    ),
    Case(
        "run-score-nan",
        raw_line(
            "run.jsonl",
            5,
            '{"id": "q4", "retrieved": [{"chunk_id": "pricing/plans", '
            '"score": NaN}], "answer": "no"}',
        ),
        ("run.jsonl:5: retrieved.0.score: Input should be a finite number",),
    ),
    Case(
        "run-chunk-id-with-space",
        retrieved(1, 1, chunk_id="pricing trial"),
        ("run.jsonl:2: retrieved.1.chunk_id: contains U+0020 (a space)",),
    ),
    Case(
        "run-id-a-number",
        record(4, id=4),
        ("run.jsonl:5: id: must be a string, not 4",),
    ),
    Case(
        "run-retrieved-an-object",
        record(1, retrieved={"chunk_id": "pricing/plans"}),
        ("run.jsonl:2: retrieved: must be a list",),
    ),
    Case(
        "run-nested-100000-deep",
        raw_line("run.jsonl", 3, '{"id": "q2", "retrieved": ' + DEEP + ', "answer": "x"}'),
        ("run.jsonl:3: nested too deeply",),
    ),
    Case(
        "run-5000-digit-score",
        raw_line(
            "run.jsonl",
            2,
            '{"id": "q1", "retrieved": [{"chunk_id": "pricing/plans", '
            '"score": ' + HUGE_INT + '}], "answer": "x"}',
        ),
        ("run.jsonl:2: an integer has more than 4300 digits",),
    ),
    Case(
        "run-answer-over-the-record-limit",
        record(1, answer=BIG_TEXT),
        ("run.jsonl:2: the line is 4.1 MB, over the 4 MB limit", "shorten the long field"),
        command=RUN_LEXICAL,
    ),
    Case(
        "run-meta-created-at-a-number",
        meta(created_at=1700000000),
        ("run.jsonl:1: run_meta.created_at: must be an ISO 8601 date-time string",),
    ),
    Case(
        "run-meta-chunking-a-list",
        meta(chunking={"max_chars": [450]}),
        ("run.jsonl:1: run_meta.chunking.max_chars: must be a string, an integer",),
    ),
    Case(
        "run-line-a-list",
        raw_line("run.jsonl", 4, "[1, 2]"),
        ("run.jsonl:4: expected a JSON object, got list",),
    ),
    # --- labels.jsonl ------------------------------------------------------------------------
    Case(
        "label-faithfulness-string",
        label(faithfulness="2"),
        ('labels.jsonl:2: faithfulness: must be an integer such as 2, not "2"', "quotes"),
    ),
    Case(
        "label-faithfulness-true",
        label(faithfulness=True),
        ("labels.jsonl:2: faithfulness: must be an integer such as 2, not true",),
    ),
    Case(
        "label-relevance-2.0",
        label(relevance=2.0),
        ("labels.jsonl:2: relevance: must be an integer such as 2, not 2.0",),
        command=RUN_LEXICAL,
    ),
    Case(
        "label-5000-digit-score",
        raw_label('{"faithfulness": ' + HUGE_INT + "}"),
        ("labels.jsonl:2: an integer has more than 4300 digits",),
    ),
    Case(
        "label-labelled-at-a-number",
        label(labelled_at=5),
        ("labels.jsonl:2: labelled_at: must be an ISO 8601 date-time string",),
    ),
    Case(
        "label-question-id-with-space",
        label(question_id="q 1"),
        ("labels.jsonl:2: question_id: contains U+0020 (a space)",),
    ),
    Case(
        "labels-file-missing-warned-by-run",
        missing_labels,
        ("lables.jsonl: data.labels names this file but it does not exist", "empty file"),
        command=RUN_LEXICAL,
        code=0,
    ),
    # --- judge.toml --------------------------------------------------------------------------
    Case(
        "toml-context-k-a-string",
        setting("retrieval", 'context_k = "5"'),
        ('judge.toml: retrieval.context_k: must be an integer such as 2, not "5"', "quotes"),
    ),
    Case(
        "toml-context-k-true",
        setting("retrieval", "context_k = true"),
        ("judge.toml: retrieval.context_k: must be an integer such as 2, not true",),
    ),
    Case(
        "toml-context-k-5.0",
        setting("retrieval", "context_k = 5.0"),
        ("judge.toml: retrieval.context_k: must be an integer such as 2, not 5.0",),
    ),
    Case(
        "toml-k-values-with-a-string",
        setting("retrieval", 'k_values = [1, "10"]'),
        ('judge.toml: retrieval.k_values.1: must be an integer such as 2, not "10"',),
    ),
    Case(
        "toml-concurrency-a-string",
        setting("judge", 'concurrency = "2"'),
        ('judge.toml: judge.concurrency: must be an integer such as 2, not "2"',),
        command=RUN_LEXICAL,
    ),
    Case(
        "toml-timeout-a-string",
        setting("judge.ollama", 'timeout_s = "600"'),
        ('judge.toml: judge.ollama.timeout_s: must be a number such as 0.5, not "600"',),
    ),
    Case(
        "toml-timeout-inf",
        setting("judge.openai", "timeout_s = inf"),
        ("judge.toml: judge.openai.timeout_s: Input should be a finite number",),
    ),
    Case(
        "toml-threshold-true",
        setting("reports", "regression_threshold = true"),
        ("judge.toml: reports.regression_threshold: must be a number such as 0.5, not true",),
    ),
    Case(
        "toml-max-file-mb-a-string",
        setting("data", 'max_file_mb = "1"'),
        ('judge.toml: data.max_file_mb: must be a number such as 0.5, not "1"',),
    ),
    Case(
        "toml-adapter-concurrency-2.0",
        setting("data", "adapter_concurrency = 2.0"),
        ("judge.toml: data.adapter_concurrency: must be an integer such as 2, not 2.0",),
    ),
    Case(
        "toml-5000-digit-integer",
        setting("retrieval", "context_k = " + HUGE_INT),
        ("judge.toml: an integer has more than 4300 digits",),
    ),
    Case(
        "toml-nested-too-deeply",
        toml_text("\n[x]\ny = " + "[" * 5000 + "]" * 5000 + "\n"),
        ("judge.toml: not valid TOML: arrays or tables nested too deeply",),
    ),
    # --- reports/history.jsonl ---------------------------------------------------------------
    Case(
        "history-torn-last-line",
        after_a_run(history_tail(b'{"format_version": 1, "folder": "2026')),
        ("history.jsonl:2: the last line is incomplete", "skipped"),
        command=RUN_LEXICAL,
        code=0,
        after=history_repaired,
    ),
    Case(
        "history-non-utf8-last-line",
        after_a_run(history_tail('{"folder": "年'.encode()[:-1])),
        ("history.jsonl:2: the last line is incomplete (not UTF-8: byte 0xe5)",),
        command=RUN_LEXICAL,
        code=0,
        after=history_repaired,
    ),
    Case(
        "history-damaged-middle-line",
        after_a_run(history_head(b'{"format_version": 1, "folder": "20')),
        ("history.jsonl:1: not a history entry (not valid JSON)", "remove or fix"),
        command=RUN_LEXICAL,
        after=still_judged,
    ),
    Case(
        "history-non-utf8-middle-line",
        after_a_run(history_head(b'{"folder": "\xff"}')),
        ("history.jsonl:1: not a history entry (not UTF-8: byte 0xff)", "remove or fix"),
        command=RUN_LEXICAL,
        after=still_judged,
    ),
    Case(
        "history-wrong-entry-last-line",
        after_a_run(history_tail(b'{"folder": 1}\n')),
        ("history.jsonl:2: not a history entry (folder: must be a string, not 1",),
        command=RUN_LEXICAL,
        after=still_judged,
    ),
    # --- the prompt file: check refuses what run refuses ------------------------------------
    Case(
        "prompt-missing-answer",
        prompt_file(b"Question $question\nContext $context\n"),
        ("bad.md: missing placeholder $answer",),
    ),
    Case(
        "prompt-unknown-placeholder",
        prompt_file(b"$question $context $answer\nUse $rubric.\n"),
        (
            "bad.md: unknown placeholder $rubric",
            "allowed: $question, $context or $context_sentences, $answer",
        ),
    ),
    Case(
        "prompt-lone-dollar",
        prompt_file(b"$question $context $answer\nIt costs $ 5.\n"),
        ("bad.md: a '$' that is not a placeholder", "write '$$'"),
    ),
    Case(
        "prompt-not-utf8",
        prompt_file(b"\xff\xfe$question $context $answer"),
        ("bad.md: not UTF-8", "save the prompt as UTF-8"),
    ),
    Case(
        "prompt-a-folder",
        prompt_file(None),
        ("bad.md: a folder, not a prompt file", "judge.prompt"),
    ),
    Case(
        "prompt-missing",
        prompt_file(b"-"),
        ("bad.md: prompt file not found", "judge.prompt in judge.toml"),
    ),
    Case(
        "prompt-missing-answer-run",
        prompt_file(b"Question $question\nContext $context\n"),
        ("bad.md: missing placeholder $answer",),
        command=RUN_LEXICAL,
    ),
    # --- the verdict cache -------------------------------------------------------------------
    Case(
        "cache-garbage-pages-valid-header",
        after_a_run(cache_pages(-1)),
        (
            "cache.sqlite3: the cache cannot be opened or read: the file is damaged",
            "move the file away",
            "only a cache",
        ),
        command=RUN_LEXICAL,
    ),
    Case(
        "cache-garbage-after-the-header",
        after_a_run(cache_pages(100)),
        ("cache.sqlite3: the cache cannot be opened or read", "move the file away"),
        command=("cache", "stats"),
    ),
    Case(
        "cache-read-only",
        after_a_run(cache_read_only),
        (
            "cache.sqlite3: the verdict cache cannot be written",
            "a permissions problem",
            "owner and permissions",
        ),
        command=RUN_LEXICAL,
        never_said=("move the file away",),
        after=still_judged,
    ),
    Case(
        "cache-path-a-folder",
        cache_is_a_folder,
        ("cache.sqlite3: the verdict cache cannot be opened", "judge.cache_path"),
        command=RUN_LEXICAL,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_input(
    case: Case,
    tiny: Tiny,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = Env(tiny(), tmp_path, monkeypatch)
    case.damage(env)
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="judge"):
        code = main(["--config", str(env.toml), *case.command])
    captured = capsys.readouterr()
    # Warnings logged by the package (a torn history line) reach the user through the CLI's
    # log handler, or through logging's last resort on stderr; either way they are said.
    said = captured.err + caplog.text
    assert code == case.code, said
    assert "Traceback" not in said
    for fragment in case.said:
        assert fragment in said, f"{fragment!r} not in:\n{said}"
    for fragment in case.never_said:
        assert fragment not in said
    if case.code == 2:
        assert "error: " in captured.err
    if case.after is not None:
        case.after(env)


def test_check_refuses_a_labels_file_that_does_not_exist(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = Env(tiny(), tmp_path, monkeypatch)
    missing_labels(env)
    code = main(["--config", str(env.toml), "check", "--no-judge"])
    err = capsys.readouterr().err
    assert code == 2
    assert "lables.jsonl: data.labels names this file but it does not exist" in err
    assert "Traceback" not in err
