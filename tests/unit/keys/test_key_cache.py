"""The runtime-key cache with a fake clock: one dict lookup while nothing changed,
forgetting within the check interval when another replica changed a key, bounded
unknown digests, and serving what it remembers while the store is down."""

from __future__ import annotations

import asyncio

import pytest

from gateway.auth import KeyRegistry, key_digest
from gateway.errors import Unauthorized
from gateway.keys.admin import KeyAdmin, KeyRequest
from gateway.keys.cache import RuntimeKeyCache
from gateway.keys.settings import RuntimeKeySettings
from gateway.settings import AuthSettings
from gateway.testing.fake_keys import InMemoryKeyStore


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _setup(**settings: object) -> tuple[InMemoryKeyStore, RuntimeKeyCache, FakeClock, KeyAdmin]:
    store = InMemoryKeyStore()
    clock = FakeClock()
    cache = RuntimeKeyCache(store, RuntimeKeySettings(**settings), clock=clock)  # type: ignore[arg-type]
    return store, cache, clock, KeyAdmin(store, cache)


def _digest(secret: str) -> str:
    return key_digest(secret).hex()


def test_a_remembered_key_needs_no_store_read_until_the_interval() -> None:
    async def run() -> None:
        store, cache, clock, admin = _setup(check_interval_seconds=0.25)
        issued = await admin.create(KeyRequest(tenant="acme"))
        assert await cache.lookup(_digest(issued.secret)) == issued.key
        finds, versions = store.finds, store.version_reads
        for _ in range(100):
            clock.now += 0.001
            assert await cache.lookup(_digest(issued.secret)) is not None
        assert (store.finds, store.version_reads) == (finds, versions)
        clock.now += 0.25
        await cache.lookup(_digest(issued.secret))
        assert store.version_reads == versions + 1 and store.finds == finds

    asyncio.run(run())


def test_a_change_on_another_replica_is_seen_after_one_interval() -> None:
    async def run() -> None:
        store, cache, clock, admin = _setup(check_interval_seconds=0.25)
        issued = await admin.create(KeyRequest(tenant="acme"))
        digest = _digest(issued.secret)
        assert (await cache.lookup(digest)).revoked_at is None  # type: ignore[union-attr]
        store.change_elsewhere(issued.key.key_id, at=clock.now)
        clock.now += 0.1
        assert (await cache.lookup(digest)).revoked_at is None  # type: ignore[union-attr]
        clock.now += 0.15
        assert (await cache.lookup(digest)).revoked_at == 1000.0  # type: ignore[union-attr]

    asyncio.run(run())


def test_the_replica_that_revokes_forgets_at_once() -> None:
    async def run() -> None:
        _, cache, _, admin = _setup(check_interval_seconds=1.0)
        issued = await admin.create(KeyRequest(tenant="acme"))
        registry = KeyRegistry(AuthSettings(), cache)
        registry.open = False
        assert (await registry.resolve(f"Bearer {issued.secret}")).tenant == "acme"
        await admin.revoke(issued.key.key_id)
        with pytest.raises(Unauthorized):
            await registry.resolve(f"Bearer {issued.secret}")

    asyncio.run(run())


def test_unknown_digests_are_remembered_and_bounded() -> None:
    async def run() -> None:
        store, cache, _, admin = _setup(unknown_cache_entries=3)
        issued = await admin.create(KeyRequest(tenant="acme"))
        await cache.lookup(_digest(issued.secret))
        for attempt in range(3):
            assert await cache.lookup(_digest(f"wrong-{attempt}")) is None
        finds = store.finds
        assert await cache.lookup(_digest("wrong-2")) is None
        assert store.finds == finds  # remembered as unknown
        for attempt in range(3, 50):
            await cache.lookup(_digest(f"wrong-{attempt}"))
        assert cache.remembered == (1, 3)
        finds = store.finds
        assert await cache.lookup(_digest(issued.secret)) == issued.key
        assert store.finds == finds  # the real key was not pushed out by the flood

    asyncio.run(run())


def test_a_key_created_after_its_digest_was_seen_as_unknown_works() -> None:
    async def run() -> None:
        store, cache, _, admin = _setup()
        issued = await admin.create(KeyRequest(tenant="acme"))
        await admin.revoke(issued.key.key_id)
        del store.keys[issued.key.key_id]
        assert await cache.lookup(_digest(issued.secret)) is None
        await store.add(issued.key)  # e.g. restored by another replica ...
        cache.forget_all()  # ... whose version bump this replica would see
        assert await cache.lookup(_digest(issued.secret)) is not None

    asyncio.run(run())


def test_remembered_keys_keep_serving_while_the_store_is_down() -> None:
    async def run() -> None:
        store, cache, clock, admin = _setup(check_interval_seconds=0.25)
        issued = await admin.create(KeyRequest(tenant="acme"))
        await cache.lookup(_digest(issued.secret))
        store.failing = True
        clock.now += 1
        assert await cache.lookup(_digest(issued.secret)) == issued.key
        assert cache.version_check_failures == 1

    asyncio.run(run())


def test_config_keys_resolve_without_the_runtime_store() -> None:
    async def run() -> None:
        store, cache, _, _ = _setup()
        settings = AuthSettings.model_validate(
            {"tenants": [{"name": "acme", "api_keys": ["sk-acme-key-1"]}]}
        )
        registry = KeyRegistry(settings, cache)
        principal = await registry.resolve("Bearer sk-acme-key-1")
        assert principal.tenant == "acme" and principal.key_id is not None
        assert "sk-acme" not in principal.key_id
        assert (store.finds, store.version_reads) == (0, 0)

    asyncio.run(run())


def test_require_keys_closes_a_gateway_without_tenants() -> None:
    assert KeyRegistry(AuthSettings()).open
    assert not KeyRegistry(AuthSettings(require_keys=True)).open
