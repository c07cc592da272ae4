"""Keep third-party loggers from writing prompts or keys.

litellm logs request parameters (messages included) at debug level and embeds upstream
error text in its error lines; httpx/httpcore log headers at debug level. The gateway
writes its own record for every request and failure (no prompt text), so these loggers
are held above the levels where they leak, whatever the gateway's own level is.
"""

from __future__ import annotations

import logging

_LEAKY_LOGGERS = {
    "LiteLLM": logging.CRITICAL,
    "LiteLLM Router": logging.CRITICAL,
    "LiteLLM Proxy": logging.CRITICAL,
    "litellm": logging.CRITICAL,
    "httpx": logging.WARNING,
    "httpcore": logging.WARNING,
    "openai": logging.WARNING,
}


def quiet_leaky_loggers() -> None:
    for name, level in _LEAKY_LOGGERS.items():
        logging.getLogger(name).setLevel(level)
