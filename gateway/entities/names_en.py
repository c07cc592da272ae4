"""English names and directions.

Names come from three sources, because each misses what another catches: spaCy's
entities (people, places, organisations, works), capitalised words spaCy does not tag
(`Kubernetes`, `Docker`), and a lexicon for users who type in lower case ("learn python
fast"). Every name is reduced to canonical tokens (aliases applied: US = USA = America)
so it can be looked up in the other text's tokens.

Directions are (from, to) pairs: "from X to Y", "convert X to Y", "X better than Y".
"""

from __future__ import annotations

import re
from typing import Any

from gateway.entities.lexicon_en import EnglishLexicon
from gateway.entities.numbers import EN_NUMBER_WORDS, EN_ORDINALS
from gateway.entities.slots import SlotBuilder
from gateway.entities.text import (
    Masked,
    alternation,
    keyed,
    phrase_key,
    phrases,
    word_pattern,
    words,
)
from gateway.entities.units import Units

_LABELS = frozenset(
    {"PERSON", "GPE", "LOC", "ORG", "PRODUCT", "NORP", "FAC", "EVENT", "WORK_OF_ART", "LANGUAGE"}
)
# A sentence-initial single-word entity with these tags is a spaCy mistake ("Convert"
# tagged PERSON in "Convert 50 euros to dollars").
_NOT_NAME_TAGS = frozenset({"VERB", "AUX", "ADV", "INTJ", "PRON", "ADP", "SCONJ", "DET", "ADJ"})
_NAME_TAGS = frozenset({"PROPN", "NOUN", "X"})
_SENTENCE_ENDS = (".", "?", "!", ":", ";", '"', "(", "\n")
# Short letter groups joined by "&" are names in any case: at&t, h&m, p&g, s&p, r&d.
_AMPERSAND_NAME = re.compile(r"[a-z]{1,3}&[a-z]{1,3}")
MULTIWORD_NAMES = phrases(
    """
    new york,  new zealand,  new jersey,  new delhi,  new orleans,  los angeles,  san francisco,
    san diego,  las vegas,  hong kong,  south korea,  north korea,  south africa,  saudi arabia,
    united arab emirates,  sri lanka,  costa rica,  puerto rico,  czech republic,  roth ira,
    google drive,  google docs,  google sheets,  google maps,  microsoft word,  microsoft teams,
    apple music,  apple watch,  amazon prime,  prime video,  disney plus,  hbo max,
    visual studio,  android studio,  power bi,  react native,  ruby on rails,  spring boot,
    world war i,  world war ii,  world cup
    """
)
FILE_FORMATS = frozenset(
    words(
        """
        pdf word doc docx excel xls xlsx csv json xml yaml yml toml html markdown md txt jpg jpeg
        png gif webp svg heic mp3 mp4 wav flac mov avi mkv epub mobi zip rar tar ppt pptx odt rtf
        tiff bmp parquet
        """
    )
)


