"""``judge.pipeline.cache``: the verdict cache's judge configurations, listed and pruned."""

import sqlite3
from collections.abc import Callable

from judge.config import Config
from judge.pipeline.cache import cache_stats, prune_cache
from tests.conftest import run_lexical

Tiny = Callable[..., Config]


def test_stats_then_a_dry_prune_then_a_prune(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    stats = cache_stats(config)
    assert stats.path == config.judge.cache_path
    assert len(stats.entries) == 1
    replies = stats.entries[0].replies
    assert replies == 4  # one per question of the tiny set
    assert prune_cache(config, 30) == (0, 0)  # used just now
    with sqlite3.connect(config.judge.cache_path) as db:  # last used long ago
        db.execute("UPDATE fingerprints SET last_used_at = '2000-01-01T00:00:00+00:00'")
    db.close()
    assert prune_cache(config, 30, dry_run=True) == (1, replies)
    assert len(cache_stats(config).entries) == 1
    assert prune_cache(config, 30) == (1, replies)
    assert cache_stats(config).entries == []
