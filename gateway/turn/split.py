"""Split a user turn into the material it carries and the ask.

Material is what the user pasted for the model to work on: code, quoted passages and
emails, tables, CSV and JSON, documents and retrieved context. The ask is the question
or instruction about it. Two requests may share an answer only when their material is
the same (compared exactly, after whitespace normalisation) and their asks mean the
same: a sentence embedding of "context + question" is dominated by the context (with
300 shared characters, two unrelated questions already score a median cosine of 0.84
on the shipped embedder, with 1,200 characters 0.97), so a different question about the
same document, or the same question about a document with one clause changed, would
look like a paraphrase.

The rules, strongest signal first:

1. Marked material, at any length: fenced code (```), `<tag>...</tag>` blocks, triple
   quotes, lines quoted with `>`, markdown tables and CSV rows, JSON paragraphs,
   unfenced code paragraphs, inline `code` and quoted passages ("...", “...”, 「...」,
   『...』, 《...》 of 40 characters or more; shorter quoted words stay in the ask,
   where the entity comparison requires the same ones).
2. Labelled sections: `Context:` / `Document:` / `背景：` ... are material,
   `Question:` / `Task:` / `问题：` ... the ask.
3. An instruction that names the text it works on: `Translate into French: ...`,
   `Summarize the following:` followed by lines, `总结以下内容：...`, or a first
   sentence that asks about the text after it (`What does this script do?` + code);
   a question or instruction in a paragraph of its own after that text belongs to the
   ask (`下面是周会纪要：...` + `列出所有待办事项。`).
4. Only for turns longer than `max_ask_chars`: paragraphs (the instruction before the
   document, or the question after it) and then sentences (a question closing a long
   paragraph).

An ask still longer than `max_ask_chars` (see `ask_length`) after these rules is not
compared by meaning: only the exact cache may serve it (`long_prompt` when nothing
could be split off, `query_too_long` when the ask itself is that long).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.entities.quotes import MAX_QUOTED_WORDS_CHARS, QUOTED_SPAN

# --- marked material -------------------------------------------------------------

_FENCE = re.compile(r"(?ms)^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)")
_TAG = re.compile(r"<(/?)([A-Za-z][\w.-]{0,40})(?:\s[^<>\n]{0,200})?>")
_TRIPLE_QUOTES = re.compile(r'(?s)("""|\'\'\')(.*?)\1')
_QUOTED_LINES = re.compile(r"(?m)(?:^[ \t]*>.*(?:\n|$))+")
# One backtick each side: ``...'' is a tokeniser's quotation mark, not code.
_INLINE_CODE = re.compile(r"(?<!`)`[^`\n]{1,400}`(?!`)")

_CODE_LINE = re.compile(
    r"""(?x)
    ^[ \t]{2,}\S                                   # indented
    | [;{]\s*$ | ^\s*[}\])]                        # braces and statement ends
    | ^\s*(?:def|class|import|from\s+\S+\s+import|return|function|const|let|var|public
          |private|static|\#include|package|fn|func|SELECT|INSERT|UPDATE|DELETE\s+FROM
          |CREATE\s+TABLE|@\w+)\b
    | =>|==|!=|:=|\+=|->|::
    | ^\s*\w+(?:\.\w+)*\(.*\)\s*:?\s*$             # a call or a signature alone on a line
    | ^\s*[\w.\[\]]+\s*=\s*\S                       # an assignment
    """
)
_MAX_CODE_LINE_CHARS = 400
_SENTENCE_END = re.compile(r"[.?!。？！]\s*$")

# --- labels and instructions -----------------------------------------------------

_MATERIAL_LABEL = (
    r"context|contexts|document|documents|doc|passage|passages|article|text|background|"
    r"email|e-mail|message|input|data|reference|references|source|sources|excerpt|"
    r"content|transcript|notes|paragraph|snippet|code|review|story|essay|report|"
    r"资料|背景|材料|文章|上下文|原文|文本|内容|参考资料|参考|段落|文档|邮件|代码|数据|输入"
)
_ASK_LABEL = (
    r"question|questions|query|task|instruction|instructions|request|ask|q|问题|任务|要求|指令|提问"
)
# At the start of a line, or after the end of a sentence ("... Question: why?").
_LABEL_LINE = re.compile(
    r"(?im)(?:^|(?<=[.?!。？！] )|(?<=[.?!。？！]))[ \t]*(?:#+\s*)?(?:\*\*)?"
    rf"(?P<label>{_MATERIAL_LABEL}|{_ASK_LABEL})"
    r"(?:\s*\d+)?(?:\*\*)?\s*[:：](?:\*\*)?[ \t]*"
)
_ASK_LABELS = frozenset(_ASK_LABEL.split("|"))

