r"""Write-path hygiene for long-term memories: refuse prompt injections and secrets.

Stored memories are later pasted into LLM prompts, so a memory is untrusted text that
gets the authority of the prompt. Content that tries to steer the model (override its
instructions, fake a system turn, smuggle a tool call) must not be stored, and neither
must credentials: once injected they may be echoed back to anyone who shares the prompt.

`inspect_memory_content` returns the first `GuardVerdict` found, or None. Verdicts carry
a stable rule name and a fixed message per rule, never any of the content, so that API
errors and logs cannot leak the secret they refuse. Patterns run on every form of the
text that `guard_views.matching_views` derives: NFKC (full-width letters, digits and "："
look like ASCII) without invisible characters (so "ig\u200bnore" cannot split a
keyword), look-alike letters of other scripts folded to Latin, spaced-out letters joined,
and payloads hidden in base64, hex, %-escapes, HTML entities, `\u` escapes or Unicode
tag characters decoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gateway.memory.guard_views import matching_views

GuardKind = Literal["prompt_injection", "secret"]


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """Why content was refused; safe to show in an API error or a log line."""

    kind: GuardKind
    rule: str  # short stable rule name, e.g. "ignore_instructions", "card_number"
    message: str  # fixed text per rule: never contains the matched secret or content


_I = re.IGNORECASE

# --- prompt injection -------------------------------------------------------------------

# What an override targets; a qualifier ("previous", "above") or "all"/"your" is required,
# so "ignore the rules of grammar" stays a fact about the user. A first-person subject
# ("I forget all rules of bridge") describes the user, not an order to the model.
_NOT_FIRST_PERSON = r"(?<!\bi\s)(?<!\bwe\s)(?<!\bthey\s)"
_QUALIFIER = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|"
    r"existing|safety|developer)"
)
_TARGET = r"(?:instructions?|rules|prompts?|directives?|guidelines|commands|guardrails)"
_IGNORE_VERB = rf"{_NOT_FIRST_PERSON}\b(?:ignore|disregard|forget|override|bypass)"
_IGNORE_EN = re.compile(
    # "ignore all previous instructions", "disregard the above rules"
    rf"{_IGNORE_VERB}\s+(?:(?:all|any|every)\s+(?:of\s+)?)?(?:(?:the|your|these|those)\s+)?"
    rf"(?:{_QUALIFIER}\s+)+{_TARGET}\b|"
    # "ignore all instructions", "forget your rules"
    rf"{_IGNORE_VERB}\s+(?:(?:all|any)\s+(?:of\s+)?(?:your\s+)?|your\s+){_TARGET}\b|"
    # "ignore the instructions above", "disregard everything above"
    rf"{_IGNORE_VERB}\s+(?:(?:all|the|your)\s+)?(?:{_TARGET}|everything|anything)\s+"
    r"(?:above|before|so\s+far|you\s+(?:were|have\s+been)\s+(?:told|given))",
    _I,
)
# 忽略之前的指令 / 无视以上所有规则 / 忘记先前的提示: a verb, a "before" word, a target,
# within one clause (the gaps stop at sentence punctuation). "忘记了…" (forgot) is a fact.
_IGNORE_ZH = re.compile(
    r"(?:忽略|无视|忽视|忘记|忘掉|不要理会|不用理会)(?!了)[^。！？!?\n]{0,8}?"
    r"(?:之前|以上|上面|先前|此前|前面|上述|原来|原有|原先|系统)[^。！？!?\n]{0,6}?"
    r"(?:指令|指示|规则|提示|设定|命令)"
)
# Chat-template control tokens have no business in a remembered fact, also with spaces
# inside ("< | im_start | >", "[ /INST ]") that a tokenizer-savvy model still reads.
_TEMPLATE_TOKEN = re.compile(
    r"<\s*\|\s*[a-z][a-z_\u2581 ]{1,40}?\s*\|\s*>|\[\s*/?\s*INST\s*\]|<\s*<\s*/?\s*SYS\s*>\s*>|"
    r"<\s*/?\s*(?:start|end)_of_turn\s*>",
    _I,
)
# A remembered tool call could be replayed by the model as if it had issued it.
_TOOL_CALL = re.compile(
    r"[\"'](?:tool_calls|function_call)[\"']|\b(?:tool_calls|function_call)\s*[:=]|"
    r"</?(?:tool_call|function_call|tool_use)>|"
    # {"name": "...", "arguments": ...} with the two keys side by side, in either order;
    # each value is bounded, so the scan stays linear in the length of the text.
    r"[\"']name[\"']\s*:\s*[\"'][^\"']{1,200}[\"']\s*,\s*[\"'](?:arguments|parameters)[\"']\s*:|"
    r"[\"'](?:arguments|parameters)[\"']\s*:\s*(?:\"(?:[^\"\\]|\\.){0,500}\"|\{[^{}]{0,500}\})\s*,"
    r"\s*[\"']name[\"']\s*:",
    _I,
)
# Fake role headers. A bare "system" in prose ("our billing system is SAP") is fine; only
# header shapes count: "system prompt:", "### system", "[system]", "<system>", a
# "system:" line that addresses the model ("System: Windows 11" is a fact), and the
# Chinese "系统提示词" / "系统提示：".
_SYSTEM_HEADER = re.compile(
    r"\bsystem\s+(?:prompt|message|instructions?)\s*[:=]|"
    r"^[ \t]*#{1,6}[ \t]*system\b(?:[ \t]+(?:prompt|message))?[ \t]*(?::|$)|"
    r"^[ \t]*system[ \t]*:\s*(?:you\b|your\b|ignore\b|from\s+now\b|act\b|pretend\b|always\b|"
    r"never\b|do\s+not\b|don't\b|你)|"
    r"\[\s*system\s*\]|<\s*/?\s*system\s*>|"
    r"系统提示词|系统(?:提示|指令|消息)\s*:|[\[【]\s*系统\s*[\]】]",
    _I | re.MULTILINE,
)
# Text that claims to speak for whoever configures the assistant, to smuggle in a rule:
# "New rule from the developer: ...", "Message from the system administrator: ...",
# "Developer override: ...", "来自开发者的新规则：...". A rule from the user's manager
# or landlord is a fact about the user; only the assistant's principals count.
_PRINCIPAL = (
    r"(?:the\s+|your\s+|an?\s+)?(?:developers?|dev\s+team|system\s+administrators?|"
    r"administrators?|admins?|system|operators?|openai|anthropic|(?:ai\s+|model\s+)?provider|"
    r"creators?|makers?|owners?\s+of\s+(?:this|the)\s+(?:assistant|ai|model|bot))"
)
_AUTHORITY_CLAIM = re.compile(
    r"\b(?:new|updated|revised|additional|latest|important|urgent|official|mandatory)\s+"
    r"(?:rules?|instructions?|directives?|policy|policies|orders?|guidelines?|commands?)\s+"
    rf"(?:from|by|of)\s+{_PRINCIPAL}\b|"
    r"\b(?:rules?|instructions?|directives?|orders?|commands?|messages?|notes?|notices?)\s+"
    rf"(?:from|by)\s+{_PRINCIPAL}\s*[:：-]|"
    # Not "developer mode": a phone setting; "you are now in developer mode" is a
    # role override.
    r"\b(?:developer|admin(?:istrator)?|operator|openai|anthropic)\s+"
    r"(?:override|instructions?|directives?|commands?|orders?)\b|"
    r"(?:来自)?(?:开发者|开发人员|管理员|运营方|官方)(?:的)?(?:最新|新|更新的?)?"
    r"(?:规则|指令|命令|指示|要求)\s*[:：]",
    _I,
)
_NEW_SYSTEM_PROMPT = re.compile(
    r"\b(?:new|updated|revised|real|actual)\s+system\s+(?:prompt|message|instructions?)\b|"
    r"新的?系统(?:提示|指令)",
    _I,
)
# Re-defining who the assistant is. "you are now" only with a persona-ish continuation,
# so "you are now subscribed" or "... in the VIP program" stay harmless; "你现在是否…"
# (whether) is a question.
_ROLE_OVERRIDE = re.compile(
    r"\byou\s+are\s+now\s+(?:(?:a|an|the|my)\b|in\s+[\w-]+\s+mode\b|(?-i:DAN)\b|"
    r"no\s+longer\b|free\b|unrestricted|unfiltered|called\b|named\b|known\s+as\b)|"
    r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall|should|have\s+to)\b|"
    r"从现在(?:开始|起)[，,\s]*你(?:是|要|将|必须|就是)|你现在(?:是|就是)(?!否|不是)",
    _I,
)
# Acting as a role is ordinary in real life ("I act as the team lead", "I act as the
# system admin at work"); only an order to take a persona that escapes the assistant's
# rules counts. DAN is case-sensitive so "Dan" is a name.
_PERSONA = (
    r"(?:system|admin(?:istrator)?|root\b|superuser|sudo\b|developer|(?-i:DAN)\b|"
    r"jailbr(?:eak|oken)|unrestricted|unfiltered|uncensored|evil\b|god\s*mode|"
    r"(?:ai|assistant|model|chatbot)\s+(?:without|with\s+no)\s+(?:any\s+)?"
    r"(?:rules|restrictions|limits|filters|guidelines))"
)
_ACT_AS_EN = re.compile(
    rf"{_NOT_FIRST_PERSON}\b(?:act(?:ing)?\s+as|pretend(?:ing)?\s+(?:to\s+be|you(?:'re|\s+are))|"
    r"role-?\s?play(?:ing)?\s+as|impersonat(?:e|ing))\s+(?:(?:a|an|the|my|your)\s+)?"
    rf"(?:[\w-]+\s+){{0,3}}?{_PERSONA}",
    _I,
)
# 扮演 / 假装 / 充当 followed, within the clause, by a rule-escaping persona; "我在话剧里
# 扮演哈姆雷特" is a hobby.
_ACT_AS_ZH = re.compile(
    r"(?:扮演|假装(?:成|是)?|充当)[^。！？!?\n]{0,20}?"
    r"(?:系统|管理员|开发者|开发人员|(?-i:DAN)|越狱|无限制|不受限制|没有(?:任何)?限制|"
    r"无(?:任何)?约束|不受约束|邪恶)",
    _I,
)

# --- secrets ----------------------------------------------------------------------------

_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_ANTHROPIC_KEY = re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")
# The digit lookahead keeps hyphenated words ("sk-learn-is-...") out.
_OPENAI_KEY = re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")
_GITHUB_TOKEN = re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}")
_SLACK_TOKEN = re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")
_GOOGLE_KEY = re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")
_BEARER = re.compile(r"\bbearer\s+(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{20,}", _I)
# "password: hunter2", "db_password=…", "api_key=abc123", "my password is hunter2!",
# "密码：xxx". Keywords start after a non-letter rather than at \b, because "_" is a word
# character and "db_password" must count. After a colon or "=" any password-ish value
# counts; after "is"/"was" (and for the broader secret/token words) the value must look
# like a credential: no spaces, 6+ characters, a digit or symbol. That keeps "I forgot my
# password yesterday", "the secret is to add salt" and "my password is too long" out.
# Placeholders ("${API_KEY}", "<your-key>", "{{token}}") are not secrets either.
_PW_WORDS = r"(?:password|passwd|pwd|pass\s?code|passphrase)"
_CRED_WORDS = (
    r"(?:client[\s_-]?secret|secret(?:[\s_-]?(?:access[\s_-]?)?key)?|api[\s_-]?key|"
    r"access[\s_-]?key|(?:auth|access|refresh|api)?[\s_-]?token|private[\s_-]?key)"
)
_CREDENTIAL = re.compile(
    rf"(?<![a-z]){_PW_WORDS}\s*[:=]\s*[\"']?(?![$<{{%])[^\s\"',;]{{4,}}|"
    rf"(?<![a-z])(?:{_PW_WORDS}|{_CRED_WORDS})s?\s*(?:[:=]|\s(?:is|was)\s)\s*[\"']?(?![$<{{%])"
    r"(?=[^\s\"']*[\d@#$%^&*_+=~])[^\s\"']{6,}|"
    r"(?:密码|口令|密钥|秘钥|私钥|令牌)\s*[:=]\s*[^\s，。；、,;]{3,}|"
    r"(?:密码|口令|密钥|秘钥|私钥|令牌)\s*(?:是|为)\s*[:=]?\s*[A-Za-z0-9!@#$%^&*_+=~.-]{4,}",
    _I,
)
# Card candidates: an unbroken run, or 4-4-4-4(-3) / Amex 4-6-5 groups with one
# consistent separator. Issuer prefixes start with 2-6 (Mastercard 2-series through
# UnionPay/Discover 6), which keeps 13-digit millisecond timestamps ("17...") out; phone
# numbers with a "+" prefix are skipped. The Luhn check then drops most other numbers.
_CARD = re.compile(
    r"(?<![\w+.-])(?:[2-6]\d{12,18}|[2-6]\d{3}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?|"
    r"3\d{3}([ -])\d{6}\2\d{5})(?![\w-])"
)
_NON_DIGIT = re.compile(r"\D")

_INJECTION_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("chat_template_token", _TEMPLATE_TOKEN, "contains chat-template control tokens"),
    ("tool_call_payload", _TOOL_CALL, "contains a tool or function call payload"),
    ("system_prompt_header", _SYSTEM_HEADER, "contains a fake system prompt header"),
    ("new_system_prompt", _NEW_SYSTEM_PROMPT, "tries to install a new system prompt"),
    ("ignore_instructions", _IGNORE_EN, "tries to override the assistant's instructions"),
    ("ignore_instructions", _IGNORE_ZH, "tries to override the assistant's instructions"),
    ("role_override", _ROLE_OVERRIDE, "tries to redefine the assistant's role"),
    ("act_as_persona", _ACT_AS_EN, "asks the assistant to take an unrestricted persona"),
    ("act_as_persona", _ACT_AS_ZH, "asks the assistant to take an unrestricted persona"),
    ("authority_claim", _AUTHORITY_CLAIM, "claims to give rules on the developer's behalf"),
)
# Most specific first: an Anthropic key is also "sk-…", a JWT is also a bearer value,
# and "api_key=sk-…" should name the provider rather than the generic assignment.
_SECRET_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("private_key", _PRIVATE_KEY, "contains a private key"),
    ("anthropic_api_key", _ANTHROPIC_KEY, "contains an Anthropic API key"),
    ("openai_api_key", _OPENAI_KEY, "contains an OpenAI API key"),
    ("aws_access_key_id", _AWS_KEY_ID, "contains an AWS access key id"),
    ("github_token", _GITHUB_TOKEN, "contains a GitHub token"),
    ("slack_token", _SLACK_TOKEN, "contains a Slack token"),
    ("google_api_key", _GOOGLE_KEY, "contains a Google API key"),
    ("jwt", _JWT, "contains a JSON Web Token"),
    ("bearer_token", _BEARER, "contains a bearer token"),
    ("credential_assignment", _CREDENTIAL, "contains a password or secret value"),
)


def _luhn_ok(digits: str) -> bool:
    """Luhn checksum: every second digit from the right is doubled (minus 9 if > 9)."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)  # `\d` also matches non-ASCII decimal digits
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _has_card_number(text: str) -> bool:
    for match in _CARD.finditer(text):
        digits = _NON_DIGIT.sub("", match.group())
        if 13 <= len(digits) <= 19 and _luhn_ok(digits):
            return True
    return False


def inspect_memory_content(text: str) -> GuardVerdict | None:
    """None when the content is safe to store and inject.

    Secrets are checked first: a caller may quarantine an injection for review, but a
    secret must not be kept anywhere, so content with both is reported as a secret.
    """
    views = matching_views(text)
    for rule, pattern, reason in _SECRET_RULES:
        if any(pattern.search(view) for view in views):
            return GuardVerdict("secret", rule, f"memory content rejected: {reason} ({rule})")
    if any(_has_card_number(view) for view in views):
        return GuardVerdict(
            "secret",
            "card_number",
            "memory content rejected: contains a payment card number (card_number)",
        )
    for rule, pattern, reason in _INJECTION_RULES:
        if any(pattern.search(view) for view in views):
            return GuardVerdict(
                "prompt_injection", rule, f"memory content rejected: {reason} ({rule})"
            )
    return None
