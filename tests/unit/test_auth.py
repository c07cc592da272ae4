from __future__ import annotations

import pytest

from gateway.auth import KeyRegistry, Principal
from gateway.errors import Unauthorized
from gateway.pipeline.cache_controls import CacheControl
from gateway.settings import AuthSettings, TenantSettings

SETTINGS = AuthSettings(
    tenants=[TenantSettings(name="acme", api_keys=["sk-acme-key-1", "sk-acme-key-2"])],
    admin_keys=["sk-root-key-1"],
)


def test_keys_map_to_tenants_and_admin() -> None:
    registry = KeyRegistry(SETTINGS)
    second = registry.authenticate("Bearer sk-acme-key-2")
    first = registry.authenticate("bearer sk-acme-key-1")
    assert (first.tenant, second.tenant) == ("acme", "acme")
    # Each key has its own id (for its rate limit): a digest prefix, not the key.
    assert first.key_id and second.key_id and first.key_id != second.key_id
    assert "sk-acme" not in first.key_id
    assert first == Principal(tenant="acme", key_id=first.key_id)
    assert registry.authenticate("Bearer sk-root-key-1").is_admin


@pytest.mark.parametrize(
    "header", [None, "", "Bearer", "Basic sk-acme-key-1", "Bearer sk-nope", "sk-acme-key-1"]
)
def test_bad_or_missing_keys_are_refused(header: str | None) -> None:
    with pytest.raises(Unauthorized):
        KeyRegistry(SETTINGS).authenticate(header)


def test_open_mode_without_tenants() -> None:
    registry = KeyRegistry(AuthSettings(admin_keys=["sk-root-key-1"]))
    assert registry.authenticate(None) == Principal(tenant="default")
    assert registry.authenticate("Bearer anything") == Principal(tenant="default")
    assert registry.authenticate("Bearer sk-root-key-1").is_admin


def test_cache_control_directives() -> None:
    assert CacheControl.parse(None) == CacheControl()
    assert CacheControl.parse("no-cache") == CacheControl(no_cache=True)
    assert CacheControl.parse("No-Store, max-age=0") == CacheControl(
        no_store=True, max_age_seconds=0
    )
    assert CacheControl.parse("no-cache, no-store") == CacheControl(no_cache=True, no_store=True)


def test_keys_may_be_configured_hashed() -> None:
    from gateway.auth import hashed_key

    settings = AuthSettings(
        tenants=[TenantSettings(name="acme", api_keys=[hashed_key("sk-acme-secret-9")])],
        admin_keys=[hashed_key("sk-admin-secret-9")],
    )
    registry = KeyRegistry(settings)
    assert registry.authenticate("Bearer sk-acme-secret-9").tenant == "acme"
    assert registry.authenticate("Bearer sk-admin-secret-9").is_admin
    with pytest.raises(Unauthorized):
        # The hash itself is not a key.
        registry.authenticate(f"Bearer {hashed_key('sk-acme-secret-9')}")


@pytest.mark.parametrize("entry", ["sha256:abc", "sha256:" + "G" * 64, "short"])
def test_malformed_or_weak_key_entries_are_config_errors(entry: str) -> None:
    with pytest.raises(ValueError):
        TenantSettings(name="acme", api_keys=[entry])


def test_keys_from_x_api_key_and_api_key_headers() -> None:
    registry = KeyRegistry(SETTINGS)
    assert registry.authenticate(None, "sk-acme-key-1", None).tenant == "acme"
    assert registry.authenticate(None, None, " sk-acme-key-2 ").tenant == "acme"
    assert registry.authenticate("Basic xyz", "sk-root-key-1").is_admin


def test_the_bearer_key_wins_and_a_wrong_one_is_not_rescued() -> None:
    registry = KeyRegistry(SETTINGS)
    assert registry.authenticate("Bearer sk-root-key-1", "sk-acme-key-1").is_admin
    with pytest.raises(Unauthorized):
        registry.authenticate("Bearer sk-nope", "sk-acme-key-1")
    with pytest.raises(Unauthorized):
        registry.authenticate(None, "sk-nope", "sk-acme-key-1")
    with pytest.raises(Unauthorized) as missing:
        registry.authenticate(None, "", "  ")
    assert missing.value.code == "missing_api_key"
