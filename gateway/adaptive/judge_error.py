"""Verdicts corrected for a judge's error rates.

A judge says "same" for a truly-same pair with probability 1 - miss_rate and for a
truly-different pair with probability false_accept_rate. Over many verdicts the share
q of "same" relates to the true share p by q = p (1 - miss) + (1 - p) false_accept, so
p = (q - false_accept) / (1 - miss - false_accept) (Rogan-Gladen). Per verdict the same
correction gives the expected truth of one "same" and of one "different" verdict,
which is what `BucketStats.add_verdict` counts. A judge with miss + false_accept >= 1
says nothing about the pair (a judge that always says "same" has false_accept 1): its
verdicts are not counted.

The rates are estimated where the truth is known: exact repeats forwarded again are
truly "same" (the judge's miss rate, e.g. a sampled model answering differently);
near misses the entity comparison refused for a hard mismatch (`known_different`: a
different number, date, name...) are truly "different" (its false-accept rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# One-sided 95 % (as the threshold's lower bounds).
Z_ONE_SIDED_95 = 1.6449


@dataclass(frozen=True, slots=True)
class JudgeErrors:
    miss_rate: float = 0.0  # P(says different | same)
    false_accept_rate: float = 0.0  # P(says same | different)

    def __post_init__(self) -> None:
        if not (0 <= self.miss_rate <= 1 and 0 <= self.false_accept_rate <= 1):
            raise ValueError("judge error rates must be in [0, 1]")

    @property
    def informative(self) -> bool:
        """Whether a verdict says anything: "same" is likelier for a same pair than for
        a different one (Youden's J = 1 - miss - false_accept > 0)."""
        return self.miss_rate + self.false_accept_rate < 1

    def corrected(self, says_same: bool, prior_same: float) -> float:
        """The probability that the pair is truly "same" given the verdict and the
        bucket's current estimate `prior_same` (Bayes with the judge's error rates);
        `prior_same` itself when the judge is not informative."""
        p = min(1.0, max(0.0, prior_same))
        if not self.informative:
            return p
        if says_same:
            true_same = p * (1 - self.miss_rate)
            false_same = (1 - p) * self.false_accept_rate
        else:
            true_same = p * self.miss_rate
            false_same = (1 - p) * (1 - self.false_accept_rate)
        total = true_same + false_same
        return true_same / total if total > 0 else p


def wilson_upper_bound(proportion: float, samples: float, z: float = Z_ONE_SIDED_95) -> float:
    """One-sided Wilson upper bound of a proportion seen over `samples` trials."""
    if samples <= 0:
        return 1.0
    z2 = z * z
    centre = proportion + z2 / (2 * samples)
    margin = z * math.sqrt(proportion * (1 - proportion) / samples + z2 / (4 * samples**2))
    return min(1.0, (centre + margin) / (1 + z2 / samples))


@dataclass(slots=True)
class JudgeErrorEstimate:
    """Counts of a judge's verdicts where the truth is known, and the rates they give.

    Both rates start from a prior of one error in `prior_verdicts` (pseudo-counts added
    to what was seen), so that a few lucky verdicts do not claim perfection. The miss
    rate is that estimate. The false-accept rate is its one-sided 95 % Wilson upper
    bound (over the seen pairs plus the prior's): the known-different pairs are easier
    than the gray-band pairs the judge decides (a different number is plainer than a
    different nuance), so the measured rate is a lower bound of the rate that matters,
    and the correction takes the high side of it. With no known-different pair the
    bound is about 0.085; a judge that accepts none of 500 gets about 0.008; one that
    accepts every one of 100 gets about 0.73, and its "same" verdicts count for little.
    """

    same_seen: int = 0
    same_missed: int = 0
    different_seen: int = 0
    different_accepted: int = 0
    prior_verdicts: int = 50

    def record(self, truly_same: bool, says_same: bool) -> None:
        if truly_same:
            self.same_seen += 1
            self.same_missed += int(not says_same)
        else:
            self.different_seen += 1
            self.different_accepted += int(says_same)

    def miss_rate(self) -> float:
        return min(1.0, (self.same_missed + 1) / (self.same_seen + self.prior_verdicts))

    def false_accept_estimate(self) -> float:
        """The point estimate (prior included), before the upper bound."""
        return min(1.0, (self.different_accepted + 1) / (self.different_seen + self.prior_verdicts))

    def false_accept_upper(self) -> float:
        samples = self.different_seen + self.prior_verdicts
        return wilson_upper_bound(self.false_accept_estimate(), samples)

    def errors(self) -> JudgeErrors:
        """The rates verdicts are corrected with: the miss rate, and the false-accept
        rate's upper bound (the conservative side)."""
        return JudgeErrors(self.miss_rate(), self.false_accept_upper())
