"""Filling the stores through the gateway's own APIs, in batches of 100: knowledge
with the admin key (`POST /v1/knowledge`, naming the tenant), memories with the
tenant's key (`POST /v1/memories`)."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import orjson

from gateway_tools.bench.constants import HOST, BenchError
from gateway_tools.bench.http_client import HttpConnection, request_head
from gateway_tools.bench.memory_load.corpus import batches, knowledge_texts, memory_texts
from gateway_tools.bench.memory_load.scenario import ADMIN_KEY, Tenant
from gateway_tools.bench.report.common import say

BATCH_ITEMS = 100  # the most one write of either API takes
TAG = "memory_load"


async def _post_all(port: int, head: bytes, bodies: Sequence[bytes], what: str) -> float:
    """Every body in turn on one connection; the seconds it took."""
    connection = HttpConnection(HOST, port)
    started = time.perf_counter()
    try:
        for body in bodies:
            response = await connection.request(head, body)
            if response.status != 201:
                raise BenchError(
                    f"{what} write failed: HTTP {response.status}: {response.body[:300]!r}"
                )
    finally:
        await connection.close()
    return time.perf_counter() - started


async def add_knowledge(port: int, tenant: Tenant, count: int, rng: random.Random) -> float:
    texts = knowledge_texts(count, rng)
    head = request_head(
        "POST", port, "/v1/knowledge", ADMIN_KEY, f"x-gateway-tenant: {tenant.name}\r\n"
    )
    bodies = [
        orjson.dumps({"items": [{"content": t, "source": "bench"} for t in chunk]})
        for chunk in batches(texts, BATCH_ITEMS)
    ]
    seconds = await _post_all(port, head, bodies, "knowledge")
    say(f"{count} knowledge items for {tenant.name} in {seconds:.1f} s", TAG)
    return seconds


async def add_memories(
    port: int, tenant: Tenant, user: str, count: int, rng: random.Random
) -> float:
    texts = memory_texts(count, rng)
    head = request_head("POST", port, "/v1/memories", tenant.api_key)
    bodies = [
        orjson.dumps({"user": user, "items": [{"content": t} for t in chunk]})
        for chunk in batches(texts, BATCH_ITEMS)
    ]
    seconds = await _post_all(port, head, bodies, "memory")
    say(f"{count} memories for {tenant.name}/{user} in {seconds:.1f} s", TAG)
    return seconds
