"""English write intents: does the user ask the assistant to act?

Decided per clause, from how the clause starts:

- an imperative: "cancel my order", "turn on the lights";
- a request to the assistant: "can you cancel ...", "would you mind cancelling ...";
- a first-person desire: "I want to cancel ...", "I need a flight to ...";
- a statement that implies the act: "my reservation is no longer needed", "I need my
  bank to know I'm travelling", "from now on call me Sam".

A clause that opens as a question about the action ("how do I cancel", "what happens if
I delete") is informational and stays cacheable. So does text work phrased as a command
("remove duplicates from this list", "change this sentence to passive voice") and
programming ("cancel a promise in JavaScript"): only objects that are records, devices,
money or messages make a weak verb such as "remove" or "change" an act.

Text arrives normalised and lower-cased. The patterns are data
(`gateway/rules/data/en/write.yaml`, word lists in `en/lexicon.yaml`), compiled once
when the rule book loads; this module is the procedure that combines them.
"""

from __future__ import annotations

import re

from gateway.rules.compile import RuleBook, RuleFile

# A long turn is judged on its first and last sentences, where requests are made.
_EDGE_SENTENCES = 4


class EnglishWriteRules:
    """Compiled English write-intent rules; one instance per classifier."""

    def __init__(self, rule_book: RuleBook | None = None) -> None:
        """Patterns and word lists from the rule files (`gateway/rules/data/`)."""
        book = rule_book if rule_book is not None else RuleBook.packaged()
        rules = book.file("en/write")
        self._sentence_split = rules.pattern("en.write.sentence_split")
        self._clause_split = rules.pattern("en.write.clause_split")
        self._inner_start = rules.pattern("en.write.inner_start")
        self._request_marker = rules.pattern("en.write.request_marker")
        self._fillers = rules.pattern("en.write.fillers")
        self._question = rules.pattern("en.write.question")
        self._wh_start = rules.pattern("en.write.wh_start")
        self._not_object = rules.pattern("en.write.not_object")
        self._imperative_adverbs = rules.pattern("en.write.imperative_adverbs")
        self._self_modal = rules.pattern("en.write.self_modal")
        self._self_modal_specific = rules.pattern("en.write.self_modal_specific")
        self._gerund_lead = rules.pattern("en.write.gerund_lead")
        self._memory = rules.pattern("en.write.memory")
        self._memory_guard = rules.pattern("en.write.memory_guard")
        self._memory_question = rules.pattern("en.write.memory_question")
        # Who asks, and how: (rule suffix, pattern); the verb must follow the lead.
        self._leads: tuple[tuple[str, re.Pattern[str]], ...] = (
            ("modal", rules.pattern("en.write.lead.modal_you")),
            ("modal", rules.pattern("en.write.lead.modal_possible")),
            ("desire", rules.pattern("en.write.lead.desire")),
            ("desire", rules.pattern("en.write.lead.desire_going")),
            ("modal", rules.pattern("en.write.lead.modal_other")),
        )
        self._strong_gerunds = frozenset(book.file("en/lexicon").words("strong_gerunds"))
        self._take_acts(rules)

    def _take_acts(self, rules: RuleFile) -> None:
        """The acts after a lead, their blockers, and the statements that imply one."""
        self._strong_start = rules.pattern("en.write.strong_start")
        self._weak_start = rules.pattern("en.write.weak_start")
        self._choice = rules.pattern("en.write.choice")
        self._strong_blockers = rules.pattern("en.write.strong_blockers")
        self._weak_blockers = rules.pattern("en.write.weak_blockers")
        self._programming = rules.pattern("en.write.programming")
        self._request_for_text = rules.pattern("en.write.request_for_text")
        self._text_work = rules.pattern("en.write.text_work")
        self._play = rules.pattern("en.write.play")
        self._play_or_listen_start = rules.pattern("en.write.play_or_listen_start")
        self._listen = rules.pattern("en.write.listen")
        self._communicate = rules.pattern("en.write.communicate")
        self._communicate_block = rules.pattern("en.write.communicate_block")
        self._call_object = rules.pattern("en.write.call_object")
        self._tell = rules.pattern("en.write.tell")
        self._setting = rules.pattern("en.write.setting")
        self._rating = rules.pattern("en.write.rating")
        self._device = rules.pattern("en.write.device")
        self._weak_object = rules.pattern("en.write.weak_object")
        self._acting_object = rules.pattern("en.write.acting_object")
        self._acting_any = rules.pattern("en.write.acting_any")
        self._bookable_word = rules.pattern("en.write.bookable_word")
        self._bookable_request = rules.pattern("en.write.bookable_request")
        self._ride = rules.pattern("en.write.ride")
        self._seek = rules.pattern("en.write.seek")
        self._participle = rules.pattern("en.write.participle")
        self._for_me = rules.pattern("en.write.for_me")
        self._purpose = rules.pattern("en.write.purpose")
        self._more = rules.pattern("en.write.more")
        self._language_setting = rules.pattern("en.write.language_setting")
        self._let_know = rules.pattern("en.write.let_know")
        self._unwanted = rules.pattern("en.write.unwanted")
        self._own_transfer = rules.pattern("en.write.own_transfer")
        self._wished_state = rules.pattern("en.write.wished_state")
        self._on_list = rules.pattern("en.write.on_list")
        self._asks_to_know = rules.pattern("en.write.asks_to_know")

    # --- decision ----------------------------------------------------------------------

    def write(self, text: str) -> str | None:
        """Rule name when `text` (normalised, lower-cased) asks the assistant to act."""
        earlier = ""  # the text before the clause being judged
        sentences = self._sentence_split.split(text)
        if len(sentences) > 2 * _EDGE_SENTENCES:
            sentences = sentences[:_EDGE_SENTENCES] + sentences[-_EDGE_SENTENCES:]
        for sentence in sentences:
            for raw in self._clause_split.split(sentence):
                rule = self._clause_starts(raw.strip(), earlier)
                if rule is not None:
                    return rule
                earlier += " " + raw
        return None

    def _clause_starts(self, raw: str, earlier: str) -> str | None:
        """Judge the clause from its start, then from later starts: after "and"/"then",
        and at mid-sentence requests ("... can you add it")."""
        first = self._fillers.sub("", raw)
        if not first:
            return None
        rule = self._clause_write(first, earlier)
        if rule is not None:
            return rule
        # A question's "and" joins parts of the question, but a request inside it still
        # counts ("do i have milk on my list if not please add it").
        question = self._question.match(first) is not None
        starts = {
            m.start()
            for m in self._request_marker.finditer(raw)
            if m.start() > 0 and (not question or raw.startswith("please", m.start()))
        }
        if not question and not self._choice.match(first):
            starts |= {m.end() for m in self._inner_start.finditer(raw)}
        for start in sorted(starts):
            clause = self._fillers.sub("", raw[start:].strip())
            if clause:
                rule = self._clause_write(clause, f"{earlier} {raw[:start]}")
                if rule is not None:
                    return rule
        return None

    def _clause_write(self, clause: str, earlier: str) -> str | None:
        """The rule that fires on one clause: a lead-free act (memory, gerund,
        statement), or a lead ("can you", "i want", an imperative) and an act after it."""
        wh = self._wh_start.match(clause) is not None
        rule = self._without_lead(clause, wh)
        if rule is not None:
            return rule
        kind, rest, strict = self._lead(clause)
        if kind is None:
            return None
        if self._memory.match(rest):
            return "en.write.memory"
        if self._asks_for_booking(clause, rest, wh):
            return f"en.write.{kind}"
        if strict:
            return f"en.write.{kind}" if self._self_asked_act(rest) else None
        if self._acts(rest, earlier) or (
            (kind != "imperative" or rest.startswith("use ")) and self._act_for(rest, earlier)
        ):
            return f"en.write.{kind}"
        return None

    def _without_lead(self, clause: str, wh: bool) -> str | None:
        """Acts that need no lead: profile writes, "would you mind cancelling", and
        statements that imply an act ("my reservation is no longer needed")."""
        if self._memory_question.match(clause) or (
            not wh and self._memory.search(clause) and not self._memory_guard.search(clause)
        ):
            return "en.write.memory"
        if self._gerund_acts(clause):
            return "en.write.modal"
        if self._for_me.search(clause) or (
            not self._question.match(clause) and self._states_act(clause)
        ):
            return "en.write.statement"
        return None

    def _asks_for_booking(self, clause: str, rest: str, wh: bool) -> bool:
        """Something to book or send ("i need a flight", "get me a cab"), or a wished
        participle ("i need my reservation cancelled")."""
        if (
            self._bookable_request.match(clause)
            or self._bookable_request.match(rest)
            or self._ride.match(rest)
            or (not wh and self._seek.search(clause))
            or self._seek.match(rest)
        ):
            return True
        for candidate in (clause, rest):
            participle = self._participle.search(candidate)
            if participle is not None and not self._not_object.search(
                candidate[: participle.end()]
            ):
                return True
        return False

    def _self_asked_act(self, rest: str) -> bool:
        """After a self-asked modal with nothing specific ("can i pay a bill", "can i
        change your language"): only unmistakable acts count; "can i make a reservation
        at X" asks whether X takes reservations."""
        acts = self._acts(rest, "") and not rest.startswith("make ")
        specific = self._acting_any.search(rest) is not None
        short_call = len(rest.split()) <= 3 and self._communicate.match(rest) is not None
        device = self._device.match(rest) or self._setting.match(rest)
        return bool((acts and specific) or short_call or device)

    def _act_for(self, rest: str, earlier: str) -> bool:
        """A request whose act is its purpose ("can i get some funds to pay my bill") or
        more of what an earlier clause ran out of ("i need more" after "out of checks")."""
        purpose = self._purpose.search(rest)
        if purpose is not None and not self._not_object.search(rest[: purpose.start()]):
            return True
        return bool(self._more.match(rest) and self._acting_any.search(earlier))

    def _lead(self, clause: str) -> tuple[str | None, str, bool]:
        """(kind, rest after the lead, strict); kind None for a question about the act."""
        for kind, lead in self._leads:
            match = lead.match(clause)
            if match:
                return kind, clause[match.end() :], False
        self_modal = self._self_modal.match(clause)
        if self_modal is not None:
            rest = clause[self_modal.end() :]
            strict = self._self_modal_specific.search(rest) is None
            if strict and clause.startswith("is it"):
                # "is it possible to cancel an order after it ships?" asks about rules.
                return None, clause, False
            return "modal", rest, strict
        if self._question.match(clause):
            return None, clause, False
        return "imperative", self._imperative_adverbs.sub("", clause), False

    def _gerund_acts(self, clause: str) -> bool:
        gerund = self._gerund_lead.match(clause)
        if gerund is None:
            return False
        name = next(g for g in ("g1", "g2", "g3", "g4") if gerund.group(g))
        word, after = gerund.group(name), clause[gerund.start(name) :]
        if word in ("finding", "getting"):
            return self._bookable_word.search(after) is not None
        return word in self._strong_gerunds or self._acting_object.search(after) is not None

    def is_code_or_text_work(self, text: str) -> bool:
        """Programming, or a command about a text ("change this sentence to ..."): the
        imperative asks how, or asks for text, and acts on nothing."""
        return bool(
            self._programming.search(text)
            or self._text_work.match(text)
            or self._request_for_text.match(text)
        )

    def rules_out_act(self, text: str) -> bool:
        """The rules know this turn does not act: programming or text work, or its verb
        is one of the known non-acts ("order these numbers", "book of genesis", "show me
        ..."). A learnt model must not overrule them."""
        if self.is_code_or_text_work(text):
            return True
        start = self._imperative_adverbs.sub("", self._fillers.sub("", text.strip()))
        if self._play_or_listen_start.match(start):  # "play the role of", "listen to me"
            return not (self._play.match(start) or self._listen.match(start))
        return bool(
            self._strong_blockers.match(start)
            or self._choice.match(start)
            or self._weak_blockers.match(start)
            or self._communicate_block.match(start)
        )

    def _states_act(self, clause: str) -> bool:
        """Declaratives that ask for an act: settings, messages, cancellations, moves."""
        return bool(
            self._language_setting.search(clause)
            or self._let_know.search(clause)
            or self._unwanted.search(clause)
            or self._own_transfer.search(clause)
            or self._wished_state.search(clause)
            or (self._on_list.search(clause) and not self._asks_to_know.search(clause))
        )

    def _acts(self, rest: str, earlier: str) -> bool:
        """Does `rest` start with an action that has side effects?"""
        if self.is_code_or_text_work(rest):
            return False
        if self._strong_start.match(rest):
            return not (self._strong_blockers.match(rest) or self._choice.match(rest))
        if self._communicate.match(rest) and not self._communicate_block.match(rest):
            return True
        if self._tell.match(rest) or self._setting.match(rest) or self._rating.match(rest):
            return True
        if self._play.match(rest) or self._listen.match(rest) or self._device.match(rest):
            return True
        if not self._weak_start.match(rest) or self._weak_blockers.match(rest):
            return False
        if self._weak_object.match(rest) or self._call_object.search(rest):
            return True
        # "on my to-do list, add cleaning": the object came first.
        return bool(earlier) and self._acting_object.search(earlier) is not None
