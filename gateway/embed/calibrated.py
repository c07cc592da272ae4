"""The calibration half of an `Embedder`, shared by the real embedders: raw cosines go
through the model's `Calibration`, which the constructor sets as `_calibration`."""

from __future__ import annotations

from gateway.embed.calibration import Calibration


class CalibratedEmbedder:
    """Base of the embedders: `calibrate` and `calibration` read `self._calibration`."""

    _calibration: Calibration

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return self._calibration(cosine, language)

    @property
    def calibration(self) -> Calibration:
        return self._calibration
