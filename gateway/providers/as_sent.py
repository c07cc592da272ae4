"""Requests reach the provider as the client sent them, where litellm would change them.

litellm (1.110) changes a chat request on its way in three ways the client did not ask
for, all inside `litellm.acompletion`:

1. `developer` messages become `system` messages (and lose their `name`) for every
   model but the o-series (`BaseConfig.translate_developer_role_to_system_role`, called
   from `litellm.main.completion`); for o-series names its model map says take no
   system message (`o1-mini`, `o3-mini`, ...), `system` messages become `user` turns
   (`OpenAIOSeriesConfig._transform_messages`).
2. A parameter of OpenAI's that litellm does not know a model to take (`verbosity` for a
   model name it has no entry for, or for `o3-mini`) fails the call
   (`UnsupportedParamsError`) unless `drop_params` drops it or `allowed_openai_params`
   lets it through.
3. `metadata` is read as litellm's own logging metadata and never sent.

What this module does about them, per call (it wraps `litellm.acompletion`):

- On a deployment that takes the request as sent (OpenAI's own API by default, or any
  deployment with `model_info: {request_as_sent: true}`, which routing.py hands on in
  the deployment's call arguments as `AS_SENT_PARAM`), the messages
  go in `extra_body` when litellm would rewrite a role in them, and `metadata` too: the
  OpenAI SDK litellm calls merges `extra_body` over the body it built, so the provider
  receives them exactly as sent. Other OpenAI-compatible servers (vLLM, Ollama, ...)
  keep litellm's mapping unless so marked: their chat templates may not know
  `developer`. Other providers (Anthropic, Gemini, Bedrock, ...) keep litellm's
  translation, which maps both roles to their own system field.
- Parameters litellm does not know the model to take are passed on
  (`allowed_openai_params`), for the provider to take or refuse (policy
  `unknown_params: pass`, the default), or dropped (`drop_params`) when the forwarded
  body carries `DROP_UNKNOWN_PARAMS` (policy `unknown_params: drop`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlparse

from gateway.providers.protocol import DROP_UNKNOWN_PARAMS

Call = Callable[..., Awaitable[Any]]

# `model_list[].model_info` key: does this deployment take roles and metadata as sent?
AS_SENT_MODEL_INFO_KEY = "request_as_sent"
# The same, as routing.py passes it with the deployment's litellm_params (removed here
# before litellm sees it).
AS_SENT_PARAM = "_gateway_request_as_sent"
# litellm's own keyword arguments among its list of OpenAI parameters, and those it
# never checks against a model: never candidates for `allowed_openai_params`.
_NOT_CHECKED = frozenset(
    {
        "additional_drop_params",
        "allowed_openai_params",
        "api_version",
        "custom_llm_provider",
        "drop_params",
        "extra_headers",
        "max_retries",
        "messages",
        "metadata",
        "model",
        "stream",
        "stream_options",
        "user",
    }
)
# An o-series model name (`o1`, `o3-mini`, `openai/o4-mini`): litellm may move its
# system messages into user turns.
_O_SERIES = re.compile(r"^o\d")


def openai_hosted(api_base: str | None) -> bool:
    """Whether calls go to OpenAI's own API (no `api_base`, or one on openai.com)."""
    if not api_base:
        return True
    host = urlparse(api_base).hostname or ""
    return host == "openai.com" or host.endswith(".openai.com")


@functools.lru_cache(maxsize=1024)
def _litellm_provider(model: str, api_base: str | None) -> str | None:
    import litellm

    try:
        return str(litellm.get_llm_provider(model=model, api_base=api_base)[1])
    except Exception:  # a model string litellm cannot route: it fails the call itself
        return None


@functools.lru_cache(maxsize=1024)
def _supported_params(model: str, provider: str) -> frozenset[str] | None:
    import litellm

    try:
        params = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:
        return None
    return None if params is None else frozenset(params)


@functools.cache
def _checked_params() -> frozenset[str]:
    """The OpenAI parameters litellm checks against the model's supported list."""
    from litellm.constants import DEFAULT_CHAT_COMPLETION_PARAM_VALUES

    return frozenset(DEFAULT_CHAT_COMPLETION_PARAM_VALUES) - _NOT_CHECKED


def unsupported_params(model: str, provider: str, names: Iterable[str]) -> list[str]:
    """The parameters among `names` litellm would refuse for `model`."""
    supported = _supported_params(_bare(model, provider), provider)
    if supported is None:
        return []
    checked = _checked_params()
    return sorted(name for name in names if name in checked and name not in supported)


def _bare(model: str, provider: str) -> str:
    prefix = provider + "/"
    return model[len(prefix) :] if model.startswith(prefix) else model


def _roles_rewritten(model: str, messages: Any) -> bool:
    """Whether litellm would change a role in `messages` (see the module docstring)."""
    if not isinstance(messages, list):
        return False
    roles = {m.get("role") for m in messages if isinstance(m, Mapping)}
    if "developer" in roles:
        return True
    return "system" in roles and bool(_O_SERIES.match(model.rsplit("/", 1)[-1]))


def as_sent_setting(model_info: Mapping[str, Any] | None) -> bool | None:
    """A deployment's `model_info.request_as_sent`; None when it does not say."""
    value = (model_info or {}).get(AS_SENT_MODEL_INFO_KEY)
    return value if isinstance(value, bool) else None


def prepare_call(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments for `litellm.acompletion`, adjusted as the module says."""
    prepared = dict(kwargs)
    declared = prepared.pop(AS_SENT_PARAM, None)
    drop = bool(prepared.pop(DROP_UNKNOWN_PARAMS, False))
    model = str(prepared.get("model", ""))
    api_base = prepared.get("api_base")
    provider = _litellm_provider(model, api_base)
    if drop:
        prepared["drop_params"] = True
    elif provider is not None:
        passed = [name for name in prepared if prepared[name] is not None]
        if prepared.get("n") == 1:
            passed.remove("n")  # litellm lets n=1 through anywhere
        allowed = unsupported_params(model, provider, passed)
        if allowed:
            prepared["allowed_openai_params"] = allowed
    as_sent = declared if isinstance(declared, bool) else openai_hosted(api_base)
    if provider == "openai" and as_sent:
        extra: dict[str, Any] = {}
        if _roles_rewritten(model, prepared.get("messages")):
            extra["messages"] = prepared["messages"]
        if prepared.get("metadata") is not None:
            extra["metadata"] = prepared["metadata"]
        if extra:
            prepared["extra_body"] = {**(prepared.get("extra_body") or {}), **extra}
    return prepared


def as_sent_call(call: Call) -> Call:
    """`call` (litellm.acompletion) with its arguments prepared by `prepare_call`."""

    async def forward(**kwargs: Any) -> Any:
        return await call(**prepare_call(kwargs))

    return forward


def without_as_sent(call: Call) -> Call:
    """`call` (litellm.aembedding) without the deployment's `AS_SENT_PARAM`."""

    async def forward(**kwargs: Any) -> Any:
        kwargs.pop(AS_SENT_PARAM, None)
        return await call(**kwargs)

    return forward
