"""What tests share besides fixtures: the tenants' keys, the gateway config the fixtures
start, and the handles they yield (`tests/conftest.py` holds only the fixtures)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.settings import GatewayConfig
from gateway.testing.fake_upstream import UpstreamLog
from gateway.testing.threaded_server import ThreadedServer, free_port

TENANT_KEYS = {"acme": "sk-acme-1", "globex": "sk-globex-1"}
ADMIN_KEY = "sk-admin-1"


@dataclass
class FakeUpstream:
    url: str
    log: UpstreamLog


@dataclass
class RunningGateway:
    url: str
    config: GatewayConfig
    server: ThreadedServer

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"


def gateway_config_dict(upstream_url: str, data_dir: Path, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "model_list": [
            {
                "model_name": "fake-model",
                "litellm_params": {
                    "model": "openai/fake-model",
                    "api_base": f"{upstream_url}/v1",
                    "api_key": "sk-upstream-secret-123456",
                },
            },
            {
                "model_name": "fake-embedder",
                "litellm_params": {
                    "model": "openai/fake-embedder",
                    "api_base": f"{upstream_url}/v1",
                    "api_key": "sk-upstream-secret-123456",
                },
            },
            *(
                {
                    "model_name": f"fake-judge-{verdict}",
                    "litellm_params": {
                        "model": f"openai/fake-judge-{verdict}",
                        "api_base": f"{upstream_url}/v1",
                        "api_key": "sk-upstream-secret-123456",
                    },
                }
                for verdict in ("yes", "no", "reads-answer")
            ),
            {
                # Nothing listens there: connection failures.
                "model_name": "unreachable-model",
                "litellm_params": {
                    "model": "openai/unreachable",
                    "api_base": f"http://127.0.0.1:{free_port()}/v1",
                    "api_key": "sk-upstream-secret-123456",
                },
            },
        ],
        "router_settings": {"num_retries": 0, "timeout_seconds": 1.0},
        "storage": {"backend": "embedded", "path": str(data_dir)},
        "auth": {
            "tenants": [{"name": n, "api_keys": [k]} for n, k in TENANT_KEYS.items()],
            "admin_keys": [ADMIN_KEY],
        },
        "policies_dir": str(data_dir / "no-policies"),
        # A full collection per start-up adds up over hundreds of test gateways;
        # tests/e2e/test_lifecycle.py covers the default.
        "server": {"gc_freeze": False},
    }
    config.update(overrides)
    return config


GatewayFactory = Callable[..., RunningGateway]
