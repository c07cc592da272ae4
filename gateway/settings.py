"""Gateway configuration: the YAML file named by `--config` / `GATEWAY_CONFIG`.

The file is validated with pydantic; any error stops start-up with a message that
names the file and the dotted path of the offending field. Values of the form
`os.environ/NAME` (LiteLLM's convention) are resolved from the environment.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from gateway.api.shortcut_settings import ExactHitShortcutSettings
from gateway.audit_trail.settings import AuditTrailSettings
from gateway.cache.limits import CapacitySettings
from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.errors import GatewayInternalError
from gateway.keys.settings import RuntimeKeySettings
from gateway.spend.settings import SpendSettings
from gateway.strict_model import StrictModel
from gateway.telemetry.alert_settings import AlertSettings
from gateway.yamlfile import YamlFileError, describe_validation_error, read_yaml_mapping

DEFAULT_CONFIG_PATH = Path("config/gateway.yaml")
CONFIG_PATH_ENV = "GATEWAY_CONFIG"
REDIS_URL_ENV = "REDIS_URL"
ENV_REFERENCE_PREFIX = "os.environ/"
# litellm's names for per-token prices in `model_info` (USD per token).
PRICE_FIELDS = ("input_cost_per_token", "output_cost_per_token")


class ConfigError(GatewayInternalError):
    """The configuration cannot be used; the message names the file and field."""


class LiteLLMParams(BaseModel):
    """`litellm_params` of one deployment, passed to litellm as given (`weight`, and the
    other routing-only keys of litellm's Router, are read by the gateway's router)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key: str | None = None
    # Share of its model's traffic among that model's deployments; 0 drains it.
    weight: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    # This deployment's own requests and tokens per minute (README, "Rate limits"):
    # over either, the router picks another deployment of the model, else 429.
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)