_INSTRUCTION_VERB = re.compile(
    r"""(?ix)^\s*(?:please\s+|kindly\s+|can\s+you\s+|could\s+you\s+|请|帮我|麻烦)?
    (?:translate|summari[sz]e|rewrite|rephrase|paraphrase|correct|proofread|fix|explain
      |classify|categori[sz]e|analy[sz]e|reverse|sort|count|convert|format|simplify
      |shorten|expand|detect|extract|identify|tag|label|parse|review|evaluate|grade|score
      |improve|edit|polish|debug|refactor|optimi[sz]e|comment\s+on|critique|check
      |what\s+(?:does|do|is)\s+(?:this|the\s+following)|answer|respond\s+to|reply\s+to
      |翻译|总结|概括|归纳|改写|润色|纠正|修改|解释|分析|提取|分类|检查|评价|优化|回答|回复
      |列出|列举|找出|计算|比较|说明|告诉我|给出)"""
)
_POINTS_AT_TEXT = re.compile(
    r"(?i)\b(?:following|below|this|these|above|attached)\b"
    r"|以下|下面|下列|如下|这段|这篇|这个|这条|这份|这些|这张|上面|上述"
)
# "Use the passages below", "Based on the following", "根据以下资料"
_READING_VERB = re.compile(
    r"(?i)^\s*(?:please\s+)?(?:use|using|read|consider|given|based\s+on|according\s+to"
    r"|refer\s+to|look\s+at|请?根据|请?阅读|请?参考|基于)"
)
_QUESTION_START = re.compile(
    r"(?i)^\s*(?:what|how|why|which|who|whom|whose|when|where|can|could|would|should|is|are"
    r"|do|does|did|will|was|were|has|have|may|might|shall|please|tell|give|list|name"
    r"|describe|explain|summari[sz]e|compare)\b"
)
_CHINESE_QUESTION = re.compile(r"吗|呢|什么|怎么|如何|为什么|哪|多少|几|是否|能否|请|帮我|是不是")
# 把...列出来, 请..., 帮我..., ...一下
_CHINESE_IMPERATIVE = re.compile(r"^(?:请|把|帮|给我|麻烦)|(?:出来|一下)[。.!！]?$")
_SENTENCE = re.compile(r"(?m)[^.?!。？！\n]+(?:[.?!。？！]+|$)")
_SPACES = re.compile(r"[ \t\u3000]+")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


@dataclass(frozen=True, slots=True)
class TurnSplit:
    ask: str  # what is compared by meaning
    material: tuple[str, ...]  # normalised blocks, in order: compared exactly
    rule: str  # which rule decided (decision records, tests)


def normalise_material(block: str) -> str:
    """Material is compared byte for byte: only line endings are unified (CRLF and CR to
    LF, which editors and platforms change on their own), and the line breaks and
    spaces that separate the block from the ask around it are dropped (the block's
    leading and trailing line breaks, the spaces after its last character, and a
    one-line block's leading spaces). Everything inside is content: runs of spaces,
    tabs, trailing spaces within, case and indentation (a TSV row with an empty column,
    a string literal `'a    b'` and Python's indentation all change the answer)."""
    block = block.replace("\r\n", "\n").replace("\r", "\n").strip("\n").rstrip(" ")
    # A one-line block's leading spaces separate it from the ask ("Translate into
    # French: I love cheese"); in a block of lines they may be the first line's indent.
    return block.lstrip(" ") if "\n" not in block else block


