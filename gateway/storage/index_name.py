"""The semantic index's name: one per (embedder, dimensions) on either backend, so
vectors of two models are never compared and switching models starts an empty index."""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def index_name_for(embedder_name: str, dimensions: int) -> str:
    """File-safe index name unique to (embedder, dimensions).

    When sanitising changes the name, a short hash of the original is appended so that two
    names differing only in unsafe characters ("a/b" and "a:b") still get two indexes.
    """
    if dimensions <= 0:
        raise ValueError("dimensions must be positive (warm the embedder up first)")
    slug = _UNSAFE.sub("-", embedder_name.lower()).strip("-.") or "embedder"
    if slug != embedder_name or len(slug) > 64:
        digest = hashlib.sha256(embedder_name.encode()).hexdigest()[:8]
        slug = f"{slug[:64].rstrip('-.')}-{digest}"
    return f"{slug}-{dimensions}d"
