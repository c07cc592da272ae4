"""English time-sensitive questions: the answer depends on when it is asked.

Three kinds of evidence, strongest first:

- words that tie the answer to now ("today", "weather", "stock price"): always;
- words relative to now ("current", "latest", "next season", "how old is"): unless an
  explicit year pins the question ("who was the current president in 2011");
- facts that change without saying so: office holders ("who is the governor of ..."),
  records ("who has the most ..."), tallies ("how many goals has ... scored"), recurring
  winners ("who won the super bowl"), figures (prices, salaries, populations): unless a
  year, a numbered season or "the first ..." pins them.

Last, relative DATE/TIME entities from spaCy ("in two weeks", "this coming spring");
fixed historical dates ("in 1999") do not count. The parse is taken only when the rules
above found nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gateway.classify.lexicon_en import (
    ACHIEVEMENTS,
    CHANGING_HEADS,
    FIGURES,
    OFFICES,
    RECURRING,
    alternation,
)

_PAST_PARTICIPLES = (
    "won|scored|made|played|sold|had|been|appeared|released|produced|hit|earned|raised|"
    "grossed|recorded|reached|hosted|beat|beaten|lost|visited|joined|signed|died|killed|"
    "infected|received|collected|given|taken|published|written|directed|starred|attended|"
    "competed|qualified|gone|got|gotten|amended|changed|passed|elected"
)
# Sets whose size changes: "how many stores / countries / members ...".
_CHANGING_SETS = (
    "people|persons|residents|stores|shops|restaurants|locations|branches|countries|"
    "members|employees|players|teams|clubs|schools|universities|colleges|hospitals|"
    "airports|stations|parks|churches|mosques|companies|billionaires|millionaires|users|"
    "subscribers|episodes|seasons|officers|soldiers|troops|republicans|democrats|senators|"
    "representatives|seats|cases|deaths|murders|crimes|speakers|students|teachers|doctors|"
    "nurses|refugees|immigrants|tourists|visitors|cities|towns|franchises|inhabitants|"
    "citizens|customers|followers"
)
_SUPERLATIVES = "most|highest|lowest|fewest|longest|biggest|largest|best|greatest|fastest"
# A long turn is judged on its first and last sentences, where questions are asked.
_EDGE_SENTENCES = 4


class EnglishTimeRules:
    """Compiled English time-sensitivity rules; one instance per classifier."""

    def __init__(self) -> None:
        self._compile_lexicon()
        self._compile_volatile()

    def _compile_lexicon(self) -> None:
        # Words that tie the answer to the moment it is asked, whatever else is said.
        self._strong = re.compile(
            r"\b(?:today|today's|tonight|tonight's|tomorrow|tomorrow's|yesterday|"
            r"yesterday's|right now|at the moment|this (?:morning|afternoon|evening|week|"
            r"weekend)|(?:next|last|past|coming) (?:few )?(?:week|weeks|weekend|month|months|"
            r"night|hour|hours|day|days|monday|tuesday|wednesday|thursday|friday|saturday|"
            r"sunday)|breaking news|headlines|latest news|the news|news today|in the news|"
            r"weather|forecast|forecasts|stock market|(?:stock|share) price|stock quote|"
            r"exchange rate|live score|live scores|final score|the score|traffic (?:on|in|to|"
            r"near|at|report|conditions|jam|today|now)|how is (?:the )?traffic|"
            r"what time is it|what day is it|what's the date|what is the date|today's date|"
            r"current date|current time|time is it|who is winning|what's happening|"
            r"what is happening|open now|still open|opening hours|"
            r"(?:\d+|a few|few|several|two|three) (?:days|weeks|hours|minutes|months) ago|"
            r"in (?:\d+|a few|two|three) (?:days|weeks|hours|minutes))\b"
        )
        # Words relative to now, unless a year pins the question ("current ... 2011").
        self._relative = re.compile(
            r"\b(?:nowadays|currently|presently|at present|these days|this (?:month|year|"
            r"season|quarter|semester|term|summer|winter|spring|fall|autumn|decade|century)|"
            r"(?:next|last|past|coming) (?:year|years|season)|latest|newest|most recent|"
            r"recent|recently|lately|upcoming|so far|to date|as of (?:now|today|this)|"
            r"up to date|up-to-date|(?:last|next) time|the last \w+ (?:that|when|to)|"
            r"most recently|new (?:[\w'-]+ ){0,2}(?:episode|episodes|season|series|movie|film|"
            r"album|book|game|set|version|model|edition|single|song|trailer)|"
            r"next (?:[\w'-]+ ){0,2}(?:episode|season|series|movie|film|album|book|game|match|"
            r"election|olympics|world cup|super bowl|president|prime minister|release|update|"
            r"version|iphone|event|race|tournament|cup|championship|final)|"
            r"(?:when|where|who|what)\b.*\bthe next\b|when (?:is|does|will) the new\b|"
            r"how old (?:is|are|will)|how old's|what age is|age of (?!consent|enlightenment|"
            r"reason|exploration|discovery|criminal)|at the present time|ongoing|"
            r"this time of year|for now|anymore|any more|how long (?:has|have)|"
            r"(?:going to|will) be (?:held|played|hosted)|"
            r"last\s+(?:win|won|reach|reached|lose|lost|play|played|beat|host|hosted|make|made|"
            r"qualify|qualified|declare|declared|occur|occurred|held|happen|happened|appear|"
            r"appeared|score|scored)|(?:when did|when was)\b.*\blast\b|"
            r"(?:the )?last\s+[\w'-]+(?:\s+[\w'-]+)?\s+to\s+(?:win|be|have|score|do|make|reach|"
            r"hold|become|play|get|beat|host))\b"
        )
        # "now" closing a question or inside a wh-question ("who is the coach now"); not
        # the discourse "now" of "I was rude, now I'm nice".
        self._now = re.compile(
            r"\b(?:now|yet|still)\s*[?.!]*$|^(?:who|what|where|which|how|when)\b.*\bnow\b"
            r"(?!\s+(?:that|on)\b)"
        )
        # "current" except in physics and programming ("electric current", "current
        # directory"), where it is not about the date.
        self._current = re.compile(
            r"\bcurrent(?!\s+(?:directory|working directory|dir|folder|thread|element|node|"
            r"index|item|value|state|row|page|line|context|scope|frame|process|selection|"
            r"iteration|object|function|branch|density|flow|source|loop|divider|limit|"
            r"sensor|transformer|gain|mirror|account|user|file|path|window|tab|"
            r"position|step|cell|column|word|character|time step|epoch|batch|session|"
            r"request|record|level|view|route|url|module|class|instance|block|task|job|"
            r"version of (?:the )?(?:code|file|script)))\b(?<!electric current)"
            r"(?<!alternating current)(?<!direct current)(?<!ocean current)"
            r"(?<!rip current)(?<!eddy current)(?<!leakage current)"
        )
        # "is X still alive", "does the company still exist"; not "can I still ..." (about
        # the asker).
        self._still = re.compile(
            r"^(?:is|are|does|do|has|have)\s+(?!i\b|you\b|we\b)[\w\s'.-]*\bstill\b|"
            r"\bstill (?:alive|open|"
            r"married|together|active|running|available|in business|on the air|playing|"
            r"working|in office|in power|the|a |dating|single|in jail|in prison|exist|"
            r"exists|around|on sale|for sale|airing|touring|performing)\b"
        )
        self._year = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b")
        # A date, a numbered edition or "the first ..." pins a volatile fact.
        self._anchor = re.compile(
            r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b\d+(?:st|nd|rd|th) century\b|"
            r"\b(?:season|series|episode|book|volume|part|chapter)\s+(?:\d+|one|two|three|four|"
            r"five|six|seven|eight|nine|ten|eleven|twelve)\b|\b(?:second|third|fourth|fifth|"
            r"1st|2nd|3rd|\d+th|only)\s+(?:[\w'-]+\s+){0,2}(?:president|prime\s+minister|"
            r"king|queen|emperor|governor|speaker|chancellor|person|woman|man|player|member)\b|"
            r"\b(?:first|original|originally|founder|founded|founding|invented|inventor|"
            r"discovered|ancient|medieval|historical|history of|in the (?:sixties|seventies|"
            r"eighties|nineties|fifties|forties|thirties|twenties))\b"
        )
        # Rules read one sentence at a time: a year in one sentence does not pin another,
        # and patterns with ".*" stay linear in the length of the text.
        self._sentences = re.compile(r"[^.!?;\n]{1,400}")
        self._relative_date = re.compile(
            r"\b(?:today|tonight|tomorrow|yesterday|now|this|next|last|ago|coming|past|"
            r"current|recent|upcoming|in \d+ (?:days|weeks|months))\b"
        )

    def _compile_volatile(self) -> None:
        offices = alternation(OFFICES)
        heads = alternation(CHANGING_HEADS)
        achievements = alternation(ACHIEVEMENTS)
        recurring = alternation(RECURRING)
        figures = alternation(FIGURES)
        office = re.compile(
            rf"\b(?:who\s+(?:is|are)|whos|who's)\s+(?:currently\s+)?(?:the\s+)?"
            rf"(?:current\s+|present\s+|new\s+|newly\s+(?:elected|appointed)\s+|"
            rf"reigning\s+|sitting\s+|acting\s+|incumbent\s+)?(?:[\w'-]+\s+){{0,3}}?"
            rf"(?:{offices})\b|\bwho\s+(?:runs|leads|owns|heads|manages|coaches|"
            rf"governs|rules|hosts|chairs|presides|represents|plays\s+for|plays\s+on|"
            rf"plays\s+in|is\s+in\s+charge|is\s+running|are\s+running|is\s+playing|"
            rf"are\s+playing|is\s+hosting|are\s+hosting|is\s+performing|is\s+leading|"
            rf"sings\s+for|has\s+the\s+[\w\s'-]+\s+(?:belt|title|crown|record))\b|"
            rf"\b(?:name|names)\s+(?:of\s+)?the\s+(?:current\s+)?(?:[\w'-]+\s+){{0,3}}?"
            rf"(?:{offices})\b|^who\s+(?:is|are)\s+\w+ing\b|"
            rf"\b(?:{offices})\s+of\b.*\b(?:is|are)\s*\??$"
        )
        status = re.compile(
            r"\b(?:who|whom)\s+(?:is|are)\s+[\w\s'.-]+\s+(?:married\s+to|dating|"
            r"engaged\s+to|signed\s+(?:to|with)|playing\s+for)\b|\bwhere\s+(?:does|do|"
            r"is|are)\s+[\w\s'.-]+\s+(?:live|lives|living|work|works|working|play|"
            r"plays|playing|stand|rank|based|located\s+now)\b|\b(?:what|which)\s+"
            r"(?:team|club|company|label|network)\s+(?:does|do|is|are)\s+[\w\s'.-]+"
            r"(?:play|plays|playing|work|works|for|on|with|signed)\b|"
            r"^(?:is|are)\s+[\w\s'.-]+\s+(?:alive|dead|married|single|retired|divorced|"
            r"pregnant|active|in\s+business|on\s+the\s+air|in\s+office|in\s+power|"
            r"a\s+member\s+of|still)\b|\bwho\s+(?:is|are)\s+[\w\s'.-]+'s\s+(?:wife|"
            r"husband|girlfriend|boyfriend|partner|spouse|fiance|fiancee|coach|agent)\b|"
            r"\b(?:does|do)\s+[\w\s'.-]+\s+have\s+(?:any\s+)?(?:kids|children|a\s+(?:wife|"
            r"husband|girlfriend|boyfriend|partner))\b|\bwho\s+(?:does|do)\s+[\w\s'.-]+\s+"
            r"play\s+(?:for|with)\b|\bwhat\s+(?:show|shows|series|movie|team)\s+is\s+"
            r"[\w\s'.-]+\s+(?:on|in)\s*\??$"
        )
        record = re.compile(
            rf"\b(?:has|have|holds?|hold|owns?|got)\b(?:\s+[\w'-]+){{0,3}}?\s+(?:the\s+)?"
            rf"(?:{_SUPERLATIVES}|least|shortest|record|world\s+record|top|more)\b|"
            rf"\brecord\s+for\b|\b(?:all[- ]time|of\s+all\s+time|ever|in\s+history|"
            rf"to\s+date|on\s+record)\b.*\b(?:{_SUPERLATIVES}|record|leading|top)\b|"
            rf"\b(?:{_SUPERLATIVES}|record|leading|top)\b.*\b(?:all[- ]time|of\s+all\s+time|ever|"
            rf"in\s+history|to\s+date|on\s+record|recorded)\b|"
            rf"\bmost\s+(?:[\w'-]+\s+){{0,2}}?(?:{achievements})\b|"
            rf"\b(?:highest|best|top)[- ](?:paid|grossing|selling|rated|ranked|earning|"
            rf"scoring)\b|\b(?:most|least)\s+(?:popular|followed|subscribed|watched|"
            rf"viewed|streamed|downloaded|visited|populous|populated|spoken|"
            rf"expensive|valuable|powerful|famous|influential|successful|used|"
            rf"common|played|liked|searched|decorated|wanted|dangerous|polluted|"
            rf"sold|awarded|capped)\b|\b(?:richest|wealthiest|poorest|"
            rf"busiest|best-selling|bestselling|top-selling)\b|"
            rf"\b(?:largest|biggest|tallest|longest|highest|fastest|smallest|oldest|"
            rf"youngest|newest|deepest|heaviest|strongest|cheapest)\s+"
            rf"(?:[\w'-]+\s+){{0,2}}?(?:{heads})\b|\btop\s+(?:\d+|ten|five|twenty|"
            rf"three)\b|\bnumber\s+(?:one|1)\b|\bleading\s+(?:\w+\s+)?(?:scorer|party|"
            rf"cause|producer|exporter|goalscorer|run\s+scorer|rusher|passer)\b"
        )
        tally = re.compile(
            rf"\bhow\s+(?:many|much|often)\b(?:\s+[\w'-]+){{0,6}}?\s+(?:has|have|'s|'ve)"
            rf"\s+(?:[\w'-]+\s+){{0,4}}?(?:{_PAST_PARTICIPLES})\b|"
            rf"\bhow\s+many\s+(?:[\w'-]+\s+){{0,3}}?(?:{achievements})\s+(?:does|do|did|"
            rf"has|have)\b|\bhow\s+many\b.*\b(?:are\s+there|exist|are\s+left|remain|"
            rf"live\s+in|work\s+(?:at|for|in)|are\s+in\s+(?:the\s+)?(?:us|usa|uk|"
            rf"world|country|united))\b|\bhow\s+many\s+(?:[\w'-]+\s+){{0,2}}?"
            rf"(?:{_CHANGING_SETS})\b|\b(?:number|count)\s+of\s+[\w\s'-]+\s+(?:in|at|on|"
            rf"worldwide|globally)\b|\btotal\s+number\b"
        )
        recurring_re = re.compile(
            rf"\b(?:who|which\s+\w+|what\s+\w+)\s+(?:won|wins|win|has\s+won|have\s+"
            rf"won|took|takes|claimed|got)\s+(?:the\s+)?(?:[\w'.-]+\s+){{0,6}}?"
            rf"(?:{recurring})\b|\bwho\s+(?:is|are)\s+(?:in|playing\s+in|hosting|"
            rf"going\s+to|competing\s+in|running\s+for|the\s+candidates)\b|"
            rf"\bcandidates?\s+(?:for|running)\b|\brunning\s+for\s+(?:governor|"
            rf"mayor|president|senate|congress|office|re-?election)\b|"
            rf"\b(?:who|which\s+\w+)\s+(?:is|are)\s+(?:the\s+)?(?:defending|reigning)\b|"
            rf"\bwhere\s+(?:is|are|will)\s+the\s+(?:next\s+)?(?:{recurring})\b|"
            rf"\bwhen\s+(?:did|was|were|has|have)\b.*\b(?:win|won|hosted|host|held|reach|"
            rf"reached|get\s+to|go\s+to|make|made)\b.*\b(?:{recurring})\b|"
            rf"\bwhen\s+(?:do|does|is|are)\s+(?:the\s+)?[\w'.-]+(?:\s+[\w'.-]+)?\s+"
            rf"(?:play|playing|face|facing|vs\.?|versus)\b|\bwinners?\s+(?:list|of)\b|"
            rf"\blist\s+of\s+winners\b"
        )
        figure = re.compile(
            rf"\b(?:what|what's|whats|how\s+much|how\s+many)\b.*\b(?:{figures})\b|"
            rf"\b(?:{figures})\s+(?:of|for|in|at)\b|\b(?:{figures})\s*\??$|"
            r"^(?:[\w'-]+\s+){0,5}(?:salary|salaries|wage|cost|price|prices|worth|"
            r"population)\b|\bhow\s+much\s+(?:does|do|is|are|did|would|will|"
            r"can)\b.*\b(?:cost|costs|make|earn|earns|charge|charges|pay|paid|worth|"
            r"sell|sells|go\s+for|get\s+paid|bring\s+in)\b|\bhow\s+much\s+(?:is|are)\s+"
            r"(?:a|an|one|the)\s+(?!\d)|\bhow\s+much\s+money\b|"
            r"\b(?:make|earn|paid|pay)\s+(?:a|per|an)\s+(?:year|hour|month|week|game|"
            r"season)\b|\bhow\s+(?:rich|popular|many\s+people|tall\s+is\s+"
            r"the\s+(?:tallest|new))\b|\bhow\s+(?:well|badly)\s+(?:is|are|does|do)\b"
        )
        self._volatile: tuple[tuple[str, re.Pattern[str]], ...] = (
            ("en.time.office", office),
            ("en.time.status", status),
            ("en.time.record", record),
            ("en.time.tally", tally),
            ("en.time.recurring", recurring_re),
            ("en.time.figure", figure),
        )

    def time(self, text: str, doc: Callable[[], Any] | None) -> str | None:
        """Rule name when the answer to `text` (normalised, lower-cased) depends on when
        it is asked. `doc` parses the turn on demand (None: no English parse)."""
        if self._strong.search(text):
            return "en.time.lexicon"
        sentences = [m.group().strip() for m in self._sentences.finditer(text)]
        if len(sentences) > 2 * _EDGE_SENTENCES:
            sentences = sentences[:_EDGE_SENTENCES] + sentences[-_EDGE_SENTENCES:]
        for sentence in sentences:
            rule = self._sentence(sentence)
            if rule is not None:
                return rule
        # Entities are the costly part (docs/measurements.md#relative-dates-in-english):
        # parse only when a relative date word could be in one.
        if doc is not None and self._relative_date.search(text):
            for ent in doc().ents:
                if ent.label_ in ("DATE", "TIME"):
                    span = ent.text.lower()
                    if self._relative_date.search(span) and not self._year.search(span):
                        return "en.time.entity"
        return None

    def _sentence(self, sentence: str) -> str | None:
        if not self._year.search(sentence) and (
            self._relative.search(sentence)
            or self._current.search(sentence)
            or self._now.search(sentence)
            or self._still.search(sentence)
        ):
            return "en.time.relative"
        if not self._anchor.search(sentence):
            for rule, pattern in self._volatile:
                if pattern.search(sentence):
                    return rule
        return None