class ModelDeployment(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    model_name: str = Field(min_length=1)
    litellm_params: LiteLLMParams
    model_info: dict[str, Any] | None = None

    @field_validator("model_info")
    @classmethod
    def _request_as_sent_is_a_boolean(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # Read by gateway/providers/as_sent.py (README, "What reaches the provider").
        if value and not isinstance(value.get("request_as_sent", False), bool):
            raise ValueError("model_info.request_as_sent must be true or false")
        # Prices that replace litellm's (gateway/spend/pricing.py), as LiteLLM spells them.
        for name in PRICE_FIELDS:
            price = (value or {}).get(name)
            if price is not None and (
                isinstance(price, bool) or not isinstance(price, int | float) or not price >= 0
            ):
                raise ValueError(f"model_info.{name} must be a number >= 0 (USD per token)")
        return value


class RouterSettings(StrictModel):
    """How requests are spread over deployments and retried (gateway/providers/routing.py)."""

    timeout_seconds: float = Field(default=600.0, gt=0)
    stream_timeout_seconds: float | None = Field(default=None, gt=0)
    num_retries: int = Field(default=2, ge=0, le=10)
    retry_after_seconds: float = Field(default=0.0, ge=0)
    # The longest back-off the gateway waits itself before a retry (the provider's
    # Retry-After, or its own doubling one). A provider asking for longer is not retried
    # by the gateway: the client gets the error with the provider's Retry-After.
    max_retry_after_seconds: float = Field(default=60.0, ge=0, le=600)
    # A deployment that failed with a retryable error is skipped this long while its
    # model has another deployment.
    cooldown_seconds: float = Field(default=5.0, ge=0)
    # LiteLLM's format: [{"gpt-4o": ["gpt-4o-mini"]}]
    fallbacks: list[dict[str, list[str]]] = Field(default_factory=list)


class StorageSettings(StrictModel):
    """`embedded` (SQLite + in-process vectors, one process) or `redis` (shared by every
    replica; needs Redis Stack, Redis 8 or a managed Redis with search)."""

    backend: Literal["embedded", "redis"] = "embedded"
    path: Path = Path("./data")
    # `REDIS_URL` in the environment overrides this. May hold a password: never logged.
    redis_url: str | None = None
    redis_prefix: str = Field(default="gateway", pattern=r"^[A-Za-z0-9_.-]+$")
    # Every Redis call is bounded: a slow Redis must not slow the gateway down.
    redis_timeout_seconds: float = Field(default=0.25, gt=0, le=10)
    redis_connect_timeout_seconds: float = Field(default=0.5, gt=0, le=30)
    # 0 (the default): every request of a tenant with knowledge reads its knowledge
    # version from Redis, so a change anywhere is used by the next request anywhere.
    # Above 0: a replica subscribed to the versions' change messages answers from
    # memory for up to this long; a change then reaches another replica when Redis has
    # delivered its message, so a request sent there right after the change may still
    # get the old knowledge (4 of 300 in `gateway eval freshness --backend redis` at 1 s).
    redis_knowledge_version_memory_seconds: float = Field(default=0.0, ge=0, le=60)
    vector_index: VectorIndexSettings = Field(default_factory=VectorIndexSettings)

    @model_validator(mode="after")
    def _redis_needs_url(self) -> StorageSettings:
        if self.backend == "redis" and not self.redis_url:
            raise ValueError(
                "storage.redis_url (or the REDIS_URL environment variable) is required "
                "for backend redis"
            )
        return self


HASHED_KEY_PREFIX = "sha256:"
_HASHED_KEY = re.compile(r"sha256:[0-9a-f]{64}")


def _check_key_entries(keys: list[str]) -> list[str]:
    """A key is given in plain text or as `sha256:<64 lowercase hex>` of its UTF-8 bytes
    (`gateway key hash` prints it), so the config need not hold the secret itself."""
    for key in keys:
        if key.startswith(HASHED_KEY_PREFIX) and not _HASHED_KEY.fullmatch(key):
            raise ValueError("a hashed key must be 'sha256:' followed by 64 lowercase hex digits")
        if not key.startswith(HASHED_KEY_PREFIX) and len(key) < 8:
            raise ValueError("API keys must be at least 8 characters")
    return keys


# Tenant names the gateway itself uses: admin-key traffic runs as tenant `admin`, an
# open gateway (no tenants) as `default`. A configured tenant of the same name would
# share their cache entries, memories, policy files and metrics; compared without case
# so that `Admin` is no loophole for a human reading the metrics either.
ADMIN_TENANT = "admin"
OPEN_TENANT = "default"
RESERVED_TENANT_NAMES = frozenset({ADMIN_TENANT, OPEN_TENANT})


def _check_tenant_name(name: str) -> str:
    if name.lower() in RESERVED_TENANT_NAMES:
        reserved = ", ".join(sorted(RESERVED_TENANT_NAMES))
        raise ValueError(f"tenant name '{name}' is reserved for the gateway ({reserved})")
    return name


class TenantSettings(StrictModel):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    api_keys: list[str] = Field(min_length=1)

    _api_keys_valid = field_validator("api_keys")(_check_key_entries)
    _name_not_reserved = field_validator("name")(_check_tenant_name)


class AuthSettings(StrictModel):
    tenants: list[TenantSettings] = Field(default_factory=list)
    admin_keys: list[str] = Field(default_factory=list)
    # Keys issued through `/admin/keys` (stored hashed in the storage backend).
    runtime_keys: RuntimeKeySettings = Field(default_factory=RuntimeKeySettings)
    # With no tenants listed the gateway runs open (every request is tenant `default`);
    # true refuses requests without a valid key even then, for deployments whose tenant
    # keys are all issued at run time.
    require_keys: bool = False

    _admin_keys_valid = field_validator("admin_keys")(_check_key_entries)

    @model_validator(mode="after")
    def _keys_unique(self) -> AuthSettings:
        seen: set[str] = set()
        for key in [k for t in self.tenants for k in t.api_keys] + self.admin_keys:
            if key in seen:
                # Never echo the key itself.
                raise ValueError("the same API key is listed twice")
            seen.add(key)
        names = [t.name for t in self.tenants]
        if len(names) != len(set(names)):
            raise ValueError("tenant names must be unique")
        return self


class ServerSettings(StrictModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    max_request_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    # A chat body with more messages, or more content parts in all, is a 400 before any
    # message is validated: validating tens of thousands of messages holds the event
    # loop (see docs/measurements.md#message-and-part-count-limits).
    max_messages: int = Field(default=10_000, ge=1)
    max_content_parts: int = Field(default=10_000, ge=1)
    # Bodies larger than this are parsed and validated in a worker thread, so other
    # requests are served meanwhile; smaller ones in place (cheaper than a thread hop).
    parse_in_thread_above_bytes: int = Field(default=64 * 1024, ge=0)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Browsers may call the gateway from these origins (CORS). Empty: no CORS headers,
    # so no web page on another origin can use a key it got hold of.
    cors_allow_origins: list[str] = Field(default_factory=list)
    # Once started, move everything loaded (models, litellm) out of the garbage
    # collector's full scans: those scans were the worst pauses under load. Costs one
    # full collection at start-up (see docs/measurements.md#garbage-collector-freeze).
    gc_freeze: bool = True
    # How long a thread may hold the GIL while another waits for it (Python's default:
    # 5 ms). The event loop shares the interpreter with the embedding and storage
    # threads; a shorter turn gets it back sooner (see
    # docs/measurements.md#gil-switch-interval). None leaves Python's default.
    gil_switch_interval_ms: float | None = Field(default=0.5, gt=0, le=100)
    # Connection limits (gateway/http_protocol.py): request line and headers larger than
    # this are a 431 before the app or authentication sees them.
    max_header_bytes: int = Field(default=32 * 1024, ge=1024, le=1024 * 1024)
    # A new connection or a begun request must complete its headers within this (408).
    header_timeout_seconds: float = Field(default=10.0, gt=0, le=3600)
    # The whole body must arrive within this of the end of the headers (408): a client
    # trickling its body, or declaring a Content-Length it never sends, is cut off.
    body_timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    # An idle keep-alive connection is closed after this (uvicorn's timeout_keep_alive).
    keep_alive_timeout_seconds: int = Field(default=5, ge=1, le=3600)
    # Requests in flight in this process; beyond it a new request is a 503 with
    # retry-after (requests mostly wait on the provider, so this is far above the cores).
    max_concurrent_requests: int = Field(default=1000, ge=1)
    exact_hit_shortcut: ExactHitShortcutSettings = Field(default_factory=ExactHitShortcutSettings)


class SemanticSettings(StrictModel):
    """Which embedder and reviewer the semantic cache uses (thresholds are policy)."""

    # "local": the offline multilingual USE model shipped as a PyPI package; or a
    # `model_name` from model_list, called through litellm.
    embedder: str = "local"
    # Needed only for a litellm embedder: the vector size names the index.
    embedding_dimensions: int | None = Field(default=None, ge=1)
    # A litellm embedder's calibration JSON (raw cosine -> the calibrated scale policy
    # thresholds are on), fitted with `gateway calibrate`; loaded at start-up. None: raw
    # cosine as-is. The local embedder ships its own.
    calibration: Path | None = None
    # "local": the offline pair classifier shipped with the gateway; "none": no review
    # (gray-band candidates are rejected); or a chat `model_name` from model_list.
    reviewer: str = "local"


class AdaptiveSettings(StrictModel):
    """How the adaptive statistics (policy `semantic_cache.adaptive`) are kept."""

    # Queued counter changes are written to the store, and every counter read back
    # (what other replicas added), this often. Requests never wait for it.
    sync_seconds: float = Field(default=2.0, gt=0, le=3600)


class ResponsesSettings(StrictModel):
    """The Responses API's stored responses (`store: true`, the default): how long one
    can be fetched with `GET /v1/responses/{id}` and continued with
    `previous_response_id`. 30 days by default, as OpenAI keeps them."""

    ttl_seconds: int = Field(default=30 * 24 * 3600, ge=1, le=10 * 365 * 24 * 3600)


class GatewayConfig(StrictModel):
    server: ServerSettings = Field(default_factory=ServerSettings)
    model_list: list[ModelDeployment] = Field(default_factory=list)
    router_settings: RouterSettings = Field(default_factory=RouterSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)
    # Caps, eviction and the expiry sweep of the caches (gateway/cache/limits.py).
    capacity: CapacitySettings = Field(default_factory=CapacitySettings)
    adaptive: AdaptiveSettings = Field(default_factory=AdaptiveSettings)
    alerts: AlertSettings = Field(default_factory=AlertSettings)
    responses: ResponsesSettings = Field(default_factory=ResponsesSettings)
    # The audit trail of admin actions (`GET /admin/audit`).
    audit: AuditTrailSettings = Field(default_factory=AuditTrailSettings)
    spend: SpendSettings = Field(default_factory=SpendSettings)
    # Relative paths (policies_dir, storage.path) are relative to the working
    # directory, as in LiteLLM's proxy config.
    policies_dir: Path = Path("policies")
    # How often the policies folder is checked for edits (hot reload).
    policy_reload_seconds: float = Field(default=1.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _fallback_targets_known(self) -> GatewayConfig:
        names = {d.model_name for d in self.model_list}
        if self.semantic.embedder != "local":
            if self.semantic.embedder not in names:
                raise ValueError(
                    f"semantic.embedder {self.semantic.embedder!r} is neither 'local' "
                    "nor a model_name in model_list"
                )
            if self.semantic.embedding_dimensions is None:
                raise ValueError("semantic.embedding_dimensions is required for a litellm embedder")
        elif self.semantic.calibration is not None:
            raise ValueError(
                "semantic.calibration is for a litellm embedder; 'local' ships its own"
            )
        if self.semantic.reviewer not in ("local", "none") and self.semantic.reviewer not in names:
            raise ValueError(
                f"semantic.reviewer {self.semantic.reviewer!r} is neither 'local', 'none' "
                "nor a model_name in model_list"
            )
        for entry in self.router_settings.fallbacks:
            for source, targets in entry.items():
                for name in [source, *targets]:
                    if name not in names:
                        raise ValueError(
                            f"router_settings.fallbacks names model {name!r}, "
                            "which is not in model_list"
                        )
        return self

    def model_names(self) -> list[str]:
        return sorted({d.model_name for d in self.model_list})


def resolve_env_references(value: Any, path: str, missing: list[str]) -> Any:
    """Replace `os.environ/NAME` strings by the variable's value.

    Missing variables are reported (by field path and variable name, never a value)
    and the field is dropped, so the gateway still starts for local use and a request
    to that deployment fails with the provider's authentication error.
    """
    if isinstance(value, dict):
        resolved: dict[str, Any] = {}
        for key, item in value.items():
            new = resolve_env_references(item, f"{path}.{key}" if path else str(key), missing)
            if new is not _MISSING:
                resolved[key] = new
        return resolved
    if isinstance(value, list):
        return [resolve_env_references(v, f"{path}.{i}", missing) for i, v in enumerate(value)]
    if isinstance(value, str) and value.startswith(ENV_REFERENCE_PREFIX):
        name = value[len(ENV_REFERENCE_PREFIX) :]
        env_value = os.environ.get(name)
        if env_value is None:
            missing.append(f"{path} (environment variable {name} is not set)")
            return _MISSING
        return env_value
    return value


_MISSING = object()


def parse_config(raw: dict[str, Any], source: str = "<config>") -> tuple[GatewayConfig, list[str]]:
    """Validate an already-loaded mapping. Returns the config and warnings."""
    missing: list[str] = []
    resolved = resolve_env_references(raw, "", missing)
    redis_url = os.environ.get(REDIS_URL_ENV)
    if redis_url:
        storage = resolved.get("storage")
        resolved["storage"] = {
            **(storage if isinstance(storage, dict) else {}),
            "redis_url": redis_url,
        }
    try:
        config = GatewayConfig.model_validate(resolved)
    except ValidationError as exc:
        lines = "\n".join(f"  {line}" for line in describe_validation_error(exc))
        raise ConfigError(f"{source}: invalid configuration\n{lines}") from None
    return config, missing


def load_config(path: Path) -> tuple[GatewayConfig, list[str]]:
    """Read and validate the config file at `path`. Returns the config and warnings."""
    try:
        raw = read_yaml_mapping(path, "config")
    except YamlFileError as exc:
        raise ConfigError(str(exc)) from None
    return parse_config(raw, str(path))


def config_path_from(cli_value: str | None) -> Path:
    """`--config` wins, then `GATEWAY_CONFIG`, then the default path."""
    if cli_value:
        return Path(cli_value)
    env_value = os.environ.get(CONFIG_PATH_ENV)
    if env_value:
        return Path(env_value)
    return DEFAULT_CONFIG_PATH
