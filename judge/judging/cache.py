"""The verdict cache: SQLite (standard library), WAL, one transaction per verdict.

A row is the backend's ``Reply`` for one item under one judge fingerprint:

- the *fingerprint* hashes everything that changes the judge's output (``judge.judging.grading``):
  backend kind, model and digest, prompt text, verdict schema, sampling options; not timeouts,
  concurrency or URLs;
- the *item key* hashes what the judge reads: question, context chunks in order, answer.

So editing the prompt re-judges everything, editing one answer re-judges one item, and
switching back to an old prompt costs nothing. Each verdict is committed as it arrives, so a
run killed midway resumes from what finished; WAL lets a second process read and write the
same file safely (writers wait on a busy timeout instead of failing). Only model replies are
stored: backend errors and prompts that did not fit are tried again next time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from judge.errors import HarnessError
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
"""
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0


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


class VerdictCache:
    """A connection to the cache file; use it from one thread (the judging loop's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a crash of the process loses nothing committed; only a power
            # cut can lose the last transactions, and it never corrupts the file.
            self.db.execute("PRAGMA synchronous=NORMAL")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise HarnessError(
                    f"{path}: cache format {version} is newer than this judge understands "
                    f"({SCHEMA_VERSION}); upgrade judge or point judge.cache_path elsewhere"
                )
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise HarnessError(
                f"{path}: the cache cannot be opened ({exc}); move the file away and run again "
                "(verdicts will be judged anew)"
            ) from None

    def close(self) -> None:
        self.db.close()

    def register(self, fingerprint: str, parts: dict[str, Any], label: str) -> None:
        """Record a judge configuration (or mark it used now)."""
        now = _now()
        with self.db:
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
        rows = self.db.execute(
            "SELECT item_key, reply FROM replies WHERE fingerprint = ?", (fingerprint,)
        )
        found = {}
        for key, text in rows:
            if key in wanted:
                try:
                    found[key] = Reply.model_validate_json(text)
                except ValueError:
                    continue  # an unreadable row is a miss, judged again and overwritten
        return found

    def put(self, fingerprint: str, item_key: str, question_id: str, reply: Reply) -> None:
        """Store one reply in its own transaction.

        Only model replies are stored. Backend errors are retried next time; so are prompts
        that did not fit, because the limit may live in the server (an OpenAI-compatible
        server restarted with a longer context) and checking again costs one refused request.
        """
        if reply.kind != "reply":
            return
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?)",
                (fingerprint, item_key, question_id, reply.model_dump_json(), _now()),
            )

    def stats(self) -> list[FingerprintStats]:
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
