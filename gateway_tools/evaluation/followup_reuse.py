"""Follow-ups must never be served an answer given in another conversation.

For every pair of MeanCache records (main query, answer, follow-up), the conversation
`[main_i, answer_i, follow-up_i]` is stored through the real semantic stage, then
`follow-up_j` is asked after `[main_k, answer_k]` with k != the record it was stored
under. Any hit is a false hit: the follow-up meant something else there. The compatibility
fingerprint (the request with the last user turn blanked) is what keeps them apart; the
classifier is off here so that the cache itself is what is measured.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from gateway.auth import Principal
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.pipeline.judge import StructureGuard
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.values import Hit, Timings
from gateway.policy.models import Policy
from gateway.review.protocol import Reviewer
from gateway.storage.embedded.vectors import EmbeddedVectorIndex


def _records(data_dir: Path) -> list[dict[str, str]]:
    records: list[dict[str, str]] = []
    for path in sorted((data_dir / "followups").glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            if isinstance(item, dict) and item.get("Main Query") and item.get("Follow-Up Query"):
                records.append(item)
    return records


def _context(main: str, answer: str, follow_up: str) -> ChatRequest:
    body = {
        "model": "eval",
        "messages": [
            {"role": "user", "content": main},
            {"role": "assistant", "content": answer},
            {"role": "user", "content": follow_up},
        ],
    }
    return ChatRequest(
        request_id="eval", principal=Principal("eval"), model="eval", body=body, policy=Policy()
    )


def _stored_answer(follow_up: str) -> dict[str, Any]:
    """A whole answer, servable as a replay: an entry without a choice is never served
    (`replay_incomplete`), so the control below would count nothing."""
    return {
        "id": "chatcmpl-eval",
        "object": "chat.completion",
        "created": 0,
        "model": "eval",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"Answer to: {follow_up}"},
                "finish_reason": "stop",
            }
        ],
    }


async def evaluate_followup_reuse(
    data_dir: Path,
    embedder: Embedder,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    guard: StructureGuard | None,
) -> dict[str, Any]:
    records = _records(data_dir)
    with tempfile.TemporaryDirectory() as workdir:
        index = await EmbeddedVectorIndex.open(Path(workdir), "followups")
        stage = SemanticCacheStage(embedder, index, comparator, reviewer, guard)
        for record in records:
            ctx = _context(
                record["Main Query"], record["Main Query Response"], record["Follow-Up Query"]
            )
            await stage.store(ctx, _stored_answer(record["Follow-Up Query"]))
        asked = hits = same_conversation_hits = 0
        for position, record in enumerate(records):
            # The same follow-up after the NEXT record's conversation.
            other = records[(position + 1) % len(records)]
            if other["Main Query"] == record["Main Query"]:
                continue
            ctx = _context(
                other["Main Query"], other["Main Query Response"], record["Follow-Up Query"]
            )
            asked += 1
            if isinstance(await stage.lookup(ctx, Timings()), Hit):
                hits += 1
            # Control: in its own conversation the same follow-up IS found.
            own = _context(
                record["Main Query"], record["Main Query Response"], record["Follow-Up Query"]
            )
            if isinstance(await stage.lookup(own, Timings()), Hit):
                same_conversation_hits += 1
        await index.close()
    return {
        "records": len(records),
        "followups_asked_in_another_conversation": asked,
        "false_hits": hits,
        "control_hits_in_own_conversation": same_conversation_hits,
    }
