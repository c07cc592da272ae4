"""Cache capacity over HTTP (issue 15, item 7): the caps hold whatever the traffic,
the least recently used entries go first, expired entries leave the disk, one tenant
cannot spread over unbounded namespaces, and Redis under `maxmemory` eviction keeps
answering correctly."""

from __future__ import annotations

import re
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from gateway.testing.redis_server import RedisServer
from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt, upstream_calls
from tests.helpers import ADMIN_KEY, TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway

# Questions far apart in meaning, so that only the exact layer could serve a repeat.
QUESTIONS = (
    "What is the capital of France?",
    "How do I sort a list in Python?",
    "Why is the sky blue during the day?",
    "Why do cats purr when they are content?",
    "How many strings does a cello have?",
    "What do pandas eat in the wild?",
)


def _ask(
    gateway: RunningGateway, prompt: str, tenant: str = "acme", namespace: str | None = None
) -> tuple[str, str | None, str]:
    headers = {"x-gateway-namespace": namespace} if namespace else {}
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "user", "content": prompt}],
        extra_headers=headers,
    )
    content = raw.parse().choices[0].message.content or ""
    return raw.headers["x-gateway-cache"], raw.headers.get("x-gateway-cache-reason"), content


def _admin(gateway: RunningGateway, path: str) -> httpx.Response:
    return httpx.get(
        f"{gateway.url}{path}", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10
    )


