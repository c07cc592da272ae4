"""The request bodies of a run, and the workloads that draw from them.

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

New prompts come from `gateway_tools.bench.prompts.MissPrompts`: mutually dissimilar, so a
gateway miss takes the whole path (embed, search, below threshold), never a semantic hit
on an earlier new prompt. They are generated once per run (~1.5 s for 30,000), so the
client spends no time on them during a phase.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from gateway_tools.bench.prompts import MissPrompts, chat_body

REPEAT, PARAPHRASE, NEW = "repeat", "paraphrase", "new"
KINDS = (REPEAT, PARAPHRASE, NEW)

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
