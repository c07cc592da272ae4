"""Request bodies: unique, mutually dissimilar miss prompts."""

from __future__ import annotations

import random

import orjson

from gateway_tools.bench.constants import MODEL, BenchError


def chat_body(prompt: str) -> bytes:
    return orjson.dumps({"model": MODEL, "messages": [{"role": "user", "content": prompt}]})


# Plain, neutral words for the miss prompts. None may make a prompt non-cacheable: no
# digits or IDs, no time words (today, now, latest, current, price...), no possessives,
# no action verbs (book, cancel, send, delete...), no pronouns.
ADJECTIVES = (
    "amber", "bitter", "brittle", "bronze", "calm", "chalky", "cloudy", "coarse",
    "copper", "crimson", "crooked", "curved", "damp", "dense", "dusty", "faded",
    "feathery", "fragile", "frosty", "gentle", "glassy", "golden", "granite", "grassy",
    "hollow", "humid", "icy", "ivory", "jagged", "knotted", "leafy", "linen", "marble",
    "misty", "mossy", "muddy", "narrow", "oaken", "pale", "pebbled", "polished",
    "quiet", "rocky", "rugged", "rusty", "salty", "sandy", "scarlet", "shady", "shallow",
    "silky", "silver", "slender", "smoky", "smooth", "snowy", "soft", "sparse",
    "speckled", "spiral", "steep", "stony", "striped", "sturdy", "sunny", "swampy",
    "tangled", "tawny", "tidal", "twisted", "velvet", "violet", "wavy", "windy",
    "wooden", "woolen", "woven", "yellow",
)  # fmt: skip
NOUNS = (
    "acorn", "anchor", "apricot", "badger", "barn", "basket", "beaver", "beetle",
    "blanket", "bridge", "bucket", "cactus", "candle", "canoe", "canyon", "carpet",
    "cedar", "chestnut", "chimney", "cinnamon", "cliff", "clover", "compass", "coral",
    "cottage", "crystal", "curtain", "daisy", "desert", "dolphin", "easel", "falcon",
    "feather", "fern", "fiddle", "flute", "fossil", "fountain", "garden", "ginger",
    "glacier", "gravel", "harbor", "harp", "hedgehog", "heron", "hive", "honey",
    "island", "kettle", "ladder", "ladle", "lagoon", "lantern", "lemon", "lens",
    "lighthouse", "limestone", "lizard", "magnet", "maple", "marsh", "meadow", "mirror",
    "mitten", "moss", "moth", "mushroom", "needle", "oar", "orchard", "otter", "owl",
    "pearl", "pebble", "pillow", "pine", "plum", "pond", "prism", "pulley", "quilt",
    "raven", "reef", "ribbon", "river", "saddle", "sail", "seashell", "sparrow",
    "spoon", "squirrel", "teapot", "telescope", "thimble", "thread", "thistle", "tulip",
    "tunnel", "turtle", "umbrella", "valley", "vase", "violin", "volcano", "walnut",
    "wheel", "willow", "windmill", "wren",
)  # fmt: skip
# Question frames; each names two things, "the {adjective} {noun}".
PROMPT_FRAMES = (
    "Explain the difference between the {0} {1} and the {2} {3} in plain words.",
    "How does the {0} {1} compare with the {2} {3}?",
    "What do the {0} {1} and the {2} {3} have in common?",
    "Why is the {0} {1} often compared to the {2} {3}?",
    "Which matters more in a story, the {0} {1} or the {2} {3}?",
    "Tell me a short fact linking the {0} {1} to the {2} {3}.",
    "Could the {0} {1} ever replace the {2} {3}, and why?",
    "Write one sentence about the {0} {1} meeting the {2} {3}.",
)
# Draws per prompt before giving up: the space holds ~34,000 prompts per run and
# benchmarks use up to 30,000, so draws are rejected more often towards the end
# (30,000 take ~1.5 s).
_MAX_DRAWS = 10_000


class MissPrompts:
    """Unique, cacheable prompts, none a near-duplicate of another: each one a true miss.

    A prompt is a question frame naming two things ("the mossy heron", "the copper
    kettle"). What makes two such prompts close for the embedder is sharing a frame and a
    thing, or a frame and both nouns; within a run each (frame, adjective, noun) and each
    (frame, noun pair) is used once. Measured over 3,000 prompts with the shipped USE
    embedder, the closest pair then scores a raw cosine of ~0.94 (calibrated ~0.72), below
    the review band (calibrated 0.85, raw ~0.959): a miss is classified, looked up,
    embedded and searched, and ends `below_threshold` (no entity check, no review).
    Over 30,000 prompts (what `benchmarks/load.py` draws) the closest pair reaches raw
    0.967, two prompts of one frame with the adjectives swapped between different
    nouns: such a rare pair is reviewed or rejected by the entity check, still a miss.

    No marker shared by all prompts of a run (a salt phrase) is added: one shared clause
    lifts the closest pairs into the review band. The words come from a random seed per
    run instead, and the gateway's data directory is new for every run.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._things: set[tuple[int, str, str]] = set()  # (frame, adjective, noun)
        self._noun_pairs: set[tuple[int, str, str]] = set()  # (frame, noun, noun), sorted
        self.issued = 0

    def next_prompt(self) -> str:
        """A prompt no earlier one resembles (an unused thing implies an unused prompt)."""
        rng = self._rng
        for _ in range(_MAX_DRAWS):
            frame = rng.randrange(len(PROMPT_FRAMES))
            adj1, adj2 = rng.sample(ADJECTIVES, 2)
            noun1, noun2 = rng.sample(NOUNS, 2)
            things = {(frame, adj1, noun1), (frame, adj2, noun2)}
            pair = (frame, min(noun1, noun2), max(noun1, noun2))
            if pair in self._noun_pairs or not things.isdisjoint(self._things):
                continue
            self._things |= things
            self._noun_pairs.add(pair)
            self.issued += 1
            return PROMPT_FRAMES[frame].format(adj1, noun1, adj2, noun2)
        raise BenchError(f"ran out of dissimilar miss prompts after {self.issued}")

    def body(self, _index: int = 0) -> bytes:
        """A request body with the next prompt (fits `throughput`'s `body_for`)."""
        return chat_body(self.next_prompt())
