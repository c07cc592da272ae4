"""The generated texts of `benchmarks/memory_load.py`: knowledge items, memories, and
the questions of its miss requests.

Knowledge items read like a tenant's operations notes, memories like facts a user
stated; both name things from the miss prompts' vocabulary ("the mossy heron", see
`gateway_tools.bench.prompts`), so a question shares words with some of them and
retrieval finds and injects a few, as in real use. None mentions what the exact-hit
prompt asks about (`EXACT_PROMPT`: the colours of a rainbow), so that hit stays a hit
for a user whose memories are ranked before the lookup (nothing injected). Texts are
drawn from a seeded generator: the same seed, the same corpus.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from gateway_tools.bench.prompts import ADJECTIVES, NOUNS

SITES = (
    "north", "harbour", "hillside", "riverside", "east", "west", "lakeside", "central",
    "upland", "coastal",
)  # fmt: skip
TEAMS = (
    "facilities", "logistics", "field", "support", "procurement", "safety", "archive",
    "workshop", "garden", "transport",
)  # fmt: skip
KNOWLEDGE_FRAMES = (
    "Maintenance note: the {a} {n} at the {site} site is inspected every {k} weeks by the "
    "{team} team.",
    "The {team} team stores the {a} {n} in hall {k} of the {site} depot.",
    "Policy: a request to borrow the {a} {n} goes to the {team} desk and takes {k} days.",
    "The {a} {n} at the {site} office was replaced in year {k} of the programme.",
    "Handbook: the {a} {n} must be cleaned with water only; the {team} team keeps spares.",
    "Guide: visitors reach the {a} {n} through gate {k} of the {site} campus.",
    "The {site} branch lends the {a} {n} for up to {k} weeks; the {team} team tracks it.",
    "FAQ: the {a} {n} weighs about {k} kilograms and ships from the {site} depot.",
)
MEMORY_FRAMES = (
    "The user keeps a {a} {n} on the desk at the {site} office.",
    "The user is restoring a {a} {n} with a friend from the {team} team.",
    "The user prefers the {a} {n} over anything else in the {site} shop.",
    "The user photographed a {a} {n} on a walk near the {site} park.",
    "The user wants to learn more about the {a} {n} before the trip in week {k}.",
    "The user borrowed a {a} {n} from the {team} team and returns it in {k} days.",
    "The user sketches the {a} {n} every weekend.",
    "The user once built a model of a {a} {n} with {k} parts.",
)


def _fill(frame: str, rng: random.Random) -> str:
    return frame.format(
        a=rng.choice(ADJECTIVES),
        n=rng.choice(NOUNS),
        site=rng.choice(SITES),
        team=rng.choice(TEAMS),
        k=rng.randint(2, 40),
    )


def generated_texts(count: int, frames: Sequence[str], rng: random.Random) -> list[str]:
    """`count` distinct texts from `frames` (a repeat is drawn again: the stores
    deduplicate identical texts, and the fill must add exactly `count` items)."""
    texts: list[str] = []
    seen: set[str] = set()
    while len(texts) < count:
        text = _fill(frames[len(texts) % len(frames)], rng)
        if text not in seen:
            seen.add(text)
            texts.append(text)
    return texts


def knowledge_texts(count: int, rng: random.Random) -> list[str]:
    return generated_texts(count, KNOWLEDGE_FRAMES, rng)


def memory_texts(count: int, rng: random.Random) -> list[str]:
    return generated_texts(count, MEMORY_FRAMES, rng)


def batches(items: Sequence[str], size: int) -> list[Sequence[str]]:
    """`items` in consecutive slices of at most `size` (the APIs take 100 per write)."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    return [items[start : start + size] for start in range(0, len(items), size)]
