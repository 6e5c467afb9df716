"""The verdict cache: SQLite (standard library), WAL, one transaction per batch of new
verdicts (``judge.judging.sharing.Batch``: 256 of them or 0.2 s, whichever comes first) or per
chunk of a bulk import.

A row is the backend's ``Reply`` for one item under one judge fingerprint:

- the *fingerprint* hashes everything that changes the judge's output (``judge.judging.grading``):
  backend kind, model and digest, prompt text, verdict schema, sampling options; not timeouts,
  concurrency or URLs;
- the *item key* hashes what the judge reads: question, context chunks in order, answer.

So editing the prompt re-judges everything, editing one answer re-judges one item, and
switching back to an old prompt costs nothing. A run killed midway (kill -9) loses at most its
open batch and resumes from what was committed; Ctrl-C, SIGTERM and errors commit the batch
first. WAL lets a second process read and write the same file safely (writers wait on a busy
timeout instead of failing). Only model replies are stored: backend errors and prompts that
did not fit are tried again next time.

SQLite's errors become ``ConfigError`` naming the file and what to do, whenever they happen
(on open or on the first query that reaches a damaged page): a damaged file can be moved
away (it is only a cache); a read-only one is a permissions problem, and moving it would
throw away verdicts for nothing.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NamedTuple

from judge.errors import ConfigError
from judge.judging.verdict import Reply

SCHEMA = """
CREATE TABLE IF NOT EXISTS fingerprints (
    fingerprint TEXT PRIMARY KEY,
    parts TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS replies (
    fingerprint TEXT NOT NULL,
    item_key TEXT NOT NULL,
    question_id TEXT NOT NULL,
    reply TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (fingerprint, item_key)
);
CREATE TABLE IF NOT EXISTS claims (
    fingerprint TEXT NOT NULL,
    item_key TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (fingerprint, item_key)
);
"""
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0
_IN_MOST = 400  # item keys in one ``IN (...)`` (SQLite's older builds allow 999 parameters)
#: How long a claim on an item (``VerdictCache.claim``) stands without its reply: past it,
#: another run asks the item itself. Longer than a slow request with its retries; a claimer
#: on this machine whose process is gone (killed) loses its claims at once.
CLAIM_TTL_S = 900.0

Claim = Literal["mine", "busy", "landed"]
"""What ``VerdictCache.claim`` found for an item: this run holds the claim now (ask it),
another live run holds it (wait), or a reply landed since this run looked (take it)."""


class FingerprintStats(NamedTuple):
    """One judge configuration in the cache."""

    fingerprint: str
    label: str
    parts: dict[str, Any]
    replies: int
    created_at: str
    last_used_at: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def cache_error(path: Path, exc: sqlite3.Error) -> ConfigError:
    """What to tell the user about an SQLite error on the cache file ``path``."""
    text = str(exc)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        return ConfigError(
            f"{path}: the verdict cache cannot be written ({text}): a permissions problem. "
            "Check the owner and permissions of the file and of its folder (SQLite also "
            f"writes {path.name}-wal and {path.name}-shm next to it), e.g. 'ls -l {path.parent}'"
        )
    if "locked" in lowered or "busy" in lowered:
        return ConfigError(
            f"{path}: the verdict cache is busy ({text}); wait for the other judge command"
        )
    if "unable to open" in lowered:
        return ConfigError(
            f"{path}: the verdict cache cannot be opened ({text}); judge.cache_path must name a "
            "file in a folder you can write: check the path and its permissions"
        )
    if "full" in lowered:
        return ConfigError(f"{path}: the disk is full ({text}); free some space")
    if "disk i/o" in lowered:
        return ConfigError(f"{path}: the disk failed reading or writing the cache ({text})")
    return ConfigError(
        f"{path}: the cache cannot be opened or read: the file is damaged ({text}); move the "
        f"file away (with {path.name}-wal and {path.name}-shm, if there) and run again: it is "
        "only a cache, so the verdicts it held are judged anew"
    )


def _translated(exc: sqlite3.Error) -> bool:
    # Environment and file problems; ProgrammingError, IntegrityError and the like are bugs.
    return isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError


_OWNER = (socket.gethostname(), os.getpid())
"""Who holds a claim: this machine and process (a forked process sets its own, ``_owner``)."""


def _owner() -> None:
    global _OWNER
    _OWNER = (socket.gethostname(), os.getpid())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_owner)


def _alive(host: str, pid: int) -> bool:
    """Whether the process holding a claim may still be running: on another machine, assumed
    so (its claim expires); on this one, whether the process exists."""
    if host != _OWNER[0] or os.name == "nt":  # Windows' os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists under another user (or cannot be asked): assume alive
    return True


def _claim_state(
    stored: tuple[Any, ...] | None, held: tuple[Any, ...] | None, seen: Reply | None, now: float
) -> tuple[Claim, Reply | None]:
    """What ``VerdictCache.claim`` finds for one item from its cached reply's row and its
    claim's row (host, pid, expiry), if any."""
    if stored is not None:
        try:
            reply = Reply.model_validate_json(stored[0])
        except ValueError:
            reply = None
        if reply is not None and reply != seen:
            return "landed", reply
    others = held is not None and (held[0], held[1]) != _OWNER
    if held is not None and others and held[2] > now and _alive(held[0], held[1]):
        return "busy", None
    return "mine", None


class VerdictCache:
    """A connection to the cache file; use it from one thread (the judging loop's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            if not _translated(exc):
                raise
            raise cache_error(path, exc) from None
        try:
            self._open_schema(path)
        except BaseException as exc:
            self.db.close()
            if isinstance(exc, sqlite3.Error) and _translated(exc):
                raise cache_error(path, exc) from None
            raise

    def _open_schema(self, path: Path) -> None:
        """WAL mode, the schema and its version. Two commands opening a new cache file at the
        same moment can get "database is locked" at once from the journal-mode switch or the
        schema (SQLite does not wait on its busy timeout there, to avoid a deadlock): those
        steps are retried, with a growing pause, for up to ``BUSY_TIMEOUT_S``."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 0.02
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a crash of the process loses nothing committed; only a
                # power cut can lose the last transactions, and it never corrupts the file.
                self.db.execute("PRAGMA synchronous=NORMAL")
                version = self.db.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, SCHEMA_VERSION):
                    raise ConfigError(
                        f"{path}: cache format {version} is newer than this judge understands "
                        f"({SCHEMA_VERSION}); upgrade judge or point judge.cache_path elsewhere"
                    )
                self.db.executescript(SCHEMA)
                if version != SCHEMA_VERSION:
                    self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc).lower() or "busy" in str(exc).lower()
                if not busy or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite errors of a query as ``ConfigError`` (a page may be damaged anywhere)."""
        try:
            yield
        except sqlite3.Error as exc:
            if not _translated(exc):
                raise
            raise cache_error(self.path, exc) from None

    def close(self) -> None:
        self.db.close()

    def register(self, fingerprint: str, parts: dict[str, Any], label: str) -> None:
        """Record a judge configuration (or mark it used now)."""
        now = _now()
        with self._errors(), self.db:
            self.db.execute(
                "INSERT INTO fingerprints VALUES (?, ?, ?, ?, ?) ON CONFLICT(fingerprint) "
                "DO UPDATE SET last_used_at = excluded.last_used_at",
                (
                    fingerprint,
                    json.dumps(parts, ensure_ascii=False, sort_keys=True),
                    label,
                    now,
                    now,
                ),
            )

    def get_many(self, fingerprint: str, item_keys: Iterable[str]) -> dict[str, Reply]:
        """Cached replies for these items (missing ones are absent from the result)."""
        wanted = set(item_keys)
        found = {}
        with self._errors():
            rows = self.db.execute(
                "SELECT item_key, reply FROM replies WHERE fingerprint = ?", (fingerprint,)
            )
            for key, text in rows:
                if key in wanted:
                    try:
                        found[key] = Reply.model_validate_json(text)
                    except ValueError:
                        continue  # an unreadable row is a miss, judged again and overwritten
        return found

    def put(self, fingerprint: str, item_key: str, question_id: str, reply: Reply) -> None:
        """Store one reply in its own transaction (``put_batch`` of one row)."""
        self.put_batch(fingerprint, [(item_key, question_id, reply)])

    def put_batch(self, fingerprint: str, rows: Sequence[tuple[str, str, Reply]]) -> None:
        """Store ``(item_key, question_id, reply)`` rows in one transaction, replacing what was
        cached for those items, and end this run's claims on them (``claim``): a crash keeps
        all of them or none. The asking loop writes a batch at a time (``sharing.Batch``).

        Only model replies are stored. Backend errors are retried next time; so are prompts
        that did not fit, because the limit may live in the server (an OpenAI-compatible
        server restarted with a longer context) and checking again costs one refused request.
        """
        if not rows:
            return
        now = _now()
        stored = [
            (fingerprint, key, question_id, reply.model_dump_json(), now)
            for key, question_id, reply in rows
            if reply.kind == "reply"
        ]
        with self._errors(), self._immediate():
            self.db.executemany("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?)", stored)
            self.db.executemany(  # this run's claim on an item, if it held one, ends with it
                "DELETE FROM claims WHERE fingerprint = ? AND item_key = ? AND host = ? "
                "AND pid = ?",
                [(fingerprint, key, *_OWNER) for key, _, _ in rows],
            )

    @contextmanager
    def _immediate(self) -> Iterator[None]:
        """One explicit transaction (the connection commits each statement by itself,
        isolation_level=None) that takes the write lock at once (IMMEDIATE), so that a
        concurrent writer makes it wait on the busy timeout rather than fail midway; rolled
        back on any error, Ctrl-C included."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def claim(
        self, fingerprint: str, wanted: Sequence[tuple[str, Reply | None]], ttl_s: float
    ) -> dict[str, tuple[Claim, Reply | None]]:
        """Claim items for this run to ask, in one transaction: for each ``(item_key, seen)``
        (``seen``: the reply this run read and will not reuse, None if it read none) whether
        it is this run's to ask now (``mine``), another live run's (``busy``), or answered
        since this run looked (``landed``, with the reply). So two runs sharing one cache ask
        each item once: the second waits for the first's reply instead of asking too.

        A claim stands ``ttl_s`` seconds; one held by a process of this machine that is gone
        (a run killed with kill -9) is taken at once. It ends when its reply is stored
        (``put``) or given up (``release``)."""
        now = time.time()
        out: dict[str, tuple[Claim, Reply | None]] = {}
        with self._errors(), self._immediate():
            for at in range(0, len(wanted), _IN_MOST):
                part = wanted[at : at + _IN_MOST]
                keys = [key for key, _ in part]
                replies = self._keyed("replies", "reply", fingerprint, keys)
                held = self._keyed("claims", "host, pid, expires_at", fingerprint, keys)
                for key, seen in part:
                    out[key] = _claim_state(replies.get(key), held.get(key), seen, now)
                self.db.executemany(
                    "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                    [
                        (fingerprint, key, *_OWNER, now + ttl_s)
                        for key in keys
                        if out[key][0] == "mine"
                    ],
                )
        return out

    def _keyed(
        self, table: str, columns: str, fingerprint: str, keys: Sequence[str]
    ) -> dict[str, tuple[Any, ...]]:
        """``columns`` of ``table``'s rows for these items, by item key (one query)."""
        marks = ", ".join("?" * len(keys))
        rows = self.db.execute(
            f"SELECT item_key, {columns} FROM {table} "
            f"WHERE fingerprint = ? AND item_key IN ({marks})",
            (fingerprint, *keys),
        )
        return {row[0]: tuple(row[1:]) for row in rows}

    def release(self, fingerprint: str, item_keys: Iterable[str]) -> None:
        """Give up this run's claims on these items (Ctrl-C, or the items not asked after
        all): another run may ask them at once."""
        with self._errors(), self.db:
            self.db.executemany(
                "DELETE FROM claims WHERE fingerprint = ? AND item_key = ? AND host = ? "
                "AND pid = ?",
                ((fingerprint, key, *_OWNER) for key in item_keys),
            )

    def put_many(self, fingerprint: str, rows: Iterable[tuple[str, str, Reply]]) -> int:
        """Store many ``(item_key, question_id, reply)`` in one transaction; return how many
        were new.

        For bulk imports (``judge batch import``): one commit for the lot instead of one per
        row. A reply already cached for the item is kept, not replaced, so importing the same
        file twice changes nothing, and a crash leaves either the whole lot or none of it.
        Like ``put``, only model replies are stored.
        """
        now = _now()
        values = (
            (fingerprint, key, question_id, reply.model_dump_json(), now)
            for key, question_id, reply in rows
            if reply.kind == "reply"
        )
        with self._errors(), self._immediate():
            before = self.db.total_changes
            self.db.executemany("INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?, ?)", values)
            return self.db.total_changes - before

    def cached_keys(self, fingerprint: str) -> set[str]:
        """The item keys that have a reply under ``fingerprint`` (replies not read)."""
        with self._errors():
            rows = self.db.execute(
                "SELECT item_key FROM replies WHERE fingerprint = ?", (fingerprint,)
            )
            return {key for (key,) in rows}

    def latest_replies(self, fingerprints: Sequence[str], most: int) -> list[Reply]:
        """The ``most`` newest replies under any of ``fingerprints``, newest first (a row that
        no longer reads as a reply is left out: it tells nothing, and is a miss for a run too)."""
        if not fingerprints:
            return []
        marks = ", ".join("?" * len(fingerprints))
        with self._errors():
            rows = self.db.execute(
                f"SELECT reply FROM replies WHERE fingerprint IN ({marks}) "
                "ORDER BY created_at DESC LIMIT ?",
                (*fingerprints, most),
            ).fetchall()
        replies = []
        for (text,) in rows:
            try:
                replies.append(Reply.model_validate_json(text))
            except ValueError:
                continue
        return replies

    def parts(self, fingerprint: str) -> dict[str, Any] | None:
        """The parts ``fingerprint`` was registered with, or None if it never was (one row
        read, where ``stats`` counts the replies of every fingerprint)."""
        with self._errors():
            row = self.db.execute(
                "SELECT parts FROM fingerprints WHERE fingerprint = ?", (fingerprint,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def stats(self) -> list[FingerprintStats]:
        with self._errors():
            rows = self.db.execute(
                "SELECT f.fingerprint, f.label, f.parts, COUNT(r.item_key), f.created_at, "
                "f.last_used_at FROM fingerprints f LEFT JOIN replies r USING (fingerprint) "
                "GROUP BY f.fingerprint ORDER BY f.last_used_at DESC"
            )
            return [
                FingerprintStats(fp, label, json.loads(parts), count, created, used)
                for fp, label, parts, count, created, used in rows
            ]

    def prune(self, unused_days: float, dry_run: bool = False) -> tuple[int, int]:
        """Delete fingerprints not used in ``unused_days`` days; returns (fingerprints, replies).

        With ``dry_run`` nothing is deleted: the counts say what would be.
        """
        with self._errors():
            return self._prune(unused_days, dry_run)

    def _prune(self, unused_days: float, dry_run: bool) -> tuple[int, int]:
        cutoff = (datetime.now(UTC) - timedelta(days=unused_days)).isoformat(timespec="seconds")
        old = [
            fp
            for (fp,) in self.db.execute(
                "SELECT fingerprint FROM fingerprints WHERE last_used_at < ?", (cutoff,)
            )
        ]
        if dry_run:
            replies = sum(
                self.db.execute(
                    "SELECT COUNT(*) FROM replies WHERE fingerprint = ?", (fp,)
                ).fetchone()[0]
                for fp in old
            )
            return len(old), replies
        with self.db:
            replies = 0
            for fp in old:
                replies += self.db.execute(
                    "DELETE FROM replies WHERE fingerprint = ?", (fp,)
                ).rowcount
                self.db.execute("DELETE FROM fingerprints WHERE fingerprint = ?", (fp,))
        self.db.execute("VACUUM")
        return len(old), replies
