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

Text arrives normalised and lower-cased; everything here is a regular expression
compiled once in the constructor.
"""

from __future__ import annotations

import re

from gateway.classify.lexicon_en import (
    ACTING_OBJECTS,
    BOOKABLE,
    DEFINITE_OBJECTS,
    LANGUAGES,
    STRONG_PARTICIPLES,
    STRONG_VERBS,
    WEAK_VERBS,
    alternation,
    inflections,
)

_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
# A long turn is judged on its first and last sentences, where requests are made.
_EDGE_SENTENCES = 4
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"


class EnglishWriteRules:
    """Compiled English write-intent rules; one instance per classifier."""

    def __init__(self) -> None:
        self._acting = alternation(ACTING_OBJECTS)
        self._bookable = alternation(BOOKABLE)
        self._participles = alternation(STRONG_PARTICIPLES)
        self._strong_base = alternation(STRONG_VERBS)
        self._compile_structure()
        self._compile_leads()
        self._compile_verbs()
        self._compile_objects()
        self._compile_statements()

    # --- compilation -------------------------------------------------------------------

    def _compile_structure(self) -> None:
        # Sentences, then clauses. A clause may also start after "and"/"then" inside it,
        # with the rest of the clause attached ("let ben and jerry know ...").
        self._sentence_split = re.compile(r"\s*(?:[.!?;]+|\n)\s*")
        self._clause_split = re.compile(r"\s*[,:()\[\]]+\s*|\s+but\s+")
        self._inner_start = re.compile(r"\s(?:and then|and also|and|then|also|or|so|plus)\s+")
        # Mid-sentence requests: "i'm low on milk can you add it to the list".
        self._request_marker = re.compile(
            r"\b(?=(?:can|could|would|will)\s+you\b|please\b|remind\s+me\b|wake\s+me\b)"
        )
        self._fillers = re.compile(
            r"^(?:(?:hey|hi|hello|ok|okay|so|now|um|uh|well|yes|yeah|yep|alright|right|oh|"
            r"siri|alexa|google|cortana|assistant|computer|bot|ai|please|pls|plz|kindly|"
            r"just|quickly|also|then|and|first|actually|immediately|go ahead and|by chance|"
            r"maybe|perhaps|for me|instead|hey there|thanks|thank you|great|cool|perfect|"
            r"good|i think|i guess|i believe|i suppose|tomorrow|tonight|today|later|asap|"
            r"right now)\b\s*)*"
        )
        # Questions about an action: informational.
        self._question = re.compile(
            r"^(?:how|what|what's|whats|why|when|where|which|who|whom|whose|if|whether|explain|"
            r"describe|define|teach|learn|understand|tell me|show me|give me (?:some|a few)? ?"
            r"(?:tips|advice|ideas|examples?)|difference|steps|ways?\b|guide|tips|tutorial|"
            r"best way|is there|are there|any way|in what|in which)\b|"
            r"^(?:is|isn't|are|aren't|was|were|does|doesn't|do|don't|did|didn't|has|had|should|"
            r"shall|am|may|might|can|could|would|will)\s+(?:i|you|we|they|he|she|it|there|this|"
            r"that|these|those|my|your|our|their|the|a|an|any|some|all|anyone|someone|\w+'s)\b|"
            r"^have\s+(?:i|you|we|they|he|she|it|there)\b"
        )
        self._wh_start = re.compile(r"^(?:how|what|what's|why|where|when|which|who)\b")
        # Words after which a participle or object is asked about, not acted on.
        self._not_object = re.compile(
            r"\b(?:know|see|check|find|hear|if|when|what|how|whether|why|where|who|which|"
            r"understand|learn|ask|tell\s+me|way|process|procedure|steps)\b"
        )

    def _compile_leads(self) -> None:
        adverbs = (
            r"(?:(?:please|pls|kindly|just|also|quickly|now|immediately|actually|really|"
            r"simply|then|first|go ahead and|maybe|possibly|perhaps|still|help me(?: to)?|"
            r"help(?: to)?|try to|try and|be able to|be willing to|go and|come and|"
            r"permanently|always|start to|begin to)\s+)*"
        )
        self._imperative_adverbs = re.compile("^" + adverbs)
        # Who asks, and how: (rule suffix, pattern); the verb must follow the lead.
        self._leads: tuple[tuple[str, re.Pattern[str]], ...] = (
            (
                "modal",
                re.compile(
                    r"^(?:can|could|would|will|won't|wouldn't|can't|cannot|may|might)\s+"
                    r"(?:you|u|ya)\s+" + adverbs
                ),
            ),
            (
                "modal",
                re.compile(
                    # "would it be possible to ..." asks politely; "is it possible to ..."
                    # asks about the rules unless it is put to the assistant ("for you").
                    r"^(?:(?:would|could)\s+it\s+be\s+possible\s+(?:for\s+(?:you|a\s+\w+)\s+)?|"
                    r"(?:is\s+it\s+possible|is\s+there\s+any\s+way)\s+for\s+(?:you|a\s+\w+)\s+|"
                    r"(?:are\s+you|would\s+you\s+be)\s+able\s+)to\s+" + adverbs
                ),
            ),
            (
                "desire",
                re.compile(
                    # "have", "must", "should" need their subject ("have i ..." asks).
                    r"^(?:(?:i|we)\s*(?:really\s+|just\s+|also\s+|now\s+|still\s+|will\s+|"
                    r"'ll\s+|would\s+|'d\s+|definitely\s+)?(?:have|has|must|should|shall|gotta|"
                    r"got\s+to|rather|require|required|am\s+going|'m\s+going|am\s+gonna|"
                    r"'m\s+gonna|plan|intend|am\s+trying|'m\s+trying|am\s+looking|"
                    r"'m\s+looking|prefer|am\s+ready|'m\s+ready|'m\s+in\s+need\s+of|"
                    r"am\s+in\s+need\s+of)|(?:i|we)?\s*(?:really\s+|just\s+|also\s+|now\s+|"
                    r"still\s+|will\s+|'ll\s+|would\s+|'d\s+|d\s+|definitely\s+)?(?:want|wanna|"
                    r"need|needs|like|love|wish)|(?:i\s+am\s+|i'm\s+)?needing)\s+(?:for\s+)?"
                    r"(?:you\s+)?(?:to\s+)?" + adverbs
                ),
            ),
            (
                "desire",
                re.compile(r"^i'm\s+(?:going|trying|looking|ready|gonna)\s+(?:to\s+)?" + adverbs),
            ),
            (
                "modal",
                re.compile(
                    r"^(?:let's|lets|let\s+us|let\s+me|feel\s+free\s+to|"
                    r"use\s+(?:[\w'-]+\s+){1,5}?to|(?:please\s+)?(?:don't|do\s+not|dont|never)|"
                    r"i(?:\s+would|'d)\s+(?:appreciate|love|like)\s+(?:it\s+)?if\s+you"
                    r"(?:\s+(?:could|would|can|will))?|see\s+if\s+you\s+can|"
                    r"(?:it's|it\s+is)\s+time\s+(?:for\s+(?:me|us)\s+)?to|"
                    r"(?:can|could|would|will)\s+(?:anyone|someone|somebody)\s+(?:please\s+)?help"
                    r"\s+me(?:\s+to)?|is\s+it\s+too\s+much\s+(?:trouble|to\s+ask)\s+to|"
                    r"you\s+(?:can|could|should|need\s+to|must|may|have\s+to)|"
                    r"make\s+sure\s+(?:to|you)|be\s+sure\s+to|don't\s+forget\s+to|"
                    r"remember\s+to|help\s+me(?:\s+to)?|i\s+need\s+help\s+(?:to|with)?|"
                    r"i\s+need\s+your\s+help\s+(?:to|with)?)\s+" + adverbs
                ),
            ),
        )
        # "Can I cancel my order?" asks to do it; "can I cancel a subscription anytime?"
        # asks about the rules. Self-asked modals count with the asker's own records,
        # numbers, days or "please"; without them only unmistakable acts count.
        self._self_modal = re.compile(
            r"^(?:can|could|may|might)\s+(?:i|we)\s+(?:please\s+)?|^(?:am\s+i|are\s+we)\s+able\s+"
            r"to\s+|^is\s+it\s+possible\s+(?:for\s+(?:me|us)\s+)?to\s+"
        )
        self._self_modal_specific = re.compile(
            rf"\b(?:my|our|please|this|that|{_DAYS}|tomorrow|tonight|today)\b|\d"
        )
        gerunds = alternation(
            form
            for verb in (*STRONG_VERBS, *WEAK_VERBS, "get", "find")
            for form in inflections(verb)
            if form.endswith("ing")
        )
        # "would you mind cancelling", "i need help paying my bill": the gerund is the act.
        self._gerund_lead = re.compile(
            rf"^(?:(?:would|do)\s+you\s+)?mind\s+(?P<g1>{gerunds})\b|^(?:i\s+)?(?:need|want|"
            rf"would\s+like|'d\s+like)\s+(?:to\s+get\s+|some\s+|your\s+)?help\s+(?:me\s+)?"
            rf"(?:out\s+)?(?:with\s+)?(?P<g2>{gerunds})\b|^(?:(?:can|could|will|would)\s+you\s+)?"
            rf"(?:help|assist|aid|give\s+me\s+a\s+hand)\s+(?:me\s+)?(?:out\s+)?(?:with|in)\s+"
            rf"(?P<g3>{gerunds})\b|^(?:(?:can|could|will|would)\s+you\s+)?(?:give\s+me\s+a\s+"
            rf"hand|aid\s+me|assist\s+me)\s+(?P<g4>{gerunds})\b"
        )
        self._strong_gerunds = frozenset(
            form for verb in STRONG_VERBS for form in inflections(verb) if form.endswith("ing")
        )
        # Memory and profile writes: "from now on", "call me sam", "my name is sam".
        self._memory = re.compile(
            r"^(?:from now on|from here on(?: out)?)\b|\b(?:from now on|from here on out)\s*$|"
            r"\bfrom\s+this\s+point\s+(?:forward|on)\b|"
            r"^(?:you can |you could |please |just )?call me\s+(?!an?\s|the\s|if\b|when\b|"
            r"back\b|later\b|at\b|on\b|tomorrow\b|tonight\b|now\b|asap\b|by\b)[a-z]|"
            r"^(?:hi |hello |hey )?my name is\b(?!\s+(?:what|saved|listed|spelled|\?|$))|"
            r"^(?:please )?(?:refer to|address) me as\b|"
            r"^i (?:prefer|want|would like|'d like) to be (?:called|addressed|referred)\b|"
            r"^(?:start|stop) calling me\b|^remember (?:that|my|i)\b|^i go by\b|"
            r"^don't forget (?:that|my)\b|^i (?:want|would like|'d like|am going) to (?:call|"
            r"name) you\b|^(?:change|make) your name\b|^i will (?:now )?call you\b|"
            r"^your (?:new )?name (?:is|will be|should be) \w|^i want your name to\b|"
            r"^\w+ (?:will|shall) be your (?:new )?name\b|^(?:please )?go by\b|"
            r"^(?!what|how|where|which|who|so\b)\w+ is my (?:name|nickname)\b|"
            r"\b(?:address|call|refer\s+to)\s+me\s+(?:by|as)\s+(?!my\s+name)\w|"
            r"\b(?:only|just|please)\s+call\s+me\s+(?!back|later|when|if|by\s+my)\w|"
            r"\bmy\s+name's\b|\b(?:people|everyone|everybody|friends)\s+call\s+me\b|"
            r"\bi(?:'m|\s+am)\s+called\b|\bthe\s+name\s+i\s+go\s+by\b|"
            r"\b(?:start\s+)?call(?:ing)?\s+you\s+(?!back|later|tomorrow|when|if|a\s|an\s|about|"
            r"something|anything|by|what)\w|\b(?:address|refer\s+to)\s+you\s+as\b|"
            r"\brename\s+you(?:rself)?\b|\bname\s+you\s+(?!have|use|gave|call|go)\w|"
            r"\b(?:update|change|revise)\s+(?:you|your|the\s+ai)(?:'s)?\s+name\b|"
            r"\b(?:another|a\s+new|a\s+different)\s+name\s+(?:for\s+you|called)\b|"
            r"\byour\s+(?:new\s+)?(?:name|nickname)\b.*\bis\s+\w|\bis\s+your\s+(?:new\s+)?(?:name|"
            r"nickname)\b|\bwhat\s+i\s+(?:am|'m)\s+calling\s+you\b|"
            r"\breferring\s+to\s+me\s+as\b|\bi\s+(?:like|want|prefer|would\s+like|'d\s+like)\s+to\s+"
            r"be\s+called\b"
        )
        self._memory_guard = re.compile(r"\b(?:what|which|how|whether|should\s+i)\b")
        self._memory_question = re.compile(
            r"^(?:can|could|may)\s+(?:i|you)\s+(?:start\s+)?(?:call|calling|refer)\s+(?:me|you)\s+"
            r"(?!what|how|if|by\b)[a-z]|^(?:can|could|may)\s+i\s+refer\s+to\s+you\s+as\b|"
            r"^do\s+you\s+mind\s+if\s+(?:i\s+)?call\s+you\b|"
            r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:call me|go by|change your name|"
            r"refer to me as|address me as)\b|^is it (?:alright|ok|okay)(?: with you)? if i "
            r"call you\b"
        )

    def _compile_verbs(self) -> None:
        acting = self._acting
        # "send-off speech": a hyphen makes the verb part of a noun.
        self._strong_start = re.compile(rf"^(?:{self._strong_base})\b(?!-)")
        self._weak_start = re.compile(rf"^(?:{alternation(WEAK_VERBS)})\b(?!-)")
        # "buy or rent a house?", "book vs train": a choice to discuss, not two acts.
        self._choice = re.compile(
            r"^(?:buy|rent|sell|lease|book|order|pay|transfer|cancel|keep)\s+(?:or|vs\.?|versus)\s+\w"
        )
        # Uses that are not acts: "order of operations", "book of genesis".
        self._strong_blockers = re.compile(
            r"^(?:order\s+(?:of|by|in|these|the\s+following|them|it|this\s+list)|"
            r"order\b.*\b(?:alphabetical|alphabetically|ascending|descending|chronological|"
            r"chronologically|numerically|from\s+(?:smallest|largest|lowest|highest)|by\s+"
            r"(?:date|size|name|length|value))|order\s+(?:status|history|number|details|"
            r"confirmation|tracking|id)\b|book\s+(?:of|review|summary|report|club|"
            r"recommendations?|series|titles?)|schedule\s+(?:of|for\s+the|a\s+\w+\s+game)|"
            r"pay\s+(?:attention|respect|homage|tribute|off\b(?!\s+(?:my|the)))|transfer\s+"
            r"(?:learning|function|entropy|rate|matrix|window|of)|register\s+(?:of|"
            r"allocation|file|machine)|remind\s+me\s+(?:what|how|of|who|which|why|when|where|"
            r"about)|wire\s+(?:frame|diagram|protocol|format)|pair\s+(?:programming|of)|"
            r"sync\s+(?:vs|and|with\s+async)|check\s+in\s+(?:on\s+)?(?:code|changes)|"
            r"forward\s+(?:pass|propagation|declaration|slash|looking)|"
            rf"send\s+(?:me|us)\b(?!.*\b(?:{acting})\b)|"
            r"wake\s+up\b(?!\s+(?:me|my|the\s+kids|him|her|them))|"
            r"notify\s+me\s+(?:of|about)\b|reserve\s+judge?ment\b|change\s+(?:my|your|his|her|"
            r"their|our)\s+mind\b|book\s+recommendations?\b)"
        )
        # Weak verbs aimed at the asker ask for information: "update me on", "show me".
        self._weak_blockers = re.compile(
            r"^(?:update|inform|alert|tell|show|give|share|add|take)\s+(?:me|us)\b(?!\s+(?:to|"
            r"on\s+(?:the|your|this)\s+(?:list|calendar|playlist)))|^share\s+(?:what|how|why|"
            r"when|where|your|some|a\s+few|the\s+(?:details|info|information))\b|"
            r"^add\s+(?:up\s+)?(?:all\s+)?(?:my\s+|the\s+)?[\w']+\s+(?:and|together)\b|"
            r"^add\s+up\b|^add\s+(?:all\s+(?:of\s+)?)?(?:my|the)\b(?!.*\b(?:to|into|onto|on|in)\b)|"
            r"^take\s+a\s+(?:look|peek|glance)\b|^share\s+(?:the\s+)?(?:status|details|info)\b|"
            r"^share\b.*\bwith\s+me\b|^forget\s+(?:about\s+)?(?:it|that|this)\b"
        )
        # Programming and text work: "cancel a promise in javascript", "set a variable",
        # "make this email sound polite". The imperative asks how, or asks for text.
        self._programming = re.compile(
            r"\bin\s+(?:python|javascript|js|typescript|ts|java|kotlin|swift|c\+\+|c#|c|go|golang|"
            r"rust|ruby|php|perl|scala|r|matlab|sql|mysql|postgres(?:ql)?|sqlite|bash|shell|"
            r"powershell|react|vue|angular|node(?:\.js)?|django|flask|rails|spring|pandas|numpy|"
            r"excel|vba|linux|unix|windows|macos|git|docker|kubernetes|k8s|terraform|css|html|"
            r"jquery|redux|rxjs|unity|unreal|flutter|dart|android|ios|xcode|vscode|vim|emacs|"
            r"latex|markdown|regex|json|yaml|the\s+(?:code|api|script|config|terminal|shell|"
            r"console|browser|dom|database|query))\b|\b(?:parameter|param|argument|variable|"
            r"attribute|property|hyperparameter|promise|goroutine|coroutine|thread|async|await|"
            r"callback|function|method|constructor|observable|array|dict|dictionary|hashmap|"
            r"tuple|dataframe|column|regex|string|integer|boolean|enum|struct|pointer|loop|"
            r"exception|api\s+call|http\s+request|endpoint|cron\s+job|div|element|css|"
            r"component|widget|class)\b"
        )
        # Requests for a text about a thing, not acts on it: "make a shopping list for
        # tacos", "schedule a weekly study plan", "order the countries by population",
        # "remove the jargon from this paragraph", "cancel culture pros and cons".
        documents = (
            r"(?:list|checklist|plan|schedule|itinerary|routine|menu|timeline|budget|outline|"
            r"agenda|framework|strategy|template)"
        )
        passages = (
            r"(?:sentence|sentences|paragraph|paragraphs|essay|text|story|poem|article|letter|"
            r"speech|draft|document|passage|report|thesis|resume|cv|bio)"
        )
        self._request_for_text = re.compile(
            r"^(?:make|create|write|draw\s+up|put\s+together|prepare|build|design)\s+(?:me\s+)?"
            rf"(?:a|an)\s+(?:[\w'-]+\s+){{0,2}}{documents}(?:\s+(?:for|of|about|to|comparing|"
            r"that|with|on)\b|\s*$)|"
            r"^(?:make|create|draw|build|give\s+me)\s+(?:me\s+)?(?:a|an)\s+(?:[\w'-]+\s+)?(?:table|"
            r"chart|graph|diagram)\s+(?:comparing|of|that|showing|listing|with)\b|"
            r"^(?:set\s+up|set|schedule|plan)\s+(?:me\s+)?(?:a|an)\s+(?:[\w'-]+\s+){0,2}(?:plan|"
            r"routine|framework|strategy|template|itinerary)\s+(?:for|of|about|to|that|with|on)\b|"
            r"^(?:order|sort|organi[sz]e|arrange|rank|group|list)\b.*\bby\s+(?:their\s+|its\s+)?"
            r"(?:population|priority|size|date|name|length|value|age|price|rank|importance|"
            r"frequency|height|weight|area|year|score|popularity|colou?r|type|category|"
            r"alphabet\w*)\b|"
            r"^(?:delete|remove|cut|strip|drop|move|take\s+out)\b.*\b(?:from|in|of|into)\s+"
            rf"(?:this|the|my|that|these|a)\s+(?:[\w'-]+\s+)?(?:{passages}|table|code|"
            r"snippet)\b|"
            r"^(?:add|write|insert)\s+(?:a|an|the|some)\s+(?:[\w'-]+\s+)?(?:conclusion|"
            r"introduction|intro|title|heading|summary|transition|hook|closing|opening|ending)\s+"
            r"(?:to|for)\b|"
            r"^(?:change|adjust|improve|fix)\s+the\s+(?:tone|style|wording|grammar|voice|flow|"
            r"structure)\s+of\b|"
            r"^[\w'-]+(?:\s+[\w'-]+){0,3}\s+(?:explained|basics|101|pros\s+and\s+cons|"
            r"for\s+(?:dummies|beginners)|overview)\s*[?.!]*$|"
            r"^[\w'-]+\s+(?:templates?|examples?|ideas)\s+for\b"
        )
        self._text_work = re.compile(
            r"^(?:change|make|edit|modify|alter|update|turn|adjust|set|fix|add|put|convert|"
            r"shorten|lengthen|format|rewrite|rephrase|restructure|improve|correct)\s+(?:this|"
            r"the\s+following|these|those|that|the|my|it)\s+(?:[\w'-]+\s+)?(?:sentence|"
            r"sentences|text|paragraph|paragraphs|code|snippet|email|e-mail|essay|letter|"
            r"function|script|story|poem|words?|phrase|message|document|draft|article|post|"
            r"tweet|title|headline|query|recipe|plan|resume|cv|bio|description|summary|answer|"
            r"response|translation|program|class|method|section|line|lines|list|table|chart|"
            r"slide|slides|outline|speech|lyrics|caption|copy|note|notes)\b"
        )
        # "play" acts unless it is a game, a role or a thought experiment.
        self._play = re.compile(
            r"^(?:play|put\s+on)\s+(?!(?:a\s+|an\s+|the\s+)?(?:game|games|role|roles|part|"
            r"(?:some\s+)?(?:chess|checkers|poker|cards|tennis|music\s+theory)|along|as|with|"
            r"around|devil's|pretend|tic|20|twenty|trivia|word|a\s+trick|by\s+ear|it\s+safe|"
            r"fair|dumb|dead|on\s+words)\b)\S"
        )
        self._play_or_listen_start = re.compile(r"^(?:play|put\s+on|hear|listen\s+to)\b")
        self._listen = re.compile(
            r"^(?:let\s+me\s+)?(?:hear|listen\s+to)\s+(?!(?:a\s+|an\s+|your\s+|my\s+|more\s+|"
            r"about\s+|all\s+|from\s+you|some\s+(?:advice|ideas|tips|thoughts|trivia|facts|"
            r"reviews|jokes?)|the\s+(?:difference|news|weather|reviews)|you\b|what|how|why|"
            r"if|whether|when|joke|story|opinion|thoughts|reviews|trivia|facts|something|"
            r"anything|everything|the\s+(?:definition|meaning|list|rest|answer|end)|it|that|"
            r"this|again)\b)(?!.*\b(?:jokes?|story|stories|facts?|trivia|news|weather|list|"
            r"reviews?|again)\b)\S"
        )
        # Messaging the world: "text joe", "call mark", "email my boss that ...".
        self._communicate = re.compile(
            r"^(?:text|txt|message|msg|email|e-mail|call|phone|ring|dial|ping|dm|facetime|"
            r"skype|whatsapp)\s+(?:back\s+|up\s+)?(?:me\s+(?:a|an)\s+(?:uber|lyft|taxi|cab|"
            r"ambulance)|my\b|mom\b|mum\b|dad\b|him\b|her\b|them\b|everyone\b|everybody\b|"
            r"the\s+(?:team|police|doctor|office|bank|landlord|restaurant|hotel|store|"
            r"ambulance|fire\s+department|plumber|dentist|school|group)\b|911\b|"
            r"[\w']+\s+(?:that|saying|to\s+say|about|with|and\s+(?:tell|say|ask)|at|on|back|"
            r"now|please|right\s+now|'s|for\s+me|to\s+(?:say|tell|let|ask)|and\s+invite)\b|"
            r"[\w']+$|[\w']+\s+[\w']+$|[\w']+'s\s|message\s+[\w']+)|"
            r"^give\s+[\w']+(?:\s+[\w']+)?\s+a\s+(?:call|ring|text|buzz)\b|"
            r"^connect\s+me\s+(?:to|with)\s+\w|^get\s+(?:a\s+)?hold\s+of\s+(?!my\b)\w|"
            r"^(?:alert|wake|ping|notify|remind|buzz)\s+me\s+(?:at|in|on|tomorrow|every|when)\b|"
            r"^(?:tell|inform|notify|alert|contact|call|email|text|message)\s+(?:my|our)\s+"
            r"(?!(?:own|self|all|what|how|when|where|who|name|reminders?)\b)[\w'-]+|"
            r"^(?:inform|notify|alert|contact)\s+the\s+\w+"
        )
        self._communicate_block = re.compile(
            r"^(?:call|text|message|email|ring|ping|phone)\s+(?:stack|by|the\s+(?:function|"
            r"method|api|constructor)|this|it|function|method|api|super|center|centre|"
            r"classification|generation|editor|file|box|field|processing|analysis|mining|"
            r"summarization|data|string|format|size|color|style|to|in|that|based|adventure|"
            r"book|marketing|list|template|templates|etiquette|address|addresses|signature|"
            r"option|options|me\b(?!\s+(?:a|an)\s+(?:uber|lyft|taxi|cab))|us\b|buffer|queue|"
            r"bell|tone|number|numbers)\b"
        )
        self._call_object = re.compile(
            r"\b(?:make|place|start|initiate|get|set\s+up|put\s+through|open)\s+"
            r"(?:(?:a|the|an)\s+)?(?:phone\s+|video\s+)?call\b|\bdial\b"
        )
        self._tell = re.compile(
            r"^(?:let|have|allow)\s+(?!me\b|us\b|it\b|x\b|n\b|them\s+be\b|y\b|i\b)"
            r"(?:[\w']+\s+){1,4}(?:to\s+)?(?:know|see|find\s+out|be\s+aware|have\s+my|"
            r"access\s+my)\b|^show\s+(?!me\b|us\b|how\b)(?:my\s+)?(?:[\w']+\s+){1,4}to\s+"
            r"(?!me\b|us\b)\w|^tell\s+(?!me\b|us\b)(?:[\w']+\s+){1,3}where\s+i\s+(?:am|'m|will\s+"
            r"be)\b|^tell\s+(?!me\b|us\b|a\b|an\b|the\s+difference|the\s+truth|the\s+time|"
            r"stories|jokes|time\b|if\b|whether\b|what\b|how\b|the\s+meaning)(?:my\s+|the\s+)?"
            r"[\w']+\s+(?:that|i|i'm|i'll|i\s+am|we|we're|to)\b|^get\s+(?:a\s+)?(?:message|word)"
            r"\s+to|^alert\s+my\b|^(?:send|give|shoot|drop)\s+(?:[\w']+\s+){0,2}(?:a\s+)?(?:message|"
            r"text|note|email|e-mail|text\s+message)\s+(?:to|that|saying)\b|^write\s+(?:a\s+)?"
            r"text\s+(?:message\s+)?to\b|^(?:notify|inform|alert)\s+(?!me\b|us\b)(?:[\w']+\s+)"
            r"{1,3}(?:that|about|of)\b"
        )
        # Assistant settings: "talk faster", "use a male voice", "switch to whisper mode".
        self._setting = re.compile(
            rf"^(?:talk|speak|respond|reply|answer|read|address\s+me|talk\s+to\s+me|"
            rf"speak\s+to\s+me)\s+(?:to\s+me\s+)?(?:a\s+(?:bit|little)\s+|more\s+|much\s+|"
            rf"only\s+)?(?:faster|slower|quicker|quickly|slowly|louder|quieter|quietly|"
            rf"loudly|softer|softly|more\s+slowly|more\s+quickly|more\s+rapidly|rapidly|"
            rf"in\s+a\s+(?:[\w']+\s+)?(?:voice|accent|manner|whisper)|with\s+(?:a|an|the|your)\s+"
            rf"(?:\w+\s+){{0,2}}(?:voice|accent)|in\s+(?:{LANGUAGES})|(?:{LANGUAGES})|"
            rf"(?:like|as)\s+(?:a|an)\s+\w)\b|"
            r"^(?:speed|slow)\s+(?:up|down|your)\b|^(?:use|do|try|switch\s+to|change\s+to|"
            r"go\s+with|switch\s+over\s+to|move\s+over\s+to|change\s+over\s+to)\s+(?:it\s+with\s+)?"
            r"(?:a\s+|an\s+|the\s+|your\s+|one\s+of\s+your\s+)?(?:[\w']+\s+){0,2}(?:voices?|"
            r"accents?|whisper|mode)\b|"
            r"^(?:(?:start|try|begin)\s+using)\s+(?:a\s+|an\s+|the\s+|your\s+)?(?:[\w']+\s+){0,2}"
            r"(?:voice|accent)\b|^(?:start\s+)?whisper(?:ing)?\b|^(?:switch|change|set)\s+"
            r"(?:\w+\s+){0,3}(?:language|accent|voice)\b|^(?:get|be|go)\s+(?:a\s+(?:bit|little)\s+)?"
            r"(?:louder|quieter|softer)\b|^(?:\w+\s+){0,3}(?:volume|sound)\s+(?:up|down|"
            r"lower|higher|louder|quieter|to\s+\d+)\b"
        )
        # Star ratings: "rate this album four out of 6 stars", "give it 5 points".
        self._rating = re.compile(
            rf"^(?:rate|give|award)\b.*\b(?:\d|zero|{_NUMBER_WORDS})\s+(?:out\s+of\s+\w+\s+)?"
            r"(?:stars?|points?)\b|^rate\s+(?:this|the|my|it)\b.*\b(?:\d|zero|one|two|three|"
            r"four|five|six)\b|^give\b.*\b(?:a\s+)?(?:rating|score)\s+of\b"
        )
        # Devices and media: "go to the next song", "make the speakers louder".
        self._device = re.compile(
            r"^(?:start|commence|begin|resume|keep)\s+playing\b|"
            r"^(?:hear|listen\s+to)\s+(?:[\w']+\s+){0,4}(?:music|songs?|playlist|album|tracks?|"
            r"radio|podcast)\b|"
            r"^(?:go|skip|move|jump|hop|continue|advance|forward|switch|proceed|give\s+me|play)"
            r"\s+(?:\w+\s+){0,2}(?:to\s+)?(?:the\s+)?next(?:\s+(?:song|track|tune|one)\b|\s*$)|"
            r"^(?:the\s+)?next\s+(?:song|track|tune)\b|^(?:skip|pass|go\s+past|move\s+past|"
            r"get\s+past)\s+(?:on\s+)?(?:this|that|the|current)\s+(?:song|track|tune)\b|"
            r"^(?:make|turn|get|set)\s+(?:the\s+|your\s+|my\s+|it\s+)?(?:[\w']+\s+){0,2}"
            r"(?:louder|quieter|softer|brighter|dimmer|warmer|cooler|slower|faster|quicker)\b|"
            r"^(?:[\w']+\s+){0,3}(?:music|playlist|songs?)\s+please$|"
            r"^(?:go|get|switch|change|turn|enter|put\s+\w+)\s+(?:into|to|in|on)\s+(?:the\s+)?"
            r"(?:\w+\s+){0,2}(?:mode|voice)\b|"
            r"^(?:write|put|jot|note|scribble|add|throw|stick)\s+(?:[\w'\"-]+\s+){1,5}?(?:on|onto|"
            r"in|into|to)\s+(?:my|the|our)\s+(?:[\w'-]+\s+){0,2}(?:list|calendar|agenda|"
            r"schedule|planner|playlist|notes)\b"
        )

    def _compile_objects(self) -> None:
        acting, bookable = self._acting, self._bookable
        weak = alternation(WEAK_VERBS)
        definite = alternation(DEFINITE_OBJECTS)
        # The object window stops at a relative clause so that "create a script that
        # reads my emails" stays text work ("that event" is still an object).
        window = (
            r"(?:\s+(?!that\s+(?:\w+s|will|can|would|should|is|are|does|do|has|have)\b|which\b|"
            r"who\b|using\b|in\s+order\b)[\w'&$/-]+){0,10}?"
        )
        # A weak verb acts on an acting object ("delete my account"), a possessed or
        # definite record ("delete the file"), money ("move $200"), a calendar slot
        # ("delete lunch on friday"), music, or the factory settings.
        self._weak_object = re.compile(
            rf"^(?:{weak})\b{window}\s+(?:{acting})\b|"
            rf"^(?:{weak})\b{window}\s+(?:my|our|the|this|that|these|those|your|all\s+"
            rf"(?:the|my)|every)\s+(?:[\w'-]+\s+){{0,2}}(?:{definite})\b|"
            rf"^(?:{weak})\s+(?:\$\s?\d|(?:[\d,.]+|a|one|two|three|four|five|ten|twenty|"
            rf"fifty|a\s+hundred|\w+\s+hundred|\w+\s+thousand)\s+(?:dollars|bucks|usd|euros?|"
            rf"pounds|yuan|rmb|grand))|"
            rf"^(?:{weak}){window}\s+(?:on|for|at|this|next)\s+(?:{_DAYS}|tomorrow|tonight|"
            rf"\d{{1,2}}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)|(?:jan|feb|mar|apr|may|jun|jul|"
            rf"aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{{1,2}})\b|"
            r"^(?:turn|switch)\s+(?:it|that|this|everything|them|all)\s+(?:on|off|up|down)\b|"
            r"^(?:play|start|stop|pause|resume|skip|put\s+on|pull\s+up|bring\s+up|queue(?:\s+up)?|"
            r"throw\s+on|shuffle|repeat)\b(?:\s+[\w'&-]+){0,4}?\s+(?:song|songs|track|tracks|"
            r"music|album|playlist|radio|podcast|tune|tunes|audiobook|station)\b|"
            r"^(?:go|return|revert|switch|change|restore|reset|set)\s+(?:it\s+|this\s+|"
            r"everything\s+)?(?:back\s+)?(?:to\s+)?(?:the\s+)?(?:settings\s+of\s+the\s+)?"
            r"(?:initial|original|factory|default)\b"
        )
        # An acting object mentioned before the verb: "on my to-do list, add milk".
        self._acting_object = re.compile(
            rf"\b(?:my|our|the|your)\s+(?:[\w'-]+\s+){{0,2}}(?:{acting}|list|calendar|agenda)\b"
        )
        self._acting_any = re.compile(rf"\b(?:{acting})\b")
        self._bookable_word = re.compile(rf"\b(?:{bookable})\b")
        # "I need a flight", "get me a table for two", "i'd like a refund".
        self._bookable_request = re.compile(
            rf"^(?:(?:i|we)?\s*(?:really\s+|will\s+|'ll\s+|just\s+)?(?:need|want|would\s+like|"
            rf"'d\s+like|d\s+like|am\s+looking\s+for|'m\s+looking\s+for|looking\s+for|require|"
            rf"required)|(?:get|find|book|reserve|grab|order|call|send|secure|arrange)\s+"
            rf"(?:me|us)|(?:can|could|would)\s+you\s+(?:get|find|book|reserve|grab|arrange|"
            rf"secure)\s+(?:me|us)|help\s+(?:me\s+)?with)\s+"
            rf"(?:(?:a|an|the|my|some|one|two|three|four|\d+|another|new)\s+)?(?:[\w'-]+\s+)"
            rf"{{0,3}}?(?:{bookable})\b"
        )
        self._ride = re.compile(
            r"^(?:call|get|find|order|book|grab|request|send|schedule|hail)\s+(?:me\s+|us\s+)?"
            r"(?:a|an|one|another)\s+(?:uber|lyft|taxi|cab|ride|car\s+service|shuttle)\b|"
            rf"^(?:get|have|receive|obtain)\s+(?:me\s+|us\s+)?(?:(?:a|an|some|more|new|another|"
            rf"\d+)\s+)?(?:[\w'-]+\s+){{0,2}}?(?:{bookable})\b|"
            r"^(?:a\s+)?new\s+(?:reminder|alarm|timer|event|appointment|meeting|reservation)\b|"
            rf"\btable\s+for\s+(?:\d+|{_NUMBER_WORDS})\b"
        )
        # Looking for something to book: "i'm searching for a 2-way flight", "look up uber".
        seek_gap = (
            r"(?:(?!know\b|see\b|check\b|find\s+out\b|learn\b|hear\b|ask\b|understand\b|"
            r"what\b|if\b|when\b|whether\b|for\b|about\b|on\b|of\b|regarding\b|rules?\b|"
            r"polic(?:y|ies)\b|info\b|information\b|status\b|my\b)[\w'-]+\s+){0,5}?"
        )
        not_booking = r"(?!(?:[\w'-]+\s+){0,4}(?:status|rules|policy|information|info)\b)"
        describers = (
            r"(?:(?:a|an|the|some|any|cheap|cheapest|good|best|nice|available|decent|\d+|round\s*"
            r"trip|roundtrip|one[- ]way|2-way|two-way|direct|nonstop|non-stop|last[- ]minute)\s+)"
            r"{0,3}"
        )
        self._seek = re.compile(
            rf"\b(?:i|we)\s*(?:really\s+)?(?:need|want|would\s+like|'d\s+like|am\s+looking\s+for|"
            rf"'m\s+looking\s+for|am\s+searching\s+for|'m\s+searching\s+for|am\s+seeking|"
            rf"'m\s+seeking|am\s+exploring|'m\s+exploring|(?:am|'m)\s+(?:trying|striving)\s+"
            rf"to\s+find|want\s+to\s+find|need\s+to\s+find|require|must\s+(?:procure|get|"
            rf"find|book))\s+{seek_gap}(?:{bookable})\b|"
            rf"^(?:find|look\s+for|look\s+up|search\s+for|locate|show\s+me|give\s+me|procure|"
            rf"acquire|secure|obtain|arrange)\s+(?:me\s+)?{not_booking}{describers}"
            rf"(?:[\w'-]+\s+){{0,2}}(?:{bookable}|hotels|car\s+to\s+rent|place\s+to\s+stay|"
            rf"room\s+to\s+stay)\b|"
            r"^(?:find|look\s+for|look\s+up|search\s+for)\b(?!.*\b(?:rules|policy|policies|status|"
            r"information|info|luggage|baggage|bags?|when|what|how|why|where)\b)"
            r".*\b(?:flights?|hotels?|rental\s+cars?|car\s+rentals?|ubers?|taxis?)\b|"
            r"^fly\s+(?:me|us)\b|\b(?:a|an|the)\s+(?:flight|hotel|room|table|ride|car|ticket|seat)"
            r"\s+for\s+(?:me|us)\b|^(?:a\s+)?(?:hotel\s+room|room|table|suite|flight|seats?|"
            rf"tickets?)\s+for\s+(?:\d+|{_NUMBER_WORDS})\b"
        )
        # "i need my reservation cancelled", "have an alarm set", "a rental car needs to
        # be booked"; not "i want to be updated on the status" (that asks to be told).
        participles = self._participles
        self._participle = re.compile(
            rf"\b(?:(?:need|want|would\s+like|'d\s+like|d\s+like)\s+(?:[\w'$-]+\s+){{0,7}}?|"
            rf"(?:have|get)\s+(?:(?!been\b|already\b|ever\b|never\b)[\w'$-]+\s+){{1,7}}?)"
            rf"(?:to\s+be\s+|be\s+)?(?:{participles})\b"
            r"(?!\s+(?:about|of|on|as\s+to|regarding)\b)|"
            rf"\b(?:needs?|has|have|ought|should|must|will|is\s+going)\s+(?:to\s+)?(?:be\s+)?"
            rf"(?:{participles})\b(?!\s+(?:on|about|of|as\s+to|regarding)\b)|"
            rf"\bneeds?\s+(?:[\w']+\s+){{1,2}}(?:{participles})\b|"
            rf"\b(?:can|could|should|must|will)\s+(?:my|the|your|this|our)\s+(?:[\w']+\s+){{0,3}}"
            rf"be\s+(?:{participles})\b"
        )
        # Passive requests: "could a hotel be booked for me".
        self._for_me = re.compile(rf"\bbe\s+(?:{participles})\s+(?:for\s+(?:me|us)|by\s+you)\b")
        self._purpose = re.compile(rf"\bto\s+(?:{self._strong_base})\b")
        self._more = re.compile(
            r"^(?:need|want|get|order)\s+(?:some\s+)?(?:more|another|new\s+ones?)\b"
        )

    def _compile_statements(self) -> None:
        number = rf"(?:\d+|{_NUMBER_WORDS}|fifteen|twenty|thirty|forty|sixty)"
        duration = rf"{number}[\s-](?:minute|min|second|sec|hour)s?\b"
        self._language_setting = re.compile(
            rf"\b(?:talk|talking|speak|speaking|answer|answering|respond|responding|reply|"
            rf"replies|responses|communicate|communicating|address|converse|conversing|"
            rf"changing\s+over)\b(?:\s+[\w']+){{0,4}}?\s+(?:in|to|using)\s+(?:{LANGUAGES})\b|"
            rf"\b(?:{LANGUAGES})\s+(?:going\s+forward|from\s+now\s+on|as\s+(?:my|your|the)\s+"
            rf"language|instead)\b|\blanguage\b.*\bwill\s+(?:now\s+)?be\s+(?:{LANGUAGES})\b|"
            r"\bhear\s+from\s+you\s+in\b|\b(?:talk|speak)\s+like\s+(?:a|an)\s+\w|"
            r"\byou(?:'re|\s+are)\s+(?:talking|speaking)\s+(?:way\s+|a\s+bit\s+|really\s+)?"
            r"too\s+(?:fast|quickly|slow|slowly|loud|loudly|quiet|quietly|softly)\b"
        )
        # Someone else should be told or shown: "i want david to know where i'm at".
        self._let_know = re.compile(
            r"\b(?:want|need|would\s+like|'d\s+like)\s+(?!me\b|to\b)[\w']+(?:\s+[\w']+)?\s+to\s+"
            r"(?:know|have|see|get)\s+(?:where\s+i|my\s+(?:location|address|whereabouts|"
            r"number|current|gps|eta))|\b(?!i\b|we\b|you\b)[\w']+\s+needs?\s+to\s+(?:know|have)\s+"
            r"(?:where\s+i|my\s+(?:location|address|whereabouts|current|gps))|\b(?:my|the)\s+bank"
            r"\s+(?:needs?\s+to|should)\s+(?:know|be\s+(?:aware|told|informed|notified))|"
            r"\bneed\s+my\s+bank\s+to\s+know\b"
        )
        # Cancelling by saying it is no longer wanted.
        self._unwanted = re.compile(
            r"\b(?:no\s+longer|don't|doesn't|do\s+not|does\s+not)\s+(?:want|need|require)\s+"
            r"(?:my|her|his|our|their|the|this|that|a|an)\s+(?:[\w']+\s+){0,3}?(?:reservation|"
            r"booking|appointment|subscription|order|membership|account|table|room|flight|"
            r"ticket|plan|policy|card)s?\b|"
            r"\b(?:reservation|booking|appointment|subscription|membership|table|ticket)s?\b.*"
            r"\b(?:no\s+longer|not|n't|won't|isn't)\s+(?:gonna\s+|going\s+to\s+|be\s+)?(?:need|"
            r"needed|required|necessary|want|wanted)\b|\b(?:no\s+longer|not|n't|won't|don't|"
            r"dont)\s+(?:gonna\s+|going\s+to\s+)?(?:need|want|require)\s+(?:[\w']+\s+){0,3}"
            r"(?:reservation|booking|appointment|subscription|membership)\b"
        )
        # Money between the asker's own accounts: "from my savings to my checking".
        self._own_transfer = re.compile(
            r"\b(?:from|out\s+of)\s+my\s+[\w\s'-]{1,30}?\s+(?:to|into)\s+my\b|"
            r"\b(?:to|into)\s+my\s+[\w\s'-]{1,30}?\s+from\s+my\b"
        )
        # Wished states of devices, settings, lists and trips.
        self._wished_state = re.compile(
            r"\b(?:volume|brightness|thermostat|temperature|heat|heating|ac|speed)\s+(?:at|to|"
            r"of)\s+(?:level\s+)?\d+|\bfactory\s+(?:settings|default|defaults|reset|state)\b|"
            rf"\b{duration}.*\btimer\b|\btimer\b.*\b{duration}|"
            r"\b(?:be|get|take\s+me|go|come)\s+out\s+of\s+(?:the\s+)?(?:\w+\s+)?mode\b|"
            r"\b(?:not|don't|do\s+not)\s+(?:talk|speak)\s+(?:so|too)\s+(?:slow|slowly|fast|"
            r"quickly|loud|loudly|quiet|quietly)\b|\b(?:don't|do\s+not)\s+let\s+me\s+forget\b|"
            r"\bnew\s+(?:language|accent|voice)\b|\bto\s+(?:a|an)\s+new\s+playlist\b|"
            r"\bprefer\b.*\b(?:voice|accent)\b|"
            r"\b(?:it|volume|sound|you)\s+(?:to\s+be\s+)?(?:louder|quieter|softer)\b|"
            rf"\bcount(?:ing)?\s+down\s+(?:from\s+)?{number}\s+(?:minutes?|seconds?|hours?)\b|"
            r"\b(?:want|need|'d\s+like|would\s+like|place|put|add)\s+(?:a|any)\s+(?:block|stop|"
            r"hold|freeze)\s+(?:placed\s+|put\s+)?on\s+(?:my|the|our)\b|"
            r"\bnext\s+(?:song|track|tune)\b(?!\s+(?:on|to\s+be|is|will))|"
            r"^(?:get|buy|order|purchase)\s+(?:everything|all\s+the\s+(?:items|things))\s+on\s+"
            r"(?:my|the)\b|\b(?:i|we)\s+(?:need|want|would\s+like|'d\s+like|have)\s+to\s+(?:fly|"
            r"get|travel|go)\s+(?:[\w']+\s+){0,3}from\s+[\w']+(?:\s+[\w']+){0,3}\s+to\s+\w|"
            r"\b(?:talk|speak|say|present|read)\b.*\b(?:at\s+a\s+(?:[\w']+\s+)?(?:rate|speed|"
            r"pace)|more\s+(?:slowly|quickly)|slower|faster)\b|^(?:slow|speed)\s+(?:it|things)\s+"
            r"(?:down|up)\b|\bto\s+(?:a|an|the)\s+(?:[\w']+\s+){0,2}(?:voice|accent)\b|"
            r"^do\s+(?:a|an|the)\s+(?:[\w']+\s+){0,3}(?:accent|voice)\b|\bhear\s+(?:a|an)\s+"
            r"(?:[\w']+\s+){0,3}(?:accent|voice)\b|\b(?:need|want)\s+(?:the|my)\s+[\w']+\s+"
            r"(?:on|off)(?:\s+(?:please|now|right\s+now))?\s*$|"
            rf"\b(?:chat|chatting|answers?|language(?:\s+setting)?|switch|switching|"
            rf"instructions|write|respond)\b(?:\s+[\w']+){{0,4}}?\s+(?:only\s+)?(?:in|to|using|"
            rf"to\s+be)\s+(?:{LANGUAGES})\b|\b(?:assist|assistance|help)\s+(?:me\s+)?with\s+"
            r"(?:my|the)\s+(?:[\w'-]+\s+){0,3}(?:bill|payment|transfer|reservation|booking|"
            r"order)\b"
        )
        # "cleaning needs to be on my to-do list", "i need oranges on my shopping list";
        # not "i need to know what is on my list".
        self._on_list = re.compile(
            r"\b(?:needs?\s+to\s+be|should\s+be|i\s+need|i\s+want|put)\s+(?:[\w'-]+\s+){0,4}?"
            r"(?:on|onto|to|in)\s+(?:my|the)\s+(?:[\w'-]+\s+){0,2}(?:list|calendar|playlist|"
            r"agenda)\b"
        )
        self._asks_to_know = re.compile(
            r"\b(?:know|hear|see|check|find\s+out|tell\s+me|remind\s+me\s+what|understand|why)\b"
        )

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
        wh = self._wh_start.match(clause) is not None
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
        kind, rest, strict = self._lead(clause)
        if kind is None:
            return None
        rule = f"en.write.{kind}"
        if self._memory.match(rest):
            return "en.write.memory"
        if (
            self._bookable_request.match(clause)
            or self._bookable_request.match(rest)
            or self._ride.match(rest)
            or (not wh and self._seek.search(clause))
            or self._seek.match(rest)
        ):
            return rule
        for candidate in (clause, rest):
            participle = self._participle.search(candidate)
            if participle is not None and not self._not_object.search(
                candidate[: participle.end()]
            ):
                return rule
        if strict:
            # "can i pay a bill", "can i change your language"; but "can i make a
            # reservation at X" asks whether X takes reservations.
            acts = self._acts(rest, "") and not rest.startswith("make ")
            specific = self._acting_any.search(rest) is not None
            short_call = len(rest.split()) <= 3 and self._communicate.match(rest) is not None
            device = self._device.match(rest) or self._setting.match(rest)
            return rule if (acts and specific) or short_call or device else None
        if self._acts(rest, earlier):
            return rule
        if kind != "imperative" or rest.startswith("use "):
            # "can i get some funds to pay my bill", "i need more" after "out of checks".
            purpose = self._purpose.search(rest)
            if purpose is not None and not self._not_object.search(rest[: purpose.start()]):
                return rule
            if self._more.match(rest) and self._acting_any.search(earlier):
                return rule
        return None

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
