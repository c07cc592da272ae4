"""The base of every model an operator writes in YAML (the gateway config in
`gateway/settings.py`, the policy files in `gateway/policy/models.py`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Unknown keys are refused (a misspelt option is an error, not a silent default)
    and a loaded value is frozen (read by many requests at once, changed by none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
