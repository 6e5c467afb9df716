"""``judge cache stats`` and ``judge cache prune``: the verdict cache's judge configurations."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.judging.cache import FingerprintStats, VerdictCache


class CacheStats(NamedTuple):
    path: Path
    entries: list[FingerprintStats]
    """One per judge configuration (fingerprint) with its replies and when it was last used."""


class Pruned(NamedTuple):
    fingerprints: int
    """Judge configurations removed (or, with a dry run, that would be)."""
    replies: int


def cache_stats(config: Config) -> CacheStats:
    """What ``judge.cache_path`` holds, per judge configuration."""
    cache = VerdictCache(config.judge.cache_path)
    try:
        return CacheStats(config.judge.cache_path, cache.stats())
    finally:
        cache.close()


def prune_cache(config: Config, days: float, *, dry_run: bool = False) -> Pruned:
    """Remove the judge configurations not used for ``days`` days (``dry_run``: count them,
    remove nothing)."""
    cache = VerdictCache(config.judge.cache_path)
    try:
        return Pruned(*cache.prune(days, dry_run=dry_run))
    finally:
        cache.close()