_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def ask_length(text: str) -> int:
    """Characters, a CJK character counting as three. A Chinese character carries about
    as much meaning as three Latin letters, and shared text dominates the shipped
    embedder at a third of the length: 100 shared Chinese characters lift two unrelated
    LCQMC questions to a p99 cosine of 0.93, as 300 shared English characters do for QQP
    questions (README, "Material and ask")."""
    return len(text) + 2 * len(_WIDE.findall(text))


_WHITESPACE = re.compile(r"\s")
# Longer texts are cleaned in slices: one C call over megabytes holds the interpreter
# lock throughout, even in a worker thread; between slices it changes hands.
_CLEAN_SLICE_CHARS = 64 * 1024


def _clean_ask(text: str) -> str:
    """Runs of whitespace between words become one space; inside a quoted span or an
    inline code span they are kept as written (`'a    b'` is not `'a b'`)."""
    if len(text) <= _CLEAN_SLICE_CHARS:
        return _collapse_outside_quotes(text)
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = start + _CLEAN_SLICE_CHARS
        if end < len(text):
            # Cut at whitespace, never inside a word: the same words as the whole.
            space = _WHITESPACE.search(text, end)
            end = space.start() if space is not None else len(text)
        piece = " ".join(text[start:end].split())
        if piece:
            pieces.append(piece)
        start = end
    return " ".join(pieces)


# Spans whose whitespace is content: quotes (straight, curly, CJK, single quotes at a
# word's edge, not apostrophes) and inline code.
_VERBATIM_SPAN = re.compile(
    r"`[^`\n]{1,400}`"
    r'|"[^"\n]{1,400}"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』'
    r"|(?<![\w'])'[^'\n]{1,400}'(?![\w'])"
)


def _collapse_outside_quotes(text: str) -> str:
    if "\t" not in text and not any(mark in text for mark in "`\"“「『'"):
        return " ".join(text.split())
    pieces: list[str] = []
    position = 0
    for match in _VERBATIM_SPAN.finditer(text):
        pieces.append(_RUN_OF_SPACE.sub(_one_space_or_tabs, text[position : match.start()]))
        pieces.append(match.group(0))
        position = match.end()
    pieces.append(_RUN_OF_SPACE.sub(_one_space_or_tabs, text[position:]))
    return "".join(pieces).strip(" \n")


_RUN_OF_SPACE = re.compile(r"\s+")


def _one_space_or_tabs(match: re.Match[str]) -> str:
    """A run of spaces and line breaks is one space; its tabs are kept (a TSV row's
    empty column is two tabs, not one)."""
    return "\t" * match.group(0).count("\t") or " "


