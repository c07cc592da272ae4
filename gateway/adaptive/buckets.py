"""Evidence per similarity bucket, for one scope (tenant, and language or model where
traffic allows).

The scale is the calibrated similarity (`Embedder.calibrate`): the precision the dev
sets measured for serving from there. Buckets are `width` wide from `floor` up to 1.0;
bucket 0 starts at `floor`. For each bucket the gateway counts:

- `traffic`: semantic candidates that reached the decision (passed the structural and
  entity checks) with their best similarity in the bucket, served or not: what serving
  from there would serve, and so the weights of the served precision;
- `judged` and `judged_same`: verdicts on whether the candidate's stored answer serves
  the request (shadow judgments of misses, audits of served hits), already corrected
  for the judge's error rates where those are known (`judge_error`), hence floats.

Counters only ever add, so replicas can merge by addition (Redis HINCRBYFLOAT).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DEFAULT_WIDTH = 0.01


def bucket_count(floor: float, width: float = DEFAULT_WIDTH) -> int:
    return max(1, math.ceil(round((1.0 - floor) / width, 9)))


def bucket_of(similarity: float, floor: float, width: float = DEFAULT_WIDTH) -> int | None:
    """The bucket of `similarity`, or None below the floor. 1.0 is in the top bucket."""
    if similarity < floor:
        return None
    index = int(round((similarity - floor) / width, 9))
    return min(index, bucket_count(floor, width) - 1)


def bucket_floor(index: int, floor: float, width: float = DEFAULT_WIDTH) -> float:
    """The lowest similarity of bucket `index`: the threshold that starts serving it."""
    return round(floor + index * width, 9)


@dataclass(slots=True)
class BucketStats:
    """Counters of one scope; index 0 is the bucket at `floor`."""

    floor: float
    width: float = DEFAULT_WIDTH
    traffic: list[float] = field(default_factory=list)
    judged: list[float] = field(default_factory=list)
    judged_same: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        size = bucket_count(self.floor, self.width)
        for counters in (self.traffic, self.judged, self.judged_same):
            if len(counters) < size:
                counters.extend([0.0] * (size - len(counters)))

    @property
    def size(self) -> int:
        return len(self.traffic)

    def add_traffic(self, similarity: float, weight: float = 1.0) -> int | None:
        index = bucket_of(similarity, self.floor, self.width)
        if index is not None:
            self.traffic[index] += weight
        return index

    def add_verdict(self, similarity: float, same: float, weight: float = 1.0) -> int | None:
        """A judged candidate; `same` in [0, 1] (a corrected verdict may be fractional)."""
        index = bucket_of(similarity, self.floor, self.width)
        if index is not None:
            self.judged[index] += weight
            self.judged_same[index] += weight * min(1.0, max(0.0, same))
        return index

    def merge(self, other: BucketStats) -> None:
        if (other.floor, other.width, other.size) != (self.floor, self.width, self.size):
            raise ValueError("bucket layouts differ")
        for mine, theirs in (
            (self.traffic, other.traffic),
            (self.judged, other.judged),
            (self.judged_same, other.judged_same),
        ):
            for index, value in enumerate(theirs):
                mine[index] += value

    def total_judged(self) -> float:
        return sum(self.judged)
