"""Quoted words: what a request asks about verbatim.

`What does "carpe diem" mean?` and `What does "carpe noctem" mean?` are different
questions however close they embed. Short quoted spans stay in the ask (the turn
splitter moves only long ones into the material, see `gateway/turn/split.py`); when both
texts quote something, they must quote the same words, compared without case, spaces
and punctuation ("roll no.1" is "roll no. 1"). A text that quotes nothing is left to
the other slots: quotation marks are often only emphasis.
"""

from __future__ import annotations

import re

# Straight and curly double quotes, CJK corner brackets and title marks. Single quotes
# are left out: they are apostrophes far more often.
QUOTED_SPAN = re.compile(
    r'"([^"\n]{1,2000})"|“([^”]{1,500})”|「([^」]{1,500})」|『([^』]{1,500})』|《([^》]{1,200})》'
)
# Quoted spans this long are passages (material), not words asked about.
MAX_QUOTED_WORDS_CHARS = 40


def quoted_words(text: str) -> frozenset[str]:
    """The short quoted spans of `text`, each as its letters and digits, lower case."""
    found = set()
    for match in QUOTED_SPAN.finditer(text):
        inner = next(group for group in match.groups() if group is not None)
        if len(inner) < MAX_QUOTED_WORDS_CHARS:
            key = "".join(c for c in inner.casefold() if c.isalnum())
            if key:
                found.add(key)
    return frozenset(found)
