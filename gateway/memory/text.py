"""Text normalisation shared by retrieval, the session cache and deduplication."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACES = re.compile(r"\s+")
# Words, numbers and codes ("ORD-12345", "v2.1", "user_id"), or single CJK characters.
_TOKEN = re.compile(
    r"[0-9a-z]+(?:[-_.:/#][0-9a-z]+)*|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CODE_PARTS = re.compile(r"[-_.:/#]")
# Function words carry no evidence of topic; dropping them keeps keyword scores about
# the words that matter.
_STOPWORDS = frozenset(
    " ".join(
        (
            "a an the and or but if of to in on at by for with from as is are was were be",
            "been being am do does did have has had i me my we our you your he him his she",
            "her it its they them their this that these those what which who whom whose when",
            "where why how will would can could should shall may might must not no so than",
            "then there here about into over after before up down out just also very too s t",
        )
    ).split()
)


def folded(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the text two writers would agree on."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def dedup_key(text: str) -> str:
    """The one deduplication key: MD5 of the folded text (not a security use)."""
    return hashlib.md5(folded(text).encode("utf-8"), usedforsecurity=False).hexdigest()


def keyword_terms(text: str) -> list[str]:
    """Terms for keyword matching: English words and whole codes (plus their parts, so
    "ORD-12345" matches "12345"), and CJK characters with their bigrams (Chinese has no
    spaces; bigrams make "企业版" match as a phrase, not as three loose characters)."""
    terms: list[str] = []
    previous_cjk: str | None = None
    for token in _TOKEN.findall(folded(text)):
        if _CJK.fullmatch(token):
            terms.append(token)
            if previous_cjk is not None:
                terms.append(previous_cjk + token)
            previous_cjk = token
            continue
        previous_cjk = None
        if token in _STOPWORDS:
            continue
        if token.isalpha():
            token = _stem(token)
        terms.append(token)
        if _CODE_PARTS.search(token):
            terms.extend(part for part in _CODE_PARTS.split(token) if part)
    return terms


def _stem(word: str) -> str:
    """A light English suffix stripper ("deploys", "deployed", "deploying" -> "deploy"):
    enough for keyword overlap; both sides of a match go through it."""
    if len(word) <= 4:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 5:
        return word[:-2]
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word
