"""Unresolved follow-ups: the last user turn leans on something only earlier turns define.

"What about it?", "and the cheaper one", "那它呢" mean nothing alone; cached under their
own text they would be served to a different conversation about a different "it". The
semantic layer's fingerprint already includes earlier turns, but the exact layer and the
embedding of the last turn alone cannot tell "it" from "it", so such turns are never
cached.

English uses the tagger (POS) from the shared analyzer (no parser: pronoun resolution is
approximated by clause position); Chinese uses rules on characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# Positions in a list shown earlier ("the second option"); superlatives ("the best
# movie") are self-contained and left out.
_ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|latter|former|"
    "previous|next|other|above|same"
)
_LIST_MEMBERS = (
    "one|ones|option|options|choice|choices|item|items|point|points|step|steps|example|"
    "examples|method|methods|approach|approaches|solution|solutions|answer|answers|"
    "suggestion|suggestions|idea|ideas|version|versions|link|links|way|ways|law|laws|"
    "rule|rules|principle|principles|stage|stages|phase|phases|part|parts|chapter|"
    "paragraph|sentence|line|lines|question|questions|type|types|model|plan|recipe|"
    "product|movie|book|song|article|code|snippet|function|query|list|table|image|"
    "picture|design|draft|poem|story|joke|translation|summary|result|results|case"
)
# Nouns that need an anchor: "the goals" of what, "the prime minister" of where.
_RELATIONAL = (
    "goal|goals|aim|aims|theory|reaction|government|head of state|prime minister|"
    "president|leader|leaders|king|queen|capital|population|author|founder|inventor|"
    "cause|causes|effect|effects|impact|impacts|benefit|benefits|advantage|advantages|"
    "disadvantage|disadvantages|drawback|drawbacks|pros|cons|risk|risks|side effects|"
    "symptoms|treatment|cost|price|origin|history|purpose|function|role|meaning|"
    "definition|answer|solution|result|results|outcome|conclusion|process|steps|"
    "component|components|parts|types|examples|features|rules|requirements|alternatives|"
    "difference|differences|reason|reasons|main idea|plot|ending|sequel|title|name|date|"
    "location|size|age|problem|problems|issue|issues|limitations|criticism|criticisms|"
    "consequences|implications|applications|uses|formula|equation|output|error|syntax"
)
# Whole utterances that only continue a conversation.
_FRAGMENTS = (
    r"why|why not|how|how so|how come|really|seriously|and|and then|so|so what|then|"
    r"then what|what else|anything else|what next|more|tell me more|say more|go on|"
    r"continue|keep going|carry on|elaborate|please elaborate|elaborate please|"
    r"explain more|explain further|explain that|explain|more details?|details|"
    r"in more detail|more detail please|examples?|for example|an example|give me an "
    r"example|give an example|another one|another|one more|again|do it again|try again|"
    r"once more|same|same here|same thing|shorter|longer|simpler|make it shorter|"
    r"(?:give me |show me |any )?(?:another|one more|a different|other) (?:example|one|"
    r"option|version|way|idea)s?|"
    r"make it longer|make it simpler|what do you mean|meaning|which one|which|who|when|"
    r"where|what|what for|for what|like what|such as|in what way|is that right|is that "
    r"true|is that so|are you sure|you sure|correct|right|ok and|okay and|and now|now what|"
    r"what about now|why is that|how is that|how so|why so|which is better|which is "
    r"cheaper|what's the difference|what is the difference|the difference|compare them|"
    r"summarize|summarise|summarize it|translate|translate it|rewrite|rewrite it|redo|"
    r"fix it|undo|revert|proceed|next|next one|previous|the rest|rest|finish|finish it|"
    r"complete it|go ahead|yes please|no thanks|sources?|citation|citations|references?"
)
# Third-person pronouns and demonstratives; "it" gets a separate expletive check.
_PERSONAL = frozenset({"he", "him", "she", "they", "them", "himself", "herself", "themselves"})
_POSSESSIVE = frozenset({"its", "their", "theirs", "his", "her", "hers"})
_DEMONSTRATIVE = frozenset({"this", "that", "these", "those"})
# The words whose presence lets `_english_tokens` return a pronoun or demonstrative rule.
_REFERRING = frozenset({"it"}) | _PERSONAL | _POSSESSIVE | _DEMONSTRATIVE
_ELLIPSIS_MAX_WORDS = 6
# "Have you ever hurt someone and ended up at his mercy?": an antecedent within the turn.
_INDEFINITES = frozenset(
    {"someone", "somebody", "anyone", "anybody", "everyone", "everybody", "people", "person"}
)
# A short nounless question about the asker or the assistant is complete: "how do I
# exist?", "can you help?".
_SPEAKERS = frozenset({"i", "me", "my", "we", "us", "our", "you", "your", "i'm", "someone"})
# Nouns after "this/that" that make a time expression, not a reference: "this week".
_TIME_NOUNS = frozenset(
    (
        "morning", "afternoon", "evening", "night", "week", "weekend", "month", "year",
        "season", "time", "moment", "summer", "winter", "spring", "fall", "autumn", "decade",
        "century", "quarter", "semester", "day", "today", "tonight", "era", "point",
    )
)  # fmt: skip
# Where a clause ends: a noun before one of these may be what a later pronoun means.
_CLAUSE_BREAKS = frozenset(
    (
        ",", ";", ":", ".", "?", "!", "-", "and", "but", "or", "so", "because", "since",
        "while", "when", "whenever", "if", "unless", "although", "though", "after",
        "before", "until", "once", "whereas", "than", "as", "where", "which", "who",
        "whose", "that", "without", "then",
    )
)  # fmt: skip


class FollowupRules:
    """Follow-up detection for English and Chinese turns."""

    def __init__(self) -> None:
        # Greetings and chit-chat: short, nounless, and complete in themselves.
        self._self_contained = re.compile(
            r"^(?:hi|hello|hey|yo|hiya|howdy|good (?:morning|afternoon|evening|night)|thanks?|"
            r"thank you(?: so much| very much)?|bye|goodbye|see you|how are you(?: doing)?|"
            r"how's it going|how is it going|what's up|whats up|sup|who are you|what are you|"
            r"what can you do|what do you do|are you (?:a )?(?:bot|robot|human|real|ai|there)|"
            r"what is your name|what's your name|who made you|who created you|who built you|"
            r"where are you from|how old are you|do you have feelings|can you help me|help|"
            r"help me|i need help|are you there|nice to meet you|good job|well done|ok|okay|"
            r"cool|great|awesome|nice|lol|haha|yes|no|sure|fine|of course|what time is it|"
            r"who am i|tell me a joke|i love you|i'm bored|im bored|i am bored|i'm sad|i'm tired|"
            r"i'm hungry|what should i do|what is love|what is life|why are we here)[\s?!.]*$"
        )
        self._greeting = re.compile(r"^(?:hi|hello|hey|thanks|thank you|ok|okay)\b[\s,!.]+(?=\S)")
        self._fragment = re.compile(rf"^(?:{_FRAGMENTS})[\s?!.…]*$")
        self._connective = re.compile(
            r"^(?:and|but|also|plus|or|so|then|except|instead|otherwise|in that case|"
            r"if so|if not|what about|how about|what of|and what about|and how about|"
            r"same (?:for|with|but|thing|question|again)|now (?:do|make|try|what|how|for|"
            r"with|in|add|change|use)|ok(?:ay)?[, ]+(?:and|now|but|so|what|how)|"
            r"thanks?[,!. ]+(?:and|now|but|what|how|can)|great[,!. ]+(?:and|now|what|how)|"
            r"can you (?:do|make|explain|show|give|say|write) (?:it|that|the same|them)\b|"
            r"do (?:it|that|the same)|try (?:it|that)|"
            r"what if|why(?:'s| is| was) that|which (?:one|of them|of these|of those))\b"
        )
        self._reference = re.compile(
            rf"\b(?:the|that|this|which|those|these)\s+(?:(?:{_ORDINALS})\s+)+"
            rf"(?:{_LIST_MEMBERS})\b(?!\s+(?:of|in|on|from|for|about|that|which|who|to)\b)|"
            # "the cheaper one", "which one"; not "the one in Brazil", "one day", nor a
            # choice offered in the same turn ("which one, a GoPro or a DSLR?").
            r"\b(?:the|that|this|which|those|these)\s+(?:[\w-]+\s+)?(?:one|ones)\b"
            r"(?!\s+(?:of|in|from|at|with|that|which|who|for|on|day|time|another|by)\b)"
            r"(?!.*\bor\b)|"
            r"(?<!none of )(?<!all of )\bthe\s+(?:former|latter|above|aforementioned)\b|"
            r"\bthe\s+same\s*[?.!]*$|"
            r"\boption\s+(?:\d|[a-d]\b)|\b(?:number|#)\s*\d\s*[?.!]*$|"
            r"\b(?:you|u)\s+(?:just\s+)?(?:said|mentioned|wrote|suggested|gave|listed|"
            r"described|showed|recommended|explained)\b|\bas\s+(?:you\s+)?(?:mentioned|said|"
            r"stated|described)\b|\byour\s+(?:last|previous|earlier|first|second|above)\s+"
            r"(?:answer|response|reply|message|example|point|suggestion|code)\b|"
            r"\b(?:earlier|above|previously|before)\s*[?.!]*$|\b(?:mentioned|discussed|"
            r"listed)\s+(?:above|earlier|before|previously)\b|\bwhat\s+you\s+(?:said|wrote|"
            r"meant|mentioned)\b"
        )
        # Short questions about "the X" with nothing saying which X: "what are the goals?",
        # "who developed the theory?", "what does the government do?".
        self._bridging = re.compile(
            rf"^(?:who|what|where|when|which|why|how)(?:\s+\w+)?\s+(?:is|are|was|were|does|do|"
            rf"did|\w+s|\w+ed)\s+the\s+(?:(?:main|key|primary|first|second|third|last|other|"
            rf"next|current|new|best|biggest|major|most\s+\w+)\s+)?(?:{_RELATIONAL})"
            rf"(?:\s+(?:do|does|mean|say|state|involve|include|cost))?\s*[?.!]*$"
        )
        # "it" that refers to nothing: "is it safe to ...", "how long does it take".
        self._expletive_it = re.compile(
            r"\bit\s+(?:(?:not|really|always|ever)\s+)?"
            r"(?:(?:is|was|'s|will\s+be|would\s+be|be|matters?|turns\s+out|"
            r"makes\s+sense|rains?|snows?)\b|(?:seems?|feels?|looks?|takes?|took|costs?|"
            r"happens?)\s+(?:like|to|that|as|so|long|forever|ages|years|hours)\b|"
            r"\b(?:possible|true|safe|ok|okay|normal|bad|good|better|worse|necessary|"
            r"legal|illegal|healthy|worth|wise|common|likely|rude|weird|late|early|hard|easy|"
            r"difficult|dangerous|fine|allowed|required|recommended|advisable|appropriate|"
            r"realistic|reasonable|cheaper|expensive|free)\b)|"
            r"\bwhat\s+time\s+is\s+it\b|\bhow\s+(?:long|much|far|hard|often)\s+(?:does|did|"
            r"will|would|is|was)\s+it\b|\bis\s+it\s+(?:me|just\s+me)\b|\bwhat\s+is\s+it\s+"
            r"like\b|\bhow\s+(?:is|was)\s+it\s+going\b|\bmake\s+it\s+(?:to|through|big|home)"
            r"\b|\bit\s+(?:is|'s|was)\s+(?:\w+\s+){0,3}(?:to|that|if|whether|when|for)\b|"
            r"\b(?:is|was|isn't|wasn't)\s+it\s+(?:\w+\s+){0,3}(?:to|that|if|whether|when|for)\b|"
            r"\bget\s+it\s+(?:done|right)\b|\bit's\s+(?:raining|snowing|cold|hot|warm|dark|"
            r"late|early|time)\b|\bi\s+(?:hate|love|like|find)\s+it\s+when\b"
        )
        self._code_or_quote = re.compile(r"```|\n|:\s*\S|\"[^\"]{3,}\"|'[^']{8,}'")
        # Chinese.
        self._zh_fragment = re.compile(
            r"^(?:为什么|为啥|怎么说|怎么讲|然后呢?|接着呢?|还有呢?|还有吗|还有别的吗|继续|继续说|"
            r"接着说|请继续|更多|详细点|详细一点|详细说说|具体点|具体一点|具体说说|展开说说|展开讲讲|"
            r"举个例子|举例|比如呢?|例如呢?|再来一个|再来|换一个|换个|再说一遍|再说一次|重新来|"
            r"什么意思|啥意思|真的吗|是吗|确定吗|对吗|是这样吗|然后|所以呢?|那呢|那个呢|这个呢|"
            r"哪个|哪个好|哪个更好|哪一个|区别呢|有什么区别|为什么呢|怎么办|怎么做|好的?继续|"
            r"嗯|嗯嗯|好|好的|对|没错|不对|错了|再短一点|再长一点|简单点|简短点|翻译一下|总结一下|"
            r"第[一二三四五六七八九十两\d]+(?:个|种|条|点|项|步|款|家|本|部|首|段|句|行|题)?)"
            r"[\s?!.。~]*$"
        )
        self._zh_connective = re.compile(
            r"^(?:那(?![里儿个些种样边时天年位家本部首段句])|那么|那你|那如果|那要是|那要|还有|另外|"
            r"然后|而且|并且|但是|可是|不过|所以|"
            r"如果是|要是|换成|改成|改为|换作|同样|也|再|那么如果|另一个|上一个|"
            r"下一个|前一个|后一个)"
        )
        # Back-references anywhere ("你刚才说的"), and list positions that open the turn
        # ("第二个怎么样"; "来自星星的你第二部" names a sequel and is self-contained).
        self._zh_reference = re.compile(
            r"刚才|刚刚说|上述|前面(?:的|说|提到)|之前(?:说|提到|你说)|你(?:说|提到|推荐|给)的|"
            r"上面(?:说|提到|的)|前者|后者|也这样|也一样|也是这样|同样的问题|"
            r"^(?:那|这)?第[一二三四五六七八九十两\d]+(?:个|种|条|点|项|步|款|家|本|部|首)|"
            r"^(?:以上|上面|其中|这几个|那几个|上一个|上一条|这个方法|那个方法|这种方法|那种方法)"
        )
        # Demonstratives, personal pronouns.
        self._zh_demonstrative = re.compile(r"这个|那个|这些|那些|这种|那种|这样|那样")
        self._zh_personal = re.compile(r"它们|它的|它|他们|她们|他的|她的|他|她")
        self._zh_pronoun = re.compile(
            r"它们|它的|它|他们|她们|他的|她的|他|她|这个|那个|这些|那些|这样|那样|这种|那种"
        )
        # Words that contain a pronoun character without being one (其他 "other", 吉他).
        self._zh_not_pronoun = re.compile(
            r"其他|其它|吉他|他人|他乡|他国|利他|排他|这个世界|那个时候|这个时候"
        )
        # Text is NFKC-normalised: full-width question marks, commas etc. are ASCII by
        # now; the ideographic full stop and comma (。、) stay as they are.
        self._zh_clause = re.compile(r"[,、;:.。?!\n]")
        self._zh_ends_ne = re.compile(r"呢[\s?!.。~]*$")
        self._zh_noise = re.compile(r"[\s?!.,。~、;:\"'()]")

    # --- English -----------------------------------------------------------------------

    def english(
        self,
        text: str,
        doc: Callable[[], Any | None],
        tokens: Callable[[], Any | None],
        *,
        has_earlier_turns: bool,
    ) -> str | None:
        """`text` is normalised and lower-cased; `doc` tags the original on demand and
        `tokens` only splits it (both None for a turn too long to need them)."""
        stripped = self._greeting.sub("", text.strip())
        if not stripped:
            return None
        if self._self_contained.match(stripped):
            return None
        if self._fragment.match(stripped):
            return "en.followup.fragment"
        if self._connective.match(stripped):
            return "en.followup.connective"
        if self._reference.search(stripped):
            return "en.followup.reference"
        if self._bridging.match(stripped):
            return "en.followup.bridging"
        if not self._may_refer(tokens()):
            return None
        parsed = doc()
        if parsed is None:
            return None
        return self._english_tokens(stripped, parsed, has_earlier_turns)

    @staticmethod
    def _may_refer(tokens: Any | None) -> bool:
        """Whether `_english_tokens` could fire on these tokens, decided without tags:
        its ellipsis rule needs at most six words, its reference rules a pronoun or a
        demonstrative. Most questions have neither, and tagging costs ~1 ms."""
        if tokens is None:
            return False
        words = [t.lower_ for t in tokens if not t.is_space and not t.is_punct]
        return len(words) <= _ELLIPSIS_MAX_WORDS or not _REFERRING.isdisjoint(words)

    def _english_tokens(self, text: str, doc: Any, has_earlier_turns: bool) -> str | None:
        tokens = [t for t in doc if not t.is_space]
        if not tokens or not tokens[0].tag_:
            return None  # no tagger output (e.g. a mostly Chinese text)
        words = [t for t in tokens if not t.is_punct]
        nouns = [t for t in words if t.pos_ in ("NOUN", "PROPN", "NUM")]
        # Short and nounless: "what is transferred?", "is it?", "why does it?".
        if (
            len(words) <= _ELLIPSIS_MAX_WORDS
            and not nouns
            and not any(t.lower_ in _SPEAKERS for t in words)
            and not self._expletive_it.search(text)
            and any(t.pos_ in ("VERB", "AUX", "ADJ", "ADV", "PRON", "DET") for t in words)
        ):
            return "en.followup.ellipsis"
        # Long texts carrying their own material (code, quotes) resolve their references.
        carries_material = self._code_or_quote.search(doc.text) is not None
        seen_noun_in_earlier_clause = False
        seen_noun = False
        seen_proper = False
        for i, tok in enumerate(tokens):
            low = tok.lower_
            if low in _CLAUSE_BREAKS or tok.is_punct:
                seen_noun_in_earlier_clause = seen_noun_in_earlier_clause or seen_noun
                continue
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if low == "it":
                if not seen_noun_in_earlier_clause and not self._expletive_it.search(text):
                    return "en.followup.pronoun"
            elif low in _PERSONAL:
                if not seen_proper and not seen_noun_in_earlier_clause:
                    return "en.followup.pronoun"
            elif low in _POSSESSIVE:
                # "How do plants make their food?": a possessive may bind a noun before it.
                if not seen_noun and not (low in ("his", "her") and seen_proper):
                    return "en.followup.pronoun"
            elif low in _DEMONSTRATIVE and not carries_material:
                rule = self._demonstrative(tokens, i, nxt, has_earlier_turns)
                if rule is not None and not seen_noun_in_earlier_clause:
                    return rule
            if tok.pos_ in ("NOUN", "PROPN") or low in _INDEFINITES:
                seen_noun = True
                seen_proper = seen_proper or tok.pos_ == "PROPN"
        return None

    def _demonstrative(
        self, tokens: list[Any], i: int, nxt: Any, has_earlier_turns: bool
    ) -> str | None:
        low = tokens[i].lower_
        prev = tokens[i - 1] if i > 0 else None
        if nxt is not None and nxt.lower_ in _TIME_NOUNS:
            return None
        if low == "that" and prev is not None and prev.pos_ in ("NOUN", "PROPN", "VERB", "ADJ"):
            return None  # relative clause or complementizer: "the idea that", "said that"
        if nxt is not None and nxt.pos_ in ("NOUN", "PROPN", "ADJ", "NUM"):
            # "this concept", "that code" after earlier turns points at them. In a single
            # turn it usually introduces what follows ("explain this concept: ..."), so
            # only a dialogue makes it a reference.
            return "en.followup.deictic" if has_earlier_turns else None
        if low == "that" and nxt is not None and nxt.pos_ in ("DET", "PRON"):
            return None  # complementizer: "is it true that the ..."
        return "en.followup.pronoun"

    # --- Chinese -----------------------------------------------------------------------

    def chinese(self, text: str, *, has_earlier_turns: bool) -> str | None:
        """`text` is NFKC-normalised."""
        stripped = text.strip()
        if not stripped:
            return None
        if self._zh_fragment.match(stripped):
            return "zh.followup.fragment"
        core = self._zh_noise.sub("", stripped)
        if self._zh_reference.search(stripped):
            return "zh.followup.reference"
        cleaned = self._zh_not_pronoun.sub("", stripped)
        first_clause = self._zh_clause.split(cleaned, maxsplit=1)[0]
        if self._zh_connective.match(stripped) and (
            len(core) <= 15 or self._zh_ends_ne.search(stripped)
        ):
            return "zh.followup.connective"
        if self._zh_ends_ne.search(stripped) and len(core) <= 8:
            return "zh.followup.ellipsis"
        # 它/他/她 in the first clause, or any pronoun in a short turn ("这个多少钱"),
        # points backwards.
        if self._zh_personal.search(first_clause) or (
            len(core) <= 10 and self._zh_pronoun.search(cleaned)
        ):
            return "zh.followup.pronoun"
        # "这个电视剧咋样" after earlier turns points at them; alone it usually refers to
        # something the asker sees (a forum post, a picture), not to a dialogue.
        if has_earlier_turns and self._zh_demonstrative.search(first_clause):
            return "zh.followup.deictic"
        return None
