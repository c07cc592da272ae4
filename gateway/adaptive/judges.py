"""Judges of shadow verification: would the stored answer have served this request?

One protocol, two judges:

- `LocalAgreementJudge` (the default): no model call. The fresh answer (what the
  provider said to this request) and the stored answer agree: same entities, numbers,
  negation (the project's `EntityComparator`) and an embedding cosine of at least
  `min_cosine`. Meant for temperature-0 traffic, where a paraphrase gets the answer its
  twin got; sampled answers differ by chance, which the error estimate (exact repeats
  forwarded again: truly the same) measures and the verdicts are corrected for.
- `ModelJudge`: a chat model through the gateway's provider, shown the new request,
  the stored request and the stored answer (the reviewer's strict prompt), answering
  yes or no; it costs tokens, which are budgeted and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.providers.protocol import ChatProvider
from gateway.review.litellm_reviewer import build_messages, parse_verdict


@dataclass(frozen=True, slots=True)
class ShadowCase:
    query: str  # the new request's ask
    candidate: str  # the stored request's ask
    stored_answer: str
    fresh_answer: str  # what the provider answered the new request


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    same: bool
    tokens: int = 0  # judge tokens spent (prompt + completion)
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ShadowJudge(Protocol):
    name: str

    def estimated_tokens(self, case: ShadowCase) -> int:
        """Tokens a judgment will cost (0: no model call), for the budget."""
        ...

    async def judge(self, case: ShadowCase) -> JudgeVerdict:
        """Raises on failure: the judgment is then not counted."""
        ...


def casefolded_words(text: str) -> str:
    """The words of `text`, case-folded, one space apart (two answers that differ only
    in case and spacing say the same)."""
    return " ".join(text.split()).casefold()


class LocalAgreementJudge:
    def __init__(self, comparator: EntityComparator, embedder: Embedder, min_cosine: float):
        self._comparator = comparator
        self._embedder = embedder
        self._min_cosine = min_cosine
        self.name = "local"

    def estimated_tokens(self, case: ShadowCase) -> int:
        return 0

    async def judge(self, case: ShadowCase) -> JudgeVerdict:
        fresh, stored = casefolded_words(case.fresh_answer), casefolded_words(case.stored_answer)
        if fresh == stored:
            return JudgeVerdict(True)
        if not fresh or not stored:
            return JudgeVerdict(False)
        if not self._comparator.compare(case.fresh_answer, case.stored_answer).agree:
            return JudgeVerdict(False)
        vectors = np.asarray(await self._embedder.embed([case.fresh_answer, case.stored_answer]))
        cosine = float(np.dot(vectors[0], vectors[1]))
        return JudgeVerdict(cosine >= self._min_cosine)


# ~4 characters a token, the prompt's instructions, a 3-token answer.
_PROMPT_OVERHEAD_TOKENS = 200


class ModelJudge:
    def __init__(self, provider: ChatProvider, model: str) -> None:
        self._provider = provider
        self.model = model
        self.name = f"model:{model}"

    def estimated_tokens(self, case: ShadowCase) -> int:
        shown = len(case.query) + len(case.candidate) + min(len(case.stored_answer), 4000)
        return _PROMPT_OVERHEAD_TOKENS + shown // 4

    async def judge(self, case: ShadowCase) -> JudgeVerdict:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": build_messages(case.query, case.candidate, case.stored_answer),
            "temperature": 0,
            "max_tokens": 3,
        }
        response = await self._provider.complete(body)
        content = (response.get("choices") or [{}])[0].get("message", {}).get("content")
        usage = response.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        return JudgeVerdict(
            parse_verdict(str(content or "")),
            tokens=int(usage.get("total_tokens") or prompt + completion),
            prompt_tokens=prompt,
            completion_tokens=completion,
        )