class _Extractor:
    """Takes marked material out of a text, leaving a space where each block was."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.blocks: list[tuple[int, str]] = []  # (position in the original, block)

    def take(self, pattern: re.Pattern[str], placeholder: str = "") -> None:
        """Blocks are blanked (newlines kept, so the lines around them stay apart);
        inline spans leave `placeholder`, so the ask still reads as a sentence
        (`What does "…" mean?`)."""

        def replace(match: re.Match[str]) -> str:
            self.blocks.append((match.start(), match.group(0)))
            return placeholder or _blank(match)

        self.text = pattern.sub(replace, self.text)

    def take_long_quotes(self) -> None:
        """Quoted passages; short quoted words stay in the ask, where the entity
        comparison holds them to the same words (`gateway/entities/quotes.py`)."""

        def replace(match: re.Match[str]) -> str:
            inner = next(group for group in match.groups() if group is not None)
            if len(inner) < MAX_QUOTED_WORDS_CHARS:
                return match.group(0)
            self.blocks.append((match.start(), match.group(0)))
            return '"…"'

        self.text = QUOTED_SPAN.sub(replace, self.text)

    def take_paragraphs(self, predicate: Callable[[str], bool]) -> None:
        pieces = []
        position = 0
        for start, end in _paragraph_spans(self.text):
            paragraph = self.text[start:end]
            if paragraph.strip() and predicate(paragraph):
                pieces.append(self.text[position:start])
                pieces.append(re.sub(r"[^\n]", " ", paragraph))
                self.blocks.append((start, paragraph))
                position = end
        pieces.append(self.text[position:])
        self.text = "".join(pieces)

    def take_line_runs(self, in_run: Callable[[str, str], bool], min_lines: int) -> None:
        """Runs of at least `min_lines` consecutive lines for which `in_run(first line of
        the run, line)` holds."""
        lines = self.text.split("\n")
        offsets = []
        position = 0
        for line in lines:
            offsets.append(position)
            position += len(line) + 1
        index = 0
        while index < len(lines):
            end = index
            while end < len(lines) and in_run(lines[index], lines[end]):
                end += 1
            if end - index >= min_lines:
                self.blocks.append((offsets[index], "\n".join(lines[index:end])))
                for row in range(index, end):
                    lines[row] = " " * len(lines[row])
                index = end
            else:
                index += 1
        self.text = "\n".join(lines)

    def material(self) -> tuple[str, ...]:
        return tuple(
            normalise_material(block)
            for _, block in sorted(self.blocks, key=lambda item: item[0])
            if block.strip()
        )


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    position = 0
    for separator in _BLANK_LINES.finditer(text):
        spans.append((position, separator.start()))
        position = separator.end()
    spans.append((position, len(text)))
    return spans


def _blank(match: re.Match[str]) -> str:
    # Keep the newlines so that paragraphs and lines around a block stay apart.
    return re.sub(r"[^\n]", " ", match.group(0))


def _is_json_paragraph(paragraph: str) -> bool:
    text = paragraph.strip()
    return (text[:1], text[-1:]) in (("{", "}"), ("[", "]")) and len(text) > 2


def _is_code_paragraph(paragraph: str) -> bool:
    lines = [line for line in paragraph.split("\n") if line.strip()]
    if len(lines) < 2:
        return False
    # A line of code is short; longer ones are not read (and cannot make the
    # backtracking patterns slow).
    code = sum(
        len(line) <= _MAX_CODE_LINE_CHARS and bool(_CODE_LINE.search(line)) for line in lines
    )
    return code * 2 >= len(lines) + 1 or code == len(lines)


def _table_row(first: str, line: str) -> bool:
    # `| a | b |` rows and tab-separated rows (a plain count: no backtracking)
    return (line.count("|") >= 2 or "\t" in line) and bool(line.strip())


def _csv_row(first: str, line: str) -> bool:
    """Comma-separated values: lines with the run's number of commas that do not read as
    sentences (a two-column run needs three lines, see `_take_marked`)."""
    commas = first.count(",")
    return commas >= 1 and line.count(",") == commas and not _SENTENCE_END.search(line)


def _csv_wide_row(first: str, line: str) -> bool:
    return first.count(",") >= 2 and _csv_row(first, line)


def _tag_blocks(extractor: _Extractor) -> None:
    """`<context>...</context>` blocks (outermost ones), paired in one pass over the
    tags so that unclosed tags cost nothing."""
    open_tags: dict[str, list[int]] = {}
    spans: list[tuple[int, int]] = []
    for match in _TAG.finditer(extractor.text):
        name = match.group(2).lower()
        if not match.group(1):
            open_tags.setdefault(name, []).append(match.start())
        elif open_tags.get(name):
            start = open_tags[name].pop()
            spans = [span for span in spans if span[0] < start]  # keep the outermost
            spans.append((start, match.end()))
    text = extractor.text
    for start, end in sorted(spans, reverse=True):
        extractor.blocks.append((start, text[start:end]))
        text = text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]
    extractor.text = text


def _take_marked(text: str) -> _Extractor:
    extractor = _Extractor(text)
    extractor.take(_FENCE)
    _tag_blocks(extractor)
    extractor.take(_TRIPLE_QUOTES)
    extractor.take(_QUOTED_LINES)
    extractor.take_line_runs(_table_row, min_lines=2)
    extractor.take_line_runs(_csv_wide_row, min_lines=2)
    extractor.take_line_runs(_csv_row, min_lines=3)
    extractor.take_paragraphs(_is_json_paragraph)
    extractor.take_paragraphs(_is_code_paragraph)
    extractor.take(_INLINE_CODE, placeholder="`…`")
    extractor.take_long_quotes()
    return extractor


def _labelled(text: str) -> tuple[str, list[str]] | None:
    """`Context: ... Question: ...` sections; None when no material label is present."""
    matches = list(_LABEL_LINE.finditer(text))
    if not any(m.group("label").lower() not in _ASK_LABELS for m in matches):
        return None
    preamble = text[: matches[0].start()]
    asks: list[str] = []
    material: list[str] = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        if match.group("label").lower() in _ASK_LABELS:
            asks.append(body)
        else:
            material.append(body)
    if not asks:
        # `Context: ...` then the question on a line of its own, unlabelled.
        closing = _closing_ask(material[-1], lines=True)
        if closing is not None:
            material[-1], question = closing
            asks.append(question)
    if asks and preamble.strip() and not _is_question(preamble):
        # The app's template before the sections ("You are a support assistant. Answer
        # using only the context."): the same for every request it sends, so compared
        # exactly; left in the ask it would make every two questions look alike.
        material.insert(0, preamble)
    else:
        asks.insert(0, preamble)
    return " ".join(asks), material


def _closing_ask(text: str, lines: bool) -> tuple[str, str] | None:
    """A question or instruction that closes a block of material, in a paragraph of its
    own (or on a line of its own, where the block was labelled): (material, ask)."""
    pieces = [
        p for p in (text.strip().split("\n") if lines else _BLANK_LINES.split(text)) if p.strip()
    ]
    if len(pieces) < 2:
        return None
    last = pieces[-1]
    if ask_length(last) <= _MAX_CLOSING_ASK_CHARS and _closes(last):
        return text[: text.rfind(last)], last
    return None


_MAX_CLOSING_ASK_CHARS = 200


def _lead(text: str) -> tuple[str, str] | None:
    """`Can you translate this into French? <text>`, `What does this script do?\n<code>`:
    a first sentence that asks about the text after it."""
    match = re.match(r"(?s)\s*([^\n]{1,200}?(?:[?？.。!！:：](?=\s)|\n))(.+)", text)
    if match is None:
        return None
    head, tail = match.group(1), match.group(2)
    if len(tail.strip()) < 20 or not _POINTS_AT_TEXT.search(head):
        return None
    if _INSTRUCTION_VERB.match(head) or _is_question(head):
        return head, tail
    return None


def _is_instruction(text: str) -> bool:
    """Opens with an instruction verb ("Summarize", "翻译", "请...", "把...列出来")."""
    return bool(_INSTRUCTION_VERB.match(text)) or bool(_CHINESE_IMPERATIVE.search(text.strip()))


def _is_request(text: str) -> bool:
    """A question or an instruction: what the user asks of the model."""
    return _is_question(text) or _is_instruction(text)


def _leads(text: str) -> bool:
    """Introduces the text after it: ends with a colon, or opens with an instruction,
    or asks about "this", "the following", "以下"... A document's own first paragraph
    rarely does any of these."""
    return (
        text.rstrip().endswith((":", "："))
        or _is_instruction(text)
        or (
            bool(_POINTS_AT_TEXT.search(text))
            and (_is_question(text) or bool(_READING_VERB.match(text)))
        )
    )


def _closes(text: str) -> bool:
    """Ends a block of material as what the user asks of it: a question, an
    instruction, or a sentence about "this standup", "上面这段文字"..."""
    return _is_request(text) or bool(_POINTS_AT_TEXT.search(text))


def _is_question(text: str) -> bool:
    stripped = text.strip()
    return (
        stripped.endswith(("?", "？"))
        or bool(_QUESTION_START.match(stripped))
        or bool(_CHINESE_QUESTION.search(stripped))
    )


def _instruction_colon(text: str) -> tuple[str, str] | None:
    """`Translate into French: ...`, `Summarize the following:\\n...`: the instruction
    before the first colon, the text it works on after it."""
    match = re.search(r"[:：]", text)
    if match is None:
        return None
    head, tail = text[: match.start()], text[match.end() :]
    if not head.strip() or not tail.strip() or "\n" in head.strip() or len(head) > 300:
        return None
    if _INSTRUCTION_VERB.match(head):
        return head, tail
    if _POINTS_AT_TEXT.search(head) and len(tail.strip()) >= 20:
        return head, tail
    return None


def _paragraphs(text: str, max_ask_chars: int) -> tuple[str, str] | None:
    paragraphs = [p for p in _BLANK_LINES.split(text) if p.strip()]
    if len(paragraphs) < 2:
        return None
    first, last = paragraphs[0], paragraphs[-1]
    leads = ask_length(first) <= max_ask_chars and _leads(first)
    closes = ask_length(last) <= max_ask_chars and _closes(last)
    if leads and closes and len(paragraphs) >= 3:
        # "Use the passages below to answer. <passages> Who founded the company?"
        return first + "\n" + last, "\n\n".join(paragraphs[1:-1])
    if leads:
        return first, "\n\n".join(paragraphs[1:])
    if closes:
        return last, "\n\n".join(paragraphs[:-1])
    return None


def _lines(text: str, max_ask_chars: int) -> tuple[str, str] | None:
    lines = [line for line in text.strip().split("\n") if line.strip()]
    if len(lines) < 2:
        return None
    first, last = lines[0], lines[-1]
    if ask_length(first) <= max_ask_chars and first.rstrip().endswith((":", "：")):
        return first, "\n".join(lines[1:])
    if ask_length(last) <= max_ask_chars and _is_request(last):
        return last, "\n".join(lines[:-1])
    return None


def _sentences(text: str, max_ask_chars: int) -> tuple[str, str] | None:
    sentences = [s for s in _SENTENCE.findall(text) if s.strip()]
    if len(sentences) < 2:
        return None
    first, last = sentences[0], sentences[-1]
    if ask_length(last) <= max_ask_chars and _is_request(last):
        return last, text[: text.rfind(last)]
    if ask_length(first) <= max_ask_chars and _leads(first) and _POINTS_AT_TEXT.search(first):
        return first, text[len(first) :]
    return None


_LONG_TURN_RULES = (("paragraphs", _paragraphs), ("lines", _lines), ("sentences", _sentences))


# A character every rule below needs before it can take material: line breaks, code and
# quotation marks, tags, table bars, colons, braces and brackets.
_MAY_CARRY_MATERIAL = re.compile(r"[\n`\"“”「」『』《》<>|:：\t{}\[\]]")

# Longer turns are not split (the work stays bounded): they are one long ask, served
# by the exact cache only.
MAX_SPLIT_CHARS = 50_000


def split_turn(text: str, max_ask_chars: int) -> TurnSplit:
    """The ask and the material of one user turn's text."""
    # Spaces and line breaks around the turn are not content; a tab is (the empty last
    # column of a pasted TSV row).
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip(" \n")
    if len(text) > MAX_SPLIT_CHARS:
        return TurnSplit(ask=_clean_ask(text), material=(), rule="too_long_to_split")
    if (
        ask_length(text) <= max_ask_chars
        and not _MAY_CARRY_MATERIAL.search(text)
        and not _POINTS_AT_TEXT.search(text)
    ):
        # Most turns are one short question with nothing any rule below could take: the
        # cache's hot path skips a dozen passes over them.
        return TurnSplit(ask=_clean_ask(text), material=(), rule="plain")
    extractor = _take_marked(text)
    material = list(extractor.material())
    rest = extractor.text
    rule = "marked" if material else "plain"
    labelled = _labelled(rest)
    if labelled is not None:
        rest, sections = labelled
        material.extend(normalise_material(s) for s in sections if s.strip())
        rule = "labelled"
    else:
        for name, attempt in (("instruction", _instruction_colon), ("lead", _lead)):
            found = attempt(rest)
            if found is not None:
                rest, block = found
                closing = _closing_ask(block, lines=False)
                if closing is not None:
                    block, question = closing
                    rest = f"{rest}\n{question}"
                material.append(normalise_material(block))
                rule = name
                break
    if ask_length(_clean_ask(rest)) > max_ask_chars:
        for long_rule, split_long in (
            ("paragraphs", _paragraphs),
            ("lines", _lines),
            ("sentences", _sentences),
        ):
            parts = split_long(rest, max_ask_chars)
            if parts is not None:
                rest = parts[0]
                material.append(normalise_material(parts[1]))
                rule = long_rule
                break
    return TurnSplit(ask=_clean_ask(rest), material=tuple(m for m in material if m), rule=rule)