class EnglishNames:
    """Compiled once per extractor."""

    def __init__(self) -> None:
        lex = EnglishLexicon.packaged()
        self._lex = lex
        unit_names = Units.packaged().EN_UNITS
        self._cased_aliases = re.compile(
            r"(?<![\w.])(?:U\.S\.A\.?|U\.S\.?|U\.K\.?|USA|US|UK)(?![\w])"
        )
        self._alias_table = keyed(lex.ALIASES)
        self._aliases = word_pattern(lex.ALIASES, re.IGNORECASE)
        self._lexicon = word_pattern((*lex.ENTITY_NAMES, *MULTIWORD_NAMES))
        # Hyphens split ("IIT-JEE" = "IIT JEE"); dots and pluses do not ("node.js", "c++").
        self._token = re.compile(r"[a-z0-9][a-z0-9+#&'.]*[a-z0-9+#]|[a-z0-9]")
        self._cased_token = re.compile(
            r"(?<![A-Za-z0-9])(?:[A-Za-z][A-Za-z0-9+#&'._-]*[A-Za-z0-9+#]|[A-Za-z])"
        )
        self._not_names = frozenset(
            {
                *lex.NOT_NAMES, *lex.STOPWORDS, *lex.MONTHS, *lex.WEEKDAYS, *lex.SEASONS,
                *lex.TIERS, *lex.TIER_CONTEXTS, *lex.NEGATIONS, *EN_NUMBER_WORDS,
                *lex.GENERIC_NAME_WORDS,
                *EN_ORDINALS, *lex.RELATIVE_MODIFIERS, *lex.RELATIVE_NOUNS,
                *(word for phrase in lex.HOLIDAYS for word in phrase.split()),
                *(word for phrase in lex.TIME_WORDS for word in phrase.split()),
                *(word for phrase in unit_names for word in phrase.split()),
            }
        )  # fmt: skip
        self._units = keyed(unit_names)
        self._terms = frozenset({*lex.ENTITY_NAMES, *FILE_FORMATS, *self._units.values()})
        self._stops = frozenset(lex.ENDPOINT_STOPS)
        span = r"[^,.;?!()\"]"
        self._from_to = re.compile(
            rf"\bfrom\s+(?P<a>{span}{{1,60}}?)\s+(?:to|into|->|→)\s+(?P<b>{span}{{1,60}})"
        )
        self._verb_to = re.compile(
            rf"\b(?:{alternation(lex.DIRECTION_VERBS)})\s+(?P<a>{span}{{1,60}}?)\s+"
            rf"(?:to|into)\s+(?P<b>{span}{{1,60}})"
        )
        self._comparison = re.compile(
            rf"\b(?:{alternation(lex.COMPARATIVE_HEADS)})\s+(?P<a>{span}{{1,50}}?)\s+"
            rf"(?:(?:more|less)\s+[a-z]+|better|worse|[a-z]+er)\s+than\s+(?P<b>{span}{{1,50}})"
        )
        self._term_to = re.compile(
            r"(?<![\w+#.])(?P<a>[a-z0-9+#.]+)\s+(?:to|into|->|→)\s+(?P<b>[a-z0-9+#.]+)"
        )

    def apply_aliases(self, text: str) -> str:
        """One spelling per name: `U.S.`, `USA`, `United States`, `American` -> `usa`."""
        text = self._cased_aliases.sub(lambda m: "usa" if "S" in m.group(0) else "uk", text)
        return self._aliases.sub(lambda m: self._alias_table[phrase_key(m.group(0))], text)

    def lexicon(self, masked: Masked, slots: SlotBuilder) -> None:
        """Known names, taken before numbers and polarity read "New York" or "Go"."""
        for match in masked.take(self._lexicon):
            slots.entities.add(phrase_key(match.group(0)))

    def recognise(self, masked: Masked, doc: Any, slots: SlotBuilder) -> None:
        own_tokens = set(self._tokens(masked.low))
        slots.mentions.update(own_tokens)
        slots.entities.update(t for t in own_tokens if _AMPERSAND_NAME.fullmatch(t))
        tagged: set[str] = set()  # tokens inside spaCy's entities
        for ent in doc.ents:
            if ent.label_ in _LABELS and self._is_name(doc, ent):
                key = self._key(self.apply_aliases(ent.text))
                if not set(key.split()) <= own_tokens:
                    continue  # rewritten by a longer alias: "US dollar" is "usd"
                tagged.update(key.split())
                if key and ent.label_ == "PERSON":
                    key = key.split()[-1]  # "Winston Churchill" is also "Churchill"
                if key:
                    slots.entities.add(key)
        if not self._title_case(masked.cased):
            tags = {token.lower_: token.pos_ for token in doc}
            slots.entities.update(
                name
                for name in self._capitalised(masked.cased, tags)
                if not set(name.split()) <= tagged
            )

    def _is_name(self, doc: Any, ent: Any) -> bool:
        if not any(c.isupper() for c in ent.text):
            return False  # lower-case "entities" are guesses; the lexicon covers names
        first = ent[0]
        initial = ent.start == 0 or doc[ent.start - 1].text in _SENTENCE_ENDS
        return not (
            initial
            and len(ent) == 1
            and (first.pos_ in _NOT_NAME_TAGS or first.lower_ in self._lex.NOT_NAMES)
        )

    def _key(self, text: str) -> str:
        return " ".join(t for t in self._tokens(text.lower()) if self._is_name_token(t))

    def _is_name_token(self, token: str) -> bool:
        # Tokens with digits are numbers or codes, compared in their own slots.
        return token not in self._not_names and not any(c.isdigit() for c in token)

    def _tokens(self, text: str) -> list[str]:
        return [t.removesuffix("'s") for t in self._token.findall(text)]

    def _capitalised(self, cased: str, tags: dict[str, str]) -> set[str]:
        """Runs of capitalised nouns that are not at a sentence start: `Kubernetes`,
        `Roth IRA`, `VS Code` (not "Explain Briefly")."""
        names: set[str] = set()
        run: list[str] = []
        run_end = -1
        for match in self._cased_token.finditer(cased):
            word = match.group(0)
            before = cased[: match.start()].rstrip()
            keep = (
                any(c.isupper() for c in word)
                and before != ""
                and not before.endswith(_SENTENCE_ENDS)
                and not any(c.isdigit() for c in word)
                and tags.get(word.lower(), "PROPN") in _NAME_TAGS
                and self._is_name_token(_base(word))
            )
            if keep and run and match.start() == run_end + 1:
                run.append(_base(word))
            elif keep:
                if run:
                    names.add(" ".join(run))
                run = [_base(word)]
            else:
                if run:
                    names.add(" ".join(run))
                run = []
            run_end = match.end()
        if run:
            names.add(" ".join(run))
        return names

    @staticmethod
    def _title_case(cased: str) -> bool:
        """Headline-style text capitalises every word; capitals say nothing there."""
        words = [w for w in cased.split() if len(w) > 3 and w[0].isalpha()]
        capitalised = sum(1 for w in words if w[0].isupper())
        return len(words) >= 3 and capitalised >= 0.6 * len(words)

    def directions(self, low: str, slots: SlotBuilder) -> None:
        pairs: list[tuple[str, str]] = []
        for match in self._from_to.finditer(low):
            pairs.append(
                (self._endpoint(match.group("a"), last=False), self._endpoint(match.group("b")))
            )
        for match in self._verb_to.finditer(low):
            if " from " not in f" {match.group('a')} ":
                pairs.append(
                    (self._endpoint(match.group("a"), last=True), self._endpoint(match.group("b")))
                )
        for match in self._comparison.finditer(low):
            pairs.append(
                (self._endpoint(match.group("a"), last=True), self._endpoint(match.group("b")))
            )
        for match in self._term_to.finditer(low):
            a, b = self._canonical(match.group("a")), self._canonical(match.group("b"))
            if a in self._terms and b in self._terms:
                pairs.append((a, b))
        slots.directions.update((a, b) for a, b in pairs if a and b and a != b)

    def _endpoint(self, phrase: str, last: bool = False) -> str:
        """The head of one side: `my bank` -> `bank`, `50 euros` -> `eur`."""
        tokens = self._tokens(phrase)
        if not last:
            for index, token in enumerate(tokens):
                if token in self._stops:
                    tokens = tokens[:index]
                    break
        content = [
            self._canonical(t)
            for t in tokens
            if t not in self._lex.STOPWORDS
            and t not in EN_NUMBER_WORDS
            and not t.replace(".", "").isdigit()
        ]
        content = [t for t in content if t]
        return " ".join(content[-3:] if last else content[:3])

    def _canonical(self, token: str) -> str:
        return self._units.get(token, token)


def _base(word: str) -> str:
    return word.lower().removesuffix("'s").replace("-", " ")
