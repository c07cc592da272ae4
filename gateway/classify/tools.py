"""Tools that act: a request offering `send_email` may end in an email being sent.

A cached answer would replay the model's tool call (or its text) without the model ever
deciding again, and the caller would act twice or not at all. Read-only tools
(`get_weather`, `search_docs`) do not make a request a write; their results are covered by
the other classes (time-sensitive, IDs).

A tool's verb is a word of its name (`send_email`, `createTicket`, `orders.cancel`), or
failing that the first word of its description ("Sends an email ...").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ACTING_VERBS = _words(
    """
    send create delete remove update modify edit patch put post insert upsert write save
    book reserve transfer cancel pay refund charge purchase buy order sell place submit set
    add append move rename upload publish share invite reply forward archive mark assign
    approve reject decline accept close open merge commit push deploy apply execute run
    launch trigger start stop restart kill terminate drop truncate grant revoke reset
    register enroll subscribe unsubscribe notify email sms text message call dial schedule
    reschedule lock unlock block unblock freeze unfreeze enable disable activate deactivate
    withdraw deposit issue renew redeem void suspend resume pause play skip mute unmute
    turn switch toggle adjust increase decrease change replace clear purge wipe destroy
    provision scale install uninstall upgrade downgrade import sync tweet like follow
    unfollow comment confirm complete finish file report dispute claim sign initiate
    process return exchange ship deliver dispatch print fax
    """
)
READ_VERBS = _words(
    """
    get list search find fetch read query lookup look check retrieve show view describe
    calculate compute convert translate summarize summarise count validate verify estimate
    predict analyze analyse recommend suggest explain lint format parse extract classify
    detect identify measure compare preview render inspect browse scan watch track monitor
    resolve geocode weather forecast quote price
    """
)
# Acting verbs that are also common nouns count only where a verb stands, first:
# `email_report` sends, `user_email` does not.
NOUN_LIKE = _words(
    """
    text email message comment file report order charge claim call sms post return
    exchange process issue set like print run review play deposit transfer sign switch
    """
)
# After a noun-like first word these make it a noun: `text_to_speech`, `email_for_user`.
_PREPOSITIONS = _words("to for of from by in on with")
# Trailing nouns of read-only names without a verb: `order_status`, `account_info`.
READ_NOUNS = _words("status info information details detail history summary balance")
# Tool types without a function spec that only read.
_READ_ONLY_TYPES = frozenset({"file_search", "web_search", "web_search_preview"})


class ToolInspector:
    """Decides whether a request's tools can act; patterns compiled once."""

    def __init__(self) -> None:
        self._camel = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
        self._separators = re.compile(r"[\s_.:/-]+")
        self._word = re.compile(r"[A-Za-z]+")

    def acting(self, tools: Sequence[Mapping[str, Any]] | None, tool_choice: Any) -> bool:
        """True when the model may call a tool that acts, given `tool_choice`."""
        if not tools or tool_choice == "none":
            return False
        candidates = [t for t in tools if isinstance(t, Mapping)]
        # A forced function: only that one can be called.
        if isinstance(tool_choice, Mapping):
            function = tool_choice.get("function")
            forced = (
                function.get("name") if isinstance(function, Mapping) else tool_choice.get("name")
            )
            if isinstance(forced, str):
                candidates = [t for t in candidates if _tool_name(t) == forced]
        return any(self.tool_acts(t) for t in candidates)

    def tool_acts(self, tool: Mapping[str, Any]) -> bool:
        """Whether one OpenAI tool definition names an action with side effects."""
        function = tool.get("function")
        spec: Mapping[str, Any] = function if isinstance(function, Mapping) else tool
        name = spec.get("name")
        words = [_verb_of(w) for w in self._name_words(name)] if isinstance(name, str) else []
        if words:
            # A read verb leads (`get_order`) or trails (`weather_lookup`), or the name is
            # a record's state (`order_status`): read-only, whatever nouns it mentions.
            if words[0] in READ_VERBS or words[-1] in READ_VERBS or words[-1] in READ_NOUNS:
                return False
            # The verb leads (`send_email`) or, namespaced, trails (`orders.cancel`).
            leads = words[0] in ACTING_VERBS and not (
                words[0] in NOUN_LIKE and len(words) > 1 and words[1] in _PREPOSITIONS
            )
            if leads or any(word in ACTING_VERBS and word not in NOUN_LIKE for word in words[1:]):
                return True
        description = spec.get("description")
        if isinstance(description, str):
            first = self._word.search(description)
            if first is not None:
                return _verb_of(first.group().lower()) in ACTING_VERBS
            return False
        if isinstance(function, Mapping) or words or tool.get("type") in (None, "function"):
            return False  # a function that says nothing about acting
        # Built-in tools without a function spec (code interpreter, computer use) act,
        # except the known read-only ones.
        return tool.get("type") not in _READ_ONLY_TYPES

    def _name_words(self, name: str) -> list[str]:
        return [w.lower() for w in self._separators.split(self._camel.sub(" ", name)) if w]


def _verb_of(word: str) -> str:
    """`sends` -> `send`, `creates` -> `create` (descriptions use the third person)."""
    if word in ACTING_VERBS or word in READ_VERBS:
        return word
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", ""), ("es", "e")):
        if word.endswith(suffix):
            stem = word[: -len(suffix)] + replacement
            if stem in ACTING_VERBS or stem in READ_VERBS:
                return stem
    return word


def _tool_name(tool: Mapping[str, Any]) -> str | None:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return name if isinstance(name, str) else None
