"""Errors raised by reviewers.

The semantic stage treats any exception from a reviewer as `review_unavailable` (the
candidate is not served); a dedicated type lets it and its logs tell "the reviewer gave
no usable verdict" apart from bugs.
"""

from __future__ import annotations

from gateway.errors import GatewayInternalError


class ReviewError(GatewayInternalError):
    """A reviewer could not produce a verdict (upstream failure, unparseable answer)."""
