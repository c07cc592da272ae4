"""The one prompt generator of the harness: the request bodies of every benchmark.

`gateway bench` sends `MissPrompts` (and fixed hit prompts, see `constants`);
`benchmarks/load.py` and `benchmarks/soak.py` send a `PromptBank` through a `Workload`.
Three kinds of request:

- repeat: the exact text of a primed question (an exact-cache hit for every cache);
- paraphrase: another wording of a primed question, never sent verbatim before (a
  semantic hit for the gateway, a miss for an exact-only cache);
- new: a prompt unlike every other one of the run (a miss everywhere).

The primed questions are "How do I <task> in <language>?" (30 tasks x 10 languages).
Their paraphrases swap the question frame only ("How can I ...", "How do you ...",
"How should I ...", "How to ..."): with the shipped embedder and the default policy each
of these 1,200 was served by the semantic cache (`x-gateway-cache: semantic`) in a probe
against all 300 questions primed at once. Frames that changed word order ("In Python,
how do I ...") or register ("how do i ...") were dropped: the structure guard or the
threshold rejects some of them, and a paraphrase phase must measure the hit path.

New prompts come from `MissPrompts`: mutually dissimilar, so a
gateway miss takes the whole path (embed, search, below threshold), never a semantic hit
on an earlier new prompt. They are generated once per run (~1.5 s for 30,000), so the
client spends no time on them during a phase.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field

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


REPEAT, PARAPHRASE, NEW = "repeat", "paraphrase", "new"

TASKS = (
    "sort a list", "reverse a string", "read a text file", "parse a JSON string",
    "merge two dictionaries", "remove duplicates from a list",
    "convert a string to an integer", "split a string by commas",
    "check if a key exists in a map", "format a floating point number",
    "iterate over a dictionary", "handle an exception",
    "define a function with default arguments", "concatenate two lists",
    "generate a random number", "count the words in a string", "flatten a nested list",
    "trim whitespace from a string", "compare two strings", "copy an array",
    "join a list of strings", "write a unit test", "import a module", "declare a constant",
    "convert a list to a set", "find the largest value in a list",
    "capitalize the first letter of a string", "check if a string is empty",
    "filter a list", "create an empty dictionary",
)  # fmt: skip
LANGUAGES = (
    "Python", "JavaScript", "Java", "Ruby", "Go", "Rust", "Kotlin", "Swift", "PHP", "Perl",
)  # fmt: skip
QUESTION_FRAME = "How do I {task} in {language}?"
PARAPHRASE_FRAMES = (
    "How can I {task} in {language}?",
    "How do you {task} in {language}?",
    "How should I {task} in {language}?",
    "How to {task} in {language}?",
)
_FIRST_SEEN_FRAME = PARAPHRASE_FRAMES[2]  # "How should I ...": not a fixed bench prompt


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    # One block of request kinds; every block is shuffled, so the shares are exact over
    # any whole number of blocks and the order is still irregular.
    block: tuple[str, ...]
    description: str

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self.block)


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("exact", (REPEAT,), "every request repeats a primed question"),
        Workload("miss", (NEW,), "every request is a new prompt"),
        Workload(
            "mix",
            (REPEAT, REPEAT, REPEAT, PARAPHRASE, NEW),
            "60 % repeats, 20 % paraphrases of primed questions, 20 % new prompts",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class PromptBank:
    """Every body of a run, built once and shared (read-only) by every target."""

    cold: tuple[bytes, ...]  # primed questions that are never repeated verbatim
    hot: tuple[bytes, ...]  # primed questions that the repeats draw from
    paraphrases: tuple[bytes, ...]  # of every primed question, in shuffled order
    fresh: tuple[bytes, ...]  # new prompts

    @property
    def primed(self) -> tuple[bytes, ...]:
        """Cold first: a FIFO cache (LiteLLM's in-memory one) then keeps the hot ones."""
        return self.cold + self.hot

    @classmethod
    def build(cls, seed: int, hot_count: int, fresh_count: int) -> PromptBank:
        rng = random.Random(seed)
        pairs = list(itertools.product(TASKS, LANGUAGES))
        rng.shuffle(pairs)
        if not 0 < hot_count <= len(pairs):
            raise ValueError(f"hot_count must be between 1 and {len(pairs)}")
        questions = [chat_body(QUESTION_FRAME.format(task=t, language=lang)) for t, lang in pairs]
        paraphrases = [
            chat_body(frame.format(task=t, language=lang))
            for t, lang in pairs
            for frame in PARAPHRASE_FRAMES
        ]
        rng.shuffle(paraphrases)  # consecutive paraphrases are of different questions
        misses = MissPrompts(rng)
        fresh = tuple(misses.body() for _ in range(fresh_count))
        split = len(questions) - hot_count
        return cls(tuple(questions[:split]), tuple(questions[split:]), tuple(paraphrases), fresh)


def first_seen_paraphrases(
    seed: int, count: int, exclude: frozenset[str] = frozenset()
) -> list[tuple[bytes, bytes]]:
    """Up to `count` (question, paraphrase) bodies, one per (task, language) pair in a
    seeded order, leaving out pairs whose question is in `exclude`. The paraphrase uses
    the "How should I" frame, which no fixed prompt of `gateway bench` uses: measured
    once each, none of them has been seen (parsed, embedded) by the gateway before."""
    pairs = list(itertools.product(TASKS, LANGUAGES))
    random.Random(seed).shuffle(pairs)
    chosen: list[tuple[bytes, bytes]] = []
    for task, language in pairs:
        question = QUESTION_FRAME.format(task=task, language=language)
        if question in exclude:
            continue
        paraphrase = _FIRST_SEEN_FRAME.format(task=task, language=language)
        chosen.append((chat_body(question), chat_body(paraphrase)))
        if len(chosen) == count:
            break
    return chosen


@dataclass(slots=True)
class Cursors:
    """Where one target is in the bank's paraphrases and new prompts. Each target has
    its own: every target gets the same sequence, and none sees a text twice until the
    list is used up (then it starts over, and `wraps` says so)."""

    paraphrase: int = 0
    fresh: int = 0
    wraps: dict[str, int] = field(default_factory=lambda: {PARAPHRASE: 0, NEW: 0})

    def take(self, kind: str, items: tuple[bytes, ...]) -> bytes:
        index = self.paraphrase if kind == PARAPHRASE else self.fresh
        if index >= len(items):
            index = 0
            self.wraps[kind] += 1
        if kind == PARAPHRASE:
            self.paraphrase = index + 1
        else:
            self.fresh = index + 1
        return items[index]


Request = tuple[str, bytes]  # (kind, body)


def request_source(
    bank: PromptBank, workload: Workload, cursors: Cursors, seed: str
) -> Callable[[], Request]:
    """The requests of one phase, in order. `seed` names the phase (workload and
    concurrency): every target of the phase gets the same kinds and the same repeats."""
    rng = random.Random(seed)
    block: list[str] = []

    def next_request() -> Request:
        if not block:
            block.extend(workload.block)
            rng.shuffle(block)
        kind = block.pop()
        if kind == REPEAT:
            return kind, bank.hot[rng.randrange(len(bank.hot))]
        return kind, cursors.take(kind, bank.paraphrases if kind == PARAPHRASE else bank.fresh)

    return next_request
