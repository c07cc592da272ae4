"""The fitted pair model: an additive model of monotone step functions (boosted stumps).

Each feature contributes a step function of its value; the steps add up to a logit.
Gradient boosting with depth-1 trees fits exactly this family, and adding up the stumps
per feature afterwards leaves a few cut points per feature, so inference is one bisect
per feature in pure Python (microseconds), and every feature's effect can be read off
the JSON. Training enforces a direction per feature (better order agreement of the shared
words never lowers the score, a negation mismatch never raises it; see `MONOTONE` in
`gateway_tools.training.train_reviewer` for all of them and why), so the model cannot learn PAWS
artefacts that would run against the meaning of a feature.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from gateway.errors import GatewayInternalError

MODEL_FORMAT = 1


class ReviewerModelFormatError(GatewayInternalError, ValueError):
    """The weights file does not describe a model this code can run."""


@dataclass(frozen=True, slots=True)
class StepFunction:
    """`values[i]` applies when `cuts[i-1] < x <= cuts[i]` (open-ended at both ends)."""

    cuts: tuple[float, ...]
    values: tuple[float, ...]

    def __call__(self, x: float) -> float:
        return self.values[bisect_left(self.cuts, x)]


@dataclass(frozen=True, slots=True)
class AdditiveModel:
    feature_names: tuple[str, ...]
    intercept: float
    steps: tuple[StepFunction, ...]  # one per feature, same order as feature_names

    def logit(self, features: Sequence[float]) -> float:
        total = self.intercept
        for step, x in zip(self.steps, features, strict=True):
            total += step(x)
        return total

    def probability(self, features: Sequence[float]) -> float:
        z = self.logit(features)
        # Numerically safe logistic for large |z|.
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    def to_dict(self) -> dict[str, Any]:
        return {
            "intercept": self.intercept,
            "steps": {
                name: {"cuts": list(step.cuts), "values": list(step.values)}
                for name, step in zip(self.feature_names, self.steps, strict=True)
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], feature_names: Sequence[str]) -> AdditiveModel:
        """Build from the JSON block, in the order the feature code produces.

        A feature missing from the file contributes nothing; a feature in the file that
        the code does not compute is an error (the model would silently lose it).
        """
        try:
            raw_steps: Mapping[str, Any] = data["steps"]
            intercept = float(data["intercept"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ReviewerModelFormatError("model needs 'intercept' and 'steps'") from exc
        unknown = set(raw_steps) - set(feature_names)
        if unknown:
            raise ReviewerModelFormatError(f"weights use unknown features: {sorted(unknown)}")
        steps: list[StepFunction] = []
        for name in feature_names:
            block = raw_steps.get(name, {"cuts": [], "values": [0.0]})
            try:
                cuts = tuple(float(c) for c in block["cuts"])
                values = tuple(float(v) for v in block["values"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ReviewerModelFormatError(f"bad step function for {name!r}") from exc
            if len(values) != len(cuts) + 1:
                raise ReviewerModelFormatError(f"{name!r}: need one more value than cuts")
            if any(b <= a for a, b in pairwise(cuts)):
                raise ReviewerModelFormatError(f"{name!r}: cuts must be strictly increasing")
            if not all(math.isfinite(v) for v in (*cuts, *values)):
                raise ReviewerModelFormatError(f"{name!r}: non-finite number")
            steps.append(StepFunction(cuts, values))
        return cls(tuple(feature_names), intercept, tuple(steps))
