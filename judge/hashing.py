"""Canonical JSON and tagged hashes.

A hash is ``<scheme>:<hex>``. The scheme tag names the recipe, so a deliberate change to the
recipe (bump the tag) is visible instead of silently orphaning caches and baselines.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: The recipe: sha256 over canonical JSON (sorted keys, no spaces, UTF-8, no ASCII escaping).
HASH_SCHEME = "h1"


def canonical_json(value: Any) -> str:
    """Serialise ``value`` so that equal data always gives equal text (key order ignored)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tagged_hash(value: Any, length: int = 64) -> str:
    """Return ``h1:<sha256 hex>`` of the canonical JSON of ``value``, cut to ``length`` digits."""
    digest = hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    return f"{HASH_SCHEME}:{digest[:length]}"


def text_sha256(text: str) -> str:
    """Plain sha256 hex of the exact UTF-8 bytes of ``text`` (how labels pin an answer)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: str, chunk_size: int = 1 << 20) -> str:
    """sha256 hex of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()
