"""A learnt second opinion on English write intents: a logistic regression over words.

The rules in `write_en` read how a clause starts ("cancel ...", "can you book ...", "I
need my card frozen"). Commands phrase themselves in more ways than rules list: "on the
fan", "tv on turn", "get rid of tuesday's dinner", "tell carl my gps coordinates". This
model scores the words and word pairs of a short English turn (plus its first word and
first pair, where requests announce themselves) and fires when the rules did not and the
probability of an act reaches the shipped threshold.

It only ever adds write verdicts, and only where its training data speaks:

- a turn that opens as a question about the act ("how do I order checks?", "is there a
  car rental at LAX?") or as a request for text ("write ...", "give me ...") stays with
  the rules, which leave it cacheable on purpose;
- turns about a piece of writing (a speech, an essay, a paragraph ...) ask for text;
- turns of more than one sentence or longer than `max_tokens` words (documents, long
  prompts) are not scored: the training utterances are one-sentence commands.

Weights: `gateway/classify/models/write-intent-en-v1.json`, fitted by
`python -m gateway_tools.training.train_write_model` on CLINC150 train (CC BY 3.0) and SNIPS
train (CC0); the file records both, the threshold and the held-out metrics. Scoring is a
set of dictionary lookups (~6 microseconds for a ten-word turn).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar

from gateway.weights_file import WeightsFile

MODEL_FORMAT = 1
WEIGHTS_PACKAGE = "gateway.classify.models"
WEIGHTS_RESOURCE = "write-intent-en-v1.json"

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Questions about an act are informational: the rules decide them (see module docstring).
# "can you ..." and "can I ..." are requests often enough to leave to the model; "can we
# increase height after 23?", "should India ..." and "is my door locked?" ask, and
# "discuss the causes of ...", "generate a SQL query ..." or "give me ..." ask for text.
NOT_A_COMMAND_START = re.compile(
    r"^(?:how|what|what's|whats|why|when|where|which|who|whom|whose|is|are|was|were|am|"
    r"has|have|had|does|do|did|should|shall|explain|describe|define|discuss|summari[sz]e|"
    r"elaborate|analy[sz]e|compare|contrast|evaluate|outline|generate|write|draft|compose|"
    r"design|brainstorm|suggest|recommend|come\s+up\s+with|tell\s+me|give\s+me|show\s+me|"
    r"teach\s+me|"
    r"(?:can|could|would|will|may|might)\s+(?:we|one|people|someone|anyone|they|he|she|it|"
    r"a|an|the|this|that)\b)\b"
)
# A turn about a piece of writing asks for text ("send-off speech for a colleague").
_ABOUT_WRITING = re.compile(
    r"\b(?:speech|essay|poem|story|paragraph|sentence|article|letter|caption|slogan|headline|"
    r"bio|outline|summary|jargon|adjectives?|conclusion|introduction|toast|eulogy|lyrics)\b"
)
# A second sentence after the first: the training utterances are single sentences.
_SECOND_SENTENCE = re.compile(r"[.!?]\s+\S")


class WriteModelFormatError(ValueError):
    """The weights file does not describe a model this code can run."""


def turn_tokens(lower_text: str) -> list[str]:
    """The words of a normalised, lower-cased turn."""
    return _TOKEN.findall(lower_text)


def token_features(tokens: list[str]) -> set[str]:
    """Words, adjacent word pairs, and the first word and pair of the turn."""
    features = {f"u:{t}" for t in tokens}
    features.update(f"b:{a}_{b}" for a, b in pairwise(tokens))
    if tokens:
        features.add(f"s:{tokens[0]}")
    if len(tokens) > 1:
        features.add(f"s2:{tokens[0]}_{tokens[1]}")
    return features


def opens_as_question_or_text_request(lower_text: str) -> bool:
    """Turns the model leaves to the rules (see `NOT_A_COMMAND_START`)."""
    return NOT_A_COMMAND_START.match(lower_text) is not None


@dataclass(frozen=True, slots=True)
class WriteIntentModel(WeightsFile):
    FORMAT_ERROR: ClassVar[type[ValueError]] = WriteModelFormatError
    PACKAGE: ClassVar[str] = WEIGHTS_PACKAGE
    RESOURCE: ClassVar[str] = WEIGHTS_RESOURCE

    weights: dict[str, float]
    bias: float
    threshold: float  # probability at or above which the model fires
    max_tokens: int

    def probability(self, lower_text: str) -> float:
        """P(the turn asks the assistant to act), whatever its length or form."""
        return self._probability(turn_tokens(lower_text))

    def score(self, lower_text: str) -> float | None:
        """The probability for a short, single-sentence command-shaped English turn;
        None for a turn the model leaves to the rules (see the module docstring)."""
        text = lower_text.strip()
        if not text or opens_as_question_or_text_request(text) or _SECOND_SENTENCE.search(text):
            return None
        if _ABOUT_WRITING.search(text):
            return None
        tokens = turn_tokens(text)
        if len(tokens) > self.max_tokens:
            return None
        return self._probability(tokens)

    def fires(self, lower_text: str) -> bool:
        """Whether a short, non-question English turn scores as an act."""
        probability = self.score(lower_text)
        return probability is not None and probability >= self.threshold

    def _probability(self, tokens: list[str]) -> float:
        z = self.bias + sum(self.weights.get(f, 0.0) for f in token_features(tokens))
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WriteIntentModel:
        if data.get("format") != MODEL_FORMAT:
            raise WriteModelFormatError(f"unsupported format {data.get('format')!r}")
        weights = data.get("weights")
        if not isinstance(weights, dict) or not weights:
            raise WriteModelFormatError("'weights' must be a non-empty object")
        try:
            parsed = {str(k): float(v) for k, v in weights.items()}
            bias, threshold = float(data["bias"]), float(data["threshold"])
            max_tokens = int(data["max_tokens"])
        except (KeyError, TypeError, ValueError) as exc:
            raise WriteModelFormatError(f"bad field: {exc}") from exc
        if not 0.0 < threshold < 1.0 or max_tokens < 1:
            raise WriteModelFormatError("threshold must be in (0, 1) and max_tokens >= 1")
        return cls(parsed, bias, threshold, max_tokens)
