"""Settings of the exact-hit shortcut (`server.exact_hit_shortcut` in the gateway config)."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class ExactHitShortcutSettings(StrictModel):
    """The exact-hit shortcut (gateway/api/hit_shortcut.py): a chat body already answered
    with a plain exact hit is answered again without routing, validation and
    classification (the same bytes, caller and policy get the same verdict and key)."""

    enabled: bool = True
    # Bodies remembered per process (least recently used out first), and the largest
    # one remembered: together they bound the memory the shortcut holds.
    max_entries: int = Field(default=4096, ge=0, le=1_000_000)
    max_body_bytes: int = Field(default=16 * 1024, ge=0, le=1024 * 1024)
