"""English verb inflection for the rule files' `inflect` word lists: a verb's base, -s,
past/participle and -ing forms, so a rule file lists "cancel" once, not its five forms."""

from __future__ import annotations

from collections.abc import Mapping

# Irregular past forms for `inflect` (regular forms are derived).
_IRREGULAR: Mapping[str, tuple[str, ...]] = {
    "pay": ("paid",),
    "send": ("sent",),
    "buy": ("bought",),
    "set": ("set",),
    "reset": ("reset",),
    "put": ("put",),
    "make": ("made",),
    "take": ("took", "taken"),
    "get": ("got", "gotten"),
    "wake": ("woke", "woken"),
    "sell": ("sold",),
    "shut": ("shut",),
    "withdraw": ("withdrew", "withdrawn"),
    "freeze": ("froze", "frozen"),
    "unfreeze": ("unfroze", "unfrozen"),
    "give": ("gave", "given"),
    "find": ("found",),
    "run": ("ran",),
    "keep": ("kept",),
    "throw": ("threw", "thrown"),
}


def inflections(verb: str) -> set[str]:
    """Base, -s, past/participle and -ing forms of a (possibly multi-word) verb."""
    head, _, rest = verb.partition(" ")
    tail = f" {rest}" if rest else ""
    third = head + "es" if head.endswith(("s", "sh", "ch", "x", "z")) else head + "s"
    forms = {head, third}
    forms.update(_IRREGULAR.get(head, ()))
    if head.endswith("e"):
        forms.update({head + "d", head[:-1] + "ing"})
    elif head.endswith("y") and head[-2:-1] not in "aeiou":
        forms.update({head[:-1] + "ied", head + "ing", head[:-1] + "ies"})
    else:
        forms.update({head + "ed", head + "ing"})
        # cancel -> cancelled/cancelling, stop -> stopped (British and doubled spellings)
        if (
            len(head) >= 3
            and head[-1] in "bdglmnprt"
            and head[-2] in "aeiou"
            and (head[-3] not in "aeiou")
        ):
            forms.update({head + head[-1] + "ed", head + head[-1] + "ing"})
    return {form + tail for form in forms}
