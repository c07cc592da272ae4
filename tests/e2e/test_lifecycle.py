"""What the app's lifespan does to the process it runs in."""

from __future__ import annotations

import gc
import sys

from tests.helpers import GatewayFactory


def test_startup_objects_are_frozen_out_of_the_collector(start_gateway: GatewayFactory) -> None:
    # The models and litellm loaded at start-up stay for the app's life; full
    # collections must not re-scan them (they caused the worst pauses under load).
    gateway = start_gateway(server={"gc_freeze": True})  # the default outside tests
    assert gateway.server is not None
    assert gc.get_freeze_count() > 100_000


def test_the_gil_switch_interval_is_set_while_running(start_gateway: GatewayFactory) -> None:
    start_gateway(server={"gil_switch_interval_ms": 0.25, "gc_freeze": False})
    assert sys.getswitchinterval() == 0.00025
