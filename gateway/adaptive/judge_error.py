"""Verdicts corrected for a judge's error rates.

A judge says "same" for a truly-same pair with probability 1 - miss_rate and for a
truly-different pair with probability false_accept_rate. Over many verdicts the share
q of "same" relates to the true share p by q = p (1 - miss) + (1 - p) false_accept, so
p = (q - false_accept) / (1 - miss - false_accept) (Rogan-Gladen). Per verdict the same
correction gives the expected truth of one "same" and of one "different" verdict,
which is what `BucketStats.add_verdict` counts. The rates are estimated where the truth
is known: exact repeats forwarded again are truly "same" (the judge's miss rate, e.g.
a sampled model answering differently); audits that found a served hit wrong, and
probe pairs, give the false-accept side.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JudgeErrors:
    miss_rate: float = 0.0  # P(says different | same)
    false_accept_rate: float = 0.0  # P(says same | different)

    def __post_init__(self) -> None:
        if not (0 <= self.miss_rate < 0.5 and 0 <= self.false_accept_rate < 0.5):
            raise ValueError("judge error rates must be in [0, 0.5)")

    def corrected(self, says_same: bool, prior_same: float) -> float:
        """The probability that the pair is truly "same" given the verdict and the
        bucket's current estimate `prior_same` (Bayes with the judge's error rates)."""
        p = min(1.0, max(0.0, prior_same))
        if says_same:
            true_same = p * (1 - self.miss_rate)
            false_same = (1 - p) * self.false_accept_rate
        else:
            true_same = p * self.miss_rate
            false_same = (1 - p) * (1 - self.false_accept_rate)
        total = true_same + false_same
        return true_same / total if total > 0 else p


@dataclass(slots=True)
class JudgeErrorEstimate:
    """Counts of a judge's verdicts where the truth is known; rates with a prior of one
    error in `prior_verdicts` so that a few lucky verdicts do not claim perfection."""

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

    def errors(self) -> JudgeErrors:
        miss = (self.same_missed + 1) / (self.same_seen + self.prior_verdicts)
        accept = (self.different_accepted + 1) / (self.different_seen + self.prior_verdicts)
        return JudgeErrors(min(miss, 0.49), min(accept, 0.49))
