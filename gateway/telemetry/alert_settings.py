"""The alert settings of the gateway config (`alerts:`): the hit-rate drop alert."""

from __future__ import annotations

from pydantic import Field, model_validator

from gateway.strict_model import StrictModel


class HitRateDropAlert(StrictModel):
    """Fires when a tenant's hit rate falls by `points` percentage points within
    `window_minutes` (the usual cause: a namespace or policy version that did not follow
    a release): metric `gateway_hit_rate_drop_alert` and one warning log line."""

    enabled: bool = True
    points: float = Field(default=15.0, gt=0, le=100)
    window_minutes: int = Field(default=30, ge=2, le=24 * 60)
    # The hit rate now is that of the last `recent_minutes`; the one before, the best of
    # any such span earlier in the window. Both need `min_requests` cacheable requests.
    recent_minutes: int = Field(default=5, ge=1, le=60)
    min_requests: int = Field(default=20, ge=1)

    @model_validator(mode="after")
    def _recent_inside_window(self) -> HitRateDropAlert:
        if self.recent_minutes >= self.window_minutes:
            raise ValueError("recent_minutes must be shorter than window_minutes")
        return self


class AlertSettings(StrictModel):
    hit_rate_drop: HitRateDropAlert = Field(default_factory=HitRateDropAlert)
