"""The knowledge digest: what a request answered with tenant knowledge only adds to its
cache keys (policy `knowledge.cache_answers`).

An answer to a request whose injected block holds only tenant knowledge (no memory of
the user's, no procedural memory, no task state) depends on the client's request and
on those items alone, so it may be shared by every request of the tenant given the same
items. The digest names them: each injected item's id, a hash of its content and its
origin (the label its line carries), in the order they were placed. A request whose
retrieval picks other items, or the same question after an item was replaced, deleted
or updated, gets another digest and so another exact key and semantic fingerprint: it
never meets an answer written with other knowledge.

Such a request is given only the best `knowledge.cache_answers_top_n` items (3): the
first items of a ranking are what a paraphrase of the question retrieves too, its tail
is not (on the `gateway eval knowledge-reuse` snapshot, 4 of 63 paraphrases were given
the same 8-10 items as the first wording, 40 the same best 3, 55 the same best one),
and a digest over a varying tail would make every paraphrase a miss.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from gateway.knowledge.records import KNOWLEDGE_SOURCE
from gateway.memory.session import MemoryCandidate

_DIGEST_KIND = b"knowledge-digest-v1"


def knowledge_digest(included: Sequence[MemoryCandidate]) -> str:
    """The digest of the items `included`, in order: ids, content hashes, and where each
    came from (this turn or a session's cache: the line's label in the block)."""
    digest = hashlib.sha256(_DIGEST_KIND)
    for item in included:
        content = hashlib.sha256(item.content.encode()).hexdigest()
        # Length-prefixed: no two different lists spell the same bytes.
        for part in (item.memory_id, content, item.origin.value):
            encoded = part.encode()
            digest.update(len(encoded).to_bytes(4, "big"))
            digest.update(encoded)
    return digest.hexdigest()


def shareable_digest(included: Sequence[MemoryCandidate], task_tokens: int) -> str | None:
    """The digest when what was injected is tenant knowledge only; None when anything
    personal was (a user memory, a procedural memory, the task's state) or nothing."""
    if not included or task_tokens > 0:
        return None
    if any(item.source != KNOWLEDGE_SOURCE for item in included):
        return None
    return knowledge_digest(included)


def for_sharing(candidates: list[MemoryCandidate], top_n: int) -> list[MemoryCandidate]:
    """The candidates to inject: when all are tenant knowledge (the answer may then be
    shared), the best `top_n`; otherwise all of them, as ranked."""
    if any(item.source != KNOWLEDGE_SOURCE for item in candidates):
        return candidates
    return candidates[:top_n]