def _metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if not (line.startswith(name + "{") or line.startswith(name + " ")):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if all(found.get(key) == value for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _eventually(check: Any, seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "the condition never came true"
        time.sleep(0.1)


@pytest.mark.parametrize("storage_backend", ["embedded", "redis"])
def test_capped_caches_evict_the_least_recently_used_and_report_it(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(
        capacity={"exact_cache": {"max_entries": 3}, "semantic_index": {"max_entries": 3}}
    )
    prompts = [unique_prompt(question) for question in QUESTIONS[:5]]
    for prompt in prompts[:3]:
        assert _ask(gateway, prompt)[0] == "miss"
    assert _ask(gateway, prompts[0])[0] == "exact"  # used again: the newest now
    for prompt in prompts[3:]:
        assert _ask(gateway, prompt)[0] == "miss"
    # Held: prompts 0, 3, 4. Prompts 1 and 2 were the least recently used.
    assert _ask(gateway, prompts[0])[0] == "exact"
    assert _ask(gateway, prompts[4])[0] == "exact"
    assert _ask(gateway, prompts[1])[0] == "miss"
    assert upstream_calls(upstream, prompts[1]) == 2
    assert upstream_calls(upstream, prompts[0]) == 1

    stats = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]
    assert stats["exact"]["entries"] == 3
    assert stats["semantic"]["entries"] == 3
    assert stats["exact"]["limits"]["max_entries"] == 3
    # prompts 1 and 2 went, then storing prompt 1 again pushed out the next oldest.
    assert stats["exact"]["evictions"]["capacity"] == 3
    metrics = _admin(gateway, "/metrics").text
    assert _metric(metrics, "gateway_cache_evictions_total", store="exact", reason="capacity") == 3
    assert _metric(metrics, "gateway_cache_entries", store="semantic") == 3
    assert _metric(metrics, "gateway_cache_bytes", store="exact") > 0


@pytest.mark.parametrize("storage_backend", ["embedded", "redis"])
def test_a_semantic_hit_keeps_its_entry_in_the_capped_index(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    # Exact cache off: every repeat is served (or not) by the semantic index alone.
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": "exact_cache: {enabled: false}\n"},
        capacity={"semantic_index": {"max_entries": 2}},
    )
    first, second, third = (unique_prompt(question) for question in QUESTIONS[:3])
    assert _ask(gateway, first)[0] == "miss"
    assert _ask(gateway, second)[0] == "miss"
    assert _ask(gateway, first)[0] == "semantic"  # served: now more recent than `second`
    assert _ask(gateway, third)[0] == "miss"  # evicts the least recently used: `second`
    assert _ask(gateway, first)[0] == "semantic"
    assert _ask(gateway, second)[0] == "miss"


@pytest.mark.parametrize("storage_backend", ["embedded", "redis"])
def test_a_flooding_tenant_cannot_evict_another_tenants_entries(
    start_gateway: GatewayFactory,
) -> None:
    gateway = start_gateway(
        capacity={
            "exact_cache": {"max_entries": 50, "max_entries_per_tenant": 3},
            "semantic_index": {"max_entries": 50, "max_entries_per_tenant": 3},
        }
    )
    quiet = unique_prompt(QUESTIONS[0])
    _ask(gateway, quiet, tenant="globex")
    for question in QUESTIONS[1:]:
        assert _ask(gateway, unique_prompt(question), tenant="acme")[0] == "miss"
    assert _ask(gateway, quiet, tenant="globex")[0] == "exact"
    stores = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]
    assert stores["exact"]["entries"] == 4
    assert stores["exact"]["evictions"]["tenant_capacity"] == 2
    assert stores["semantic"]["entries"] == 4
    assert stores["semantic"]["evictions"]["tenant_capacity"] == 2


@pytest.mark.parametrize("storage_backend", ["embedded"])  # Redis expires its own keys
def test_expired_entries_are_swept_from_the_files_in_the_background(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": "exact_cache: {ttl_seconds: 1}\nsemantic_cache: {ttl_seconds: 1}\n"},
        capacity={"sweep_interval_seconds": 0.2},
    )
    for question in QUESTIONS[:3]:
        _ask(gateway, unique_prompt(question))

    def stores() -> dict[str, Any]:
        return dict(_admin(gateway, "/admin/stats").json()["capacity"]["stores"])

    assert stores()["exact"]["entries"] == 3
    swept = _eventually(
        lambda: (
            lambda s: s if s["exact"]["entries"] == 0 and s["semantic"]["entries"] == 0 else None
        )(stores())
    )
    assert swept["exact"]["evictions"]["expired"] == 3
    assert swept["semantic"]["evictions"]["expired"] == 3
    data = gateway.config.storage.path
    with sqlite3.connect(data / "gateway.sqlite3") as connection:
        assert connection.execute("SELECT COUNT(*) FROM exact_cache").fetchone()[0] == 0
    (index_file,) = data.glob("semantic-*.sqlite3")
    with sqlite3.connect(index_file) as connection:
        assert connection.execute("SELECT COUNT(*) FROM semantic_entries").fetchone()[0] == 0


def test_a_tenant_past_its_namespace_cap_is_served_but_not_cached(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(capacity={"max_namespaces_per_tenant": 2})
    prompt = unique_prompt(QUESTIONS[1])
    for namespace in ("team-a", "team-b"):
        assert _ask(gateway, prompt, namespace=namespace)[0] == "miss"
        assert _ask(gateway, prompt, namespace=namespace)[0] == "exact"
    for _ in range(2):
        layer, reason, content = _ask(gateway, prompt, namespace="team-c")
        assert (layer, reason) == ("bypass", "namespace_limit")
        assert content.startswith("Answer #")
    assert upstream_calls(upstream, prompt) == 4
    # Known namespaces, the default one and other tenants are unaffected.
    assert _ask(gateway, prompt, namespace="team-a")[0] == "exact"
    assert _ask(gateway, prompt)[0] == "miss"
    assert _ask(gateway, prompt, tenant="globex", namespace="team-c")[0] == "miss"
    metrics = _admin(gateway, "/metrics").text
    assert _metric(metrics, "gateway_namespace_refusals_total") == 2
    assert _metric(metrics, "gateway_requests_total", tenant="acme", reason="namespace_limit") == 2


@pytest.fixture
def small_redis(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A Redis of this test's own: its maxmemory settings must not reach other tests."""
    server = RedisServer(log_path=tmp_path / "redis.log").start()
    yield server
    server.stop()


@pytest.mark.parametrize("storage_backend", ["redis"])
def test_redis_under_maxmemory_eviction_keeps_answering_correctly(
    start_gateway: GatewayFactory, small_redis: RedisServer, tmp_path: Path
) -> None:
    prefix = f"cap{uuid.uuid4().hex[:8]}"
    gateway = start_gateway(
        storage={
            "backend": "redis",
            "redis_url": small_redis.url,
            "redis_prefix": prefix,
            "path": str(tmp_path / "data"),
        }
    )
    user = f"u-{uuid.uuid4().hex[:8]}"
    created = httpx.post(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"user": user, "content": "The customer's preferred airline is KLM."},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    client = redis.Redis.from_url(small_redis.url)
    answered: dict[str, str] = {}
    for index in range(8):
        prompt = unique_prompt(QUESTIONS[index % len(QUESTIONS)])
        answered[prompt] = _ask(gateway, prompt)[2]
    used = int(client.info("memory")["used_memory"])
    # The recommended policy: evict among keys with a TTL (every cache key has one).
    client.config_set("maxmemory-policy", "volatile-lru")
    client.config_set("maxmemory", str(used + 256 * 1024))
    big = " ".join(["padding"] * 2000)
    for index in range(60):
        prompt = unique_prompt(f"{QUESTIONS[index % len(QUESTIONS)]} {big}")
        answered[prompt] = _ask(gateway, prompt)[2]
    assert int(client.info("stats")["evicted_keys"]) > 0
    # Every cache key can be evicted by a volatile policy: each carries a TTL (PTTL -1:
    # none; -2: gone meanwhile). Memory keys, the caps' books and the adaptive operating
    # point's counters (statistics, synced in the background) carry none on purpose.
    keys = [key.decode() for key in client.scan_iter(match=f"{prefix}:*", count=1000)]
    kept = (f"{prefix}:memory", f"{prefix}:capacity:", f"{prefix}:adaptive:")
    cache_keys = [key for key in keys if not key.startswith(kept)]
    assert any(key.startswith(f"{prefix}:exact:") for key in cache_keys)
    assert [key for key in cache_keys if client.pttl(key) == -1] == []
    # Evicted entries are misses, surviving ones serve their own answer; nothing fails.
    layers = set()
    for prompt, content in answered.items():
        layer, _, served = _ask(gateway, prompt)
        layers.add(layer)
        assert layer in ("exact", "miss")
        if layer == "exact":
            assert served == content
    assert "miss" in layers
    # Memories have no TTL, so a volatile policy never evicts them.
    listed = httpx.get(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        params={"user": user},
        timeout=10,
    )
    assert [item["content"] for item in listed.json()["data"]] == [
        "The customer's preferred airline is KLM."
    ]


def _redis_client(gateway: RunningGateway) -> redis.Redis:
    assert gateway.config.storage.redis_url is not None
    return redis.Redis.from_url(gateway.config.storage.redis_url)


def _exact_keys(gateway: RunningGateway) -> list[bytes]:
    prefix = gateway.config.storage.redis_prefix
    return list(_redis_client(gateway).scan_iter(match=f"{prefix}:exact:*", count=1000))


@pytest.mark.parametrize("storage_backend", ["redis"])
def test_replicas_sharing_redis_keep_one_cap(start_gateway: GatewayFactory) -> None:
    capacity = {"exact_cache": {"max_entries": 3}, "semantic_index": {"max_entries": 3}}
    # Same test, same key prefix: two replicas of one deployment.
    first, second = start_gateway(capacity=capacity), start_gateway(capacity=capacity)
    prompts = [unique_prompt(question) for question in QUESTIONS]
    for index, prompt in enumerate(prompts):
        assert _ask(first if index % 2 else second, prompt)[0] == "miss"
    assert len(_exact_keys(first)) == 3
    prefix = first.config.storage.redis_prefix
    semantic = list(_redis_client(first).scan_iter(match=f"{prefix}:semantic:*", count=1000))
    assert len(semantic) == 3
    # The newest three are held, whichever replica wrote them.
    assert [_ask(first, prompt)[0] for prompt in prompts[3:]] == ["exact"] * 3
    assert _ask(second, prompts[0])[0] == "miss"
    evicted = sum(
        _admin(gateway, "/admin/stats").json()["capacity"]["stores"]["exact"]["evictions"][
            "capacity"
        ]
        for gateway in (first, second)
    )
    assert evicted == 4  # prompts 0-2, then prompt 3 for prompt 0's new entry


@pytest.mark.parametrize("storage_backend", ["redis"])
def test_entries_redis_dropped_itself_are_not_counted_against_the_cap(
    start_gateway: GatewayFactory,
) -> None:
    gateway = start_gateway(capacity={"exact_cache": {"max_entries": 3}})
    prompts = [unique_prompt(question) for question in QUESTIONS[:4]]
    for prompt in prompts[:3]:
        assert _ask(gateway, prompt)[0] == "miss"
    # As `maxmemory` eviction would: the oldest entry vanishes behind the gateway's back.
    client = _redis_client(gateway)
    prefix = gateway.config.storage.redis_prefix
    (oldest,) = client.zrange(f"{prefix}:capacity:exact:lru", 0, 0)
    assert client.delete(oldest) == 1
    assert _ask(gateway, prompts[3])[0] == "miss"
    # Its place was free: nothing live was evicted to make room.
    assert [_ask(gateway, prompt)[0] for prompt in prompts[1:]] == ["exact"] * 3
    stores = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]
    assert stores["exact"]["entries"] == 3
    assert stores["exact"]["evictions"]["capacity"] == 0
    assert stores["exact"]["evictions"]["expired"] == 1


@pytest.mark.parametrize("storage_backend", ["redis"])
def test_the_sweep_drops_the_books_of_entries_redis_expired(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": "exact_cache: {ttl_seconds: 1}\nsemantic_cache: {ttl_seconds: 1}\n"},
        capacity={"sweep_interval_seconds": 0.2},
    )
    for question in QUESTIONS[:3]:
        _ask(gateway, unique_prompt(question))
    stores = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]
    assert (stores["exact"]["entries"], stores["semantic"]["entries"]) == (3, 3)

    def swept() -> dict[str, Any] | None:
        now = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]
        return now if now["exact"]["entries"] == now["semantic"]["entries"] == 0 else None

    stores = _eventually(swept)
    assert stores["exact"]["evictions"]["expired"] == 3
    prefix = gateway.config.storage.redis_prefix
    client = _redis_client(gateway)
    assert client.zcard(f"{prefix}:capacity:exact:lru") == 0
    assert client.hlen(f"{prefix}:capacity:exact:meta") == 0


