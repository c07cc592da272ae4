from __future__ import annotations

import pytest

from gateway.auth import KeyRegistry, Principal
from gateway.errors import Unauthorized
from gateway.pipeline.context import CacheControl
from gateway.settings import AuthSettings, TenantSettings

SETTINGS = AuthSettings(
    tenants=[TenantSettings(name="acme", api_keys=["sk-a1", "sk-a2"])], admin_keys=["sk-root"]
)


def test_keys_map_to_tenants_and_admin() -> None:
    registry = KeyRegistry(SETTINGS)
    assert registry.authenticate("Bearer sk-a2") == Principal(tenant="acme")
    assert registry.authenticate("bearer sk-a1") == Principal(tenant="acme")
    assert registry.authenticate("Bearer sk-root").is_admin


@pytest.mark.parametrize("header", [None, "", "Bearer", "Basic sk-a1", "Bearer sk-nope", "sk-a1"])
def test_bad_or_missing_keys_are_refused(header: str | None) -> None:
    with pytest.raises(Unauthorized):
        KeyRegistry(SETTINGS).authenticate(header)


def test_open_mode_without_tenants() -> None:
    registry = KeyRegistry(AuthSettings(admin_keys=["sk-root"]))
    assert registry.authenticate(None) == Principal(tenant="default")
    assert registry.authenticate("Bearer anything") == Principal(tenant="default")
    assert registry.authenticate("Bearer sk-root").is_admin


def test_cache_control_directives() -> None:
    assert CacheControl.parse(None) == CacheControl()
    assert CacheControl.parse("no-cache") == CacheControl(no_cache=True)
    assert CacheControl.parse("No-Store, max-age=0") == CacheControl(no_store=True)
    assert CacheControl.parse("no-cache, no-store") == CacheControl(no_cache=True, no_store=True)
