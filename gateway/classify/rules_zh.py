"""Chinese rules: write intents, personal records, time-sensitive questions.

spaCy's blank `zh` pipeline segments characters only, so these are character-level
regular expressions over NFKC-normalised text (full-width punctuation is ASCII by then).
A request is marked by who asks and how: 帮我/给我/替我/请/麻烦 + action, 我要/我想 +
action, or an action verb opening the sentence. 如何/怎么/怎样 before the action make it a
question about the action (informational, cacheable) unless the user asks for help doing
it (帮我). The patterns and word lists are data (`gateway/rules/data/zh/write.yaml`,
`personal.yaml`, `time.yaml`, `lexicon.yaml`).
"""

from __future__ import annotations

from gateway.rules.compile import RuleBook


class ChineseRules:
    """Compiled Chinese rules; one instance per classifier."""

    def __init__(self, rule_book: RuleBook | None = None) -> None:
        """Patterns and word lists from the rule files (`gateway/rules/data/`)."""
        book = rule_book if rule_book is not None else RuleBook.packaged()
        write = book.file("zh/write")
        self._request_then_action = write.pattern("zh.write.request_then_action")
        self._imperative = write.pattern("zh.write.imperative")
        self._info = write.pattern("zh.write.info")
        self._text_work = write.pattern("zh.write.text_work")
        self._record = write.pattern("zh.write.record")
        self._help_request = write.pattern("zh.write.help_request")
        self._info_before = write.pattern("zh.write.info_before")
        self._memory = write.pattern("zh.write.memory")
        self._personal = book.file("zh/personal").pattern("zh.personal.record")
        # Words that tie the answer to the moment it is asked: relative days, live data
        # (prices, scores, weather, news), office holders, ages and records.
        self._time_lexicon = book.file("zh/time").pattern("zh.time.lexicon")

    def write(self, text: str) -> str | None:
        """Rule name when `text` (normalised) asks the assistant to act."""
        # "我叫小王" sets a name; "舅舅的女儿叫我什么" asks a question.
        if self._memory.search(text) and not self._info.search(text):
            return "zh.write.memory"
        if self._text_work.search(text) and not self._record.search(text):
            return None
        request = self._request_then_action.search(text)
        # "我想知道怎么取消" and "请看下转账时间是否选择了" are questions; with
        # 帮我/替我 the act itself is asked for ("请帮我取消订单好吗").
        if request is not None and (
            self._help_request.search(request.group()) or not self._info.search(text)
        ):
            return "zh.write.request"
        imperative = self._imperative.search(text)
        if imperative is not None and not self._info_before.search(text):
            # A sentence opening with the action is a command unless it is a question
            # about the action ("取消订阅需要多久?", "删除会怎样?").
            tail = text[imperative.end() :]
            if not self._info.search(tail) or self._help_request.search(text):
                return "zh.write.imperative"
        return None

    def personal(self, text: str) -> str | None:
        return "zh.personal.record" if self._personal.search(text) else None

    def time(self, text: str) -> str | None:
        return "zh.time.lexicon" if self._time_lexicon.search(text) else None