def _memory_turn(gateway: RunningGateway, tenant: str, user: str, session: str) -> None:
    client_for(gateway, tenant).chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": unique_prompt("When does the release train leave?")}],
        extra_headers={"x-gateway-user": user, "x-gateway-session": session},
    )


def _memories(gateway: RunningGateway, tenant: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS[tenant]}"},
        json=body,
        timeout=30,
    )


@pytest.mark.parametrize("storage_backend", ["embedded", "redis"])
def test_sessions_are_capped_per_tenant(
    start_gateway: GatewayFactory, tmp_path: Path, storage_backend: str
) -> None:
    # Every retrieved item is admitted, so each turn writes its session.
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": "memory:\n  session:\n    admit_min_score: 0.0\n"},
        capacity={"sessions": {"max_entries": 10, "max_entries_per_tenant": 2}},
    )
    fact = {"content": "The release train leaves on Thursdays."}
    for tenant in ("acme", "globex"):
        assert _memories(gateway, tenant, {"user": "ops", **fact}).status_code == 201
    _memory_turn(gateway, "globex", "ops", "quiet")
    for index in range(5):
        _memory_turn(gateway, "acme", "ops", f"flood-{index}")
    stores = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]
    assert stores["sessions"]["entries"] == 3
    assert stores["sessions"]["evictions"]["tenant_capacity"] == 3
    if storage_backend == "redis":
        prefix = gateway.config.storage.redis_prefix
        held = {
            key.decode()
            for key in _redis_client(gateway).scan_iter(match=f"{prefix}:session:*", count=1000)
        }
        assert held == {
            f"{prefix}:session:globex:ops:quiet",
            f"{prefix}:session:acme:ops:flood-3",
            f"{prefix}:session:acme:ops:flood-4",
        }


@pytest.mark.parametrize("storage_backend", ["embedded", "redis"])
def test_memory_caps_per_tenant_and_overall_refuse_with_409(
    start_gateway: GatewayFactory,
) -> None:
    gateway = start_gateway(capacity={"memories": {"max_entries": 5, "max_entries_per_tenant": 3}})
    batch = {"user": "alice", "items": [{"content": f"Fact number {i}."} for i in range(3)]}
    created = _memories(gateway, "acme", batch)
    assert created.status_code == 201, created.text
    # Another user of the same tenant: the tenant's cap, not the user's.
    refused = _memories(gateway, "acme", {"user": "bob", "content": "One more."})
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "memory_limit_reached"
    assert "capacity.memories.max_entries_per_tenant" in error["message"]
    assert _memories(gateway, "globex", {"user": "carol", "content": "One."}).status_code == 201
    assert _memories(gateway, "globex", {"user": "carol", "content": "Two."}).status_code == 201
    # Five in the store: the overall cap refuses a tenant still under its own.
    refused = _memories(gateway, "globex", {"user": "dave", "content": "Three."})
    assert refused.status_code == 409, refused.text
    assert "(capacity.memories.max_entries)" in refused.json()["error"]["message"]
    # Nothing was evicted; a delete makes room again.
    listed = httpx.get(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        params={"user": "alice"},
        timeout=10,
    ).json()["data"]
    assert len(listed) == 3
    deleted = httpx.delete(
        f"{gateway.base_url}/memories/{listed[0]['id']}",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        params={"user": "alice"},
        timeout=10,
    )
    assert deleted.status_code == 200, deleted.text
    assert _memories(gateway, "globex", {"user": "dave", "content": "Three."}).status_code == 201


@pytest.mark.parametrize("storage_backend", ["embedded", "redis"])
def test_memory_byte_cap_per_tenant_refuses_with_409(start_gateway: GatewayFactory) -> None:
    gateway = start_gateway(capacity={"memories": {"max_bytes_per_tenant": 2048}})
    assert _memories(gateway, "acme", {"user": "a", "content": "word " * 300}).status_code == 201
    refused = _memories(gateway, "acme", {"user": "b", "content": "word " * 200})
    assert refused.status_code == 409, refused.text
    assert "capacity.memories.max_bytes_per_tenant" in refused.json()["error"]["message"]
    assert _memories(gateway, "globex", {"user": "b", "content": "word " * 200}).status_code == 201
