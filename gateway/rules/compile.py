"""The one compiler for rule files: load YAML, expand word lists, compile, validate.

A rule file (`data/<lang>/<job>.yaml`) has three optional sections:

    words:      name -> list of literal phrases, or {inflect: [...], ending: "ing"}
    fragments:  name -> a raw regular-expression fragment ("one|two|three"), or a list
                of alternatives joined with "|" in their order
    rules:      list of {name, pattern, flags?, positive?, negative?}; a pattern is a
                string, or a list of pieces written one after the other (long patterns)
    tables:     name -> {key: value} (values text or whole numbers), or
                {value: [keys]} (each key maps to the value it is listed under; later
                groups win); the entity comparison's canonical forms

A pattern refers to a word list or fragment as `{@name}`: a word list becomes an
alternation of its escaped phrases, longest first (spaces match any whitespace), a
fragment is pasted as written. A name refers to the rule's own file; `{@stem.name}` to
another file of the same folder (`{@lexicon.acting_objects}` in `en/write.yaml`) or to a
shared file (`{@calendar.weekdays}`, from `data/shared/calendar.yaml`).

Every rule's examples are checked when the book loads: each `positive` example must be
found by the pattern (`search`), each `negative` must not. An example is a string, or
`{text, class}` where `class` is what the whole classifier says about it (checked by
tests/unit/rules/test_rule_examples.py). Any problem (unknown reference, bad regex,
duplicate name, example that does not behave) raises `RuleError` naming the file and
rule, so a bad edit fails at start-up, not at the first request.

Loading happens on first use (`RuleBook.packaged()`, called by the classifier's
constructor, which runs in the app's lifespan), never at import.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import yaml

from gateway.rules.inflect import inflections

__all__ = ["Example", "Rule", "RuleBook", "RuleError", "RuleFile", "alternation", "inflections"]

DATA_PACKAGE = "gateway.rules.data"
# The language and shared folders, in load order (shared first: the others refer to it).
_FOLDERS = ("shared", "en", "zh")
# libyaml's loader when the build has it: the rule files parse in ~60 ms instead of ~400.
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_REFERENCE = re.compile(r"\{@([A-Za-z_][\w.]*)\}")
_FLAGS: Mapping[str, re.RegexFlag] = {
    "IGNORECASE": re.IGNORECASE,
    "MULTILINE": re.MULTILINE,
    "DOTALL": re.DOTALL,
}


class RuleError(ValueError):
    """A rule file is wrong; the message names the file and the rule."""


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    # What the whole classifier says about the text ("write_intent", ...), when given.
    expected_class: str | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    source: str  # the file, "en/write"
    pattern: re.Pattern[str]
    positive: tuple[Example, ...]
    negative: tuple[Example, ...]


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of literal phrases, longest first so multi-word phrases win
    (ties in alphabetical order, so the compiled pattern is the same in every process)."""
    escaped = {re.escape(w).replace(r"\ ", r"\s+") for w in words}
    return "|".join(sorted(escaped, key=lambda w: (-len(w), w)))


_Value = TypeVar("_Value")


def _named(table: Mapping[str, _Value], name: str, missing: str) -> _Value:
    """`table[name]`, or a `RuleError` saying "<missing> '<name>'" (a rule module or a
    rule file naming something the data does not have)."""
    try:
        return table[name]
    except KeyError:
        raise RuleError(f"{missing} {name!r}") from None


class RuleFile:
    """One loaded file: its word lists and compiled rules, looked up by name."""

    def __init__(
        self,
        source: str,
        words: Mapping[str, tuple[str, ...]],
        rules: Mapping[str, Rule],
        tables: Mapping[str, Mapping[str, str | int]] | None = None,
        fragments: Mapping[str, str] | None = None,
        groups: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    ) -> None:
        self.source = source
        self._words = words
        self._rules = rules
        self._tables = tables or {}
        self._fragments = fragments or {}
        self._groups = groups or {}

    def pattern(self, name: str) -> re.Pattern[str]:
        return self.rule(name).pattern

    def rule(self, name: str) -> Rule:
        return _named(self._rules, name, f"{self.source}: no rule named")

    def words(self, name: str) -> tuple[str, ...]:
        return _named(self._words, name, f"{self.source}: no word list named")

    def rules(self) -> tuple[Rule, ...]:
        return tuple(self._rules.values())

    def fragment(self, name: str) -> str:
        """A fragment as expanded (its `{@name}` references replaced)."""
        return _named(self._fragments, name, f"{self.source}: no fragment named")

    def texts(self, name: str) -> dict[str, str]:
        """A table whose values are text."""
        table = self._table(name)
        if not all(isinstance(value, str) for value in table.values()):
            raise RuleError(f"{self.source}: table {name!r} must map to text")
        return {key: str(value) for key, value in table.items()}

    def numbers(self, name: str) -> dict[str, int]:
        """A table whose values are whole numbers."""
        table = self._table(name)
        if not all(isinstance(value, int) for value in table.values()):
            raise RuleError(f"{self.source}: table {name!r} must map to whole numbers")
        return {key: int(value) for key, value in table.items()}

    def groups(self, name: str) -> Mapping[str, tuple[str, ...]]:
        """A `{value: [keys]}` table as written: each value with its keys, in order."""
        return _named(self._groups, name, f"{self.source}: no grouped table named")

    def _table(self, name: str) -> Mapping[str, str | int]:
        return _named(self._tables, name, f"{self.source}: no table named")


class RuleBook:
    """All rule files, by source name ("en/write", "zh/write", "shared/calendar")."""

    def __init__(self, files: Mapping[str, RuleFile]) -> None:
        self._files = files

    def file(self, source: str) -> RuleFile:
        return _named(self._files, source, "no rule file")

    def files(self) -> tuple[RuleFile, ...]:
        return tuple(self._files.values())

    @staticmethod
    @functools.cache
    def packaged() -> RuleBook:
        """The rules shipped in `gateway/rules/data/`, loaded and checked on first use and
        kept: they are read-only, and every classifier of the process shares them."""
        texts: dict[str, str] = {}
        root = importlib.resources.files(DATA_PACKAGE)
        for folder in _FOLDERS:
            entries = sorted(root.joinpath(folder).iterdir(), key=lambda entry: entry.name)
            for entry in entries:
                if entry.name.endswith(".yaml"):
                    texts[f"{folder}/{entry.name[: -len('.yaml')]}"] = entry.read_text("utf-8")
        return RuleBook.from_texts(texts)

    @staticmethod
    def from_texts(texts: Mapping[str, str]) -> RuleBook:
        """Compile files given as {source: YAML text}, e.g. {"en/write": "..."}."""
        # What each folder can refer to as `{@stem.name}`: its own earlier files and the
        # shared ones. Shared files load first, then each folder's `lexicon` file.
        exported: dict[str, dict[str, str]] = {"shared": {}}
        files: dict[str, RuleFile] = {}
        defined_in: dict[str, str] = {}
        for source in sorted(texts, key=_load_order):
            folder, _, stem = source.rpartition("/")
            visible = {**exported["shared"], **exported.get(folder, {})}
            compiled, fragments = _compile_file(source, texts[source], visible)
            for rule in compiled.rules():
                if rule.name in defined_in:
                    raise RuleError(
                        f"{source}: rule {rule.name!r} is already defined in "
                        f"{defined_in[rule.name]}"
                    )
                defined_in[rule.name] = source
            exported.setdefault(folder, {}).update(
                {f"{stem}.{key}": value for key, value in fragments.items()}
            )
            files[source] = compiled
        return RuleBook(files)


def _load_order(source: str) -> tuple[bool, bool, str]:
    folder, _, stem = source.rpartition("/")
    return (folder != "shared", stem != "lexicon", source)


def _compile_file(
    source: str, text: str, shared: Mapping[str, str]
) -> tuple[RuleFile, dict[str, str]]:
    """The file's RuleFile, and its references as regex fragments (for shared files)."""
    try:
        # _YAML_LOADER is CSafeLoader or SafeLoader: plain data only.
        data = yaml.load(text, Loader=_YAML_LOADER) or {}  # noqa: S506
    except yaml.YAMLError as exc:
        raise RuleError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"words", "fragments", "rules", "tables"}:
        raise RuleError(f"{source}: expected a mapping of words, fragments, rules and tables")
    words = _word_lists(source, data.get("words") or {})
    fragments: dict[str, str] = {name: alternation(items) for name, items in words.items()}
    for name, fragment in (data.get("fragments") or {}).items():
        if isinstance(fragment, list) and all(isinstance(piece, str) for piece in fragment):
            fragment = "|".join(fragment)
        if not isinstance(fragment, str) or name in fragments:
            raise RuleError(f"{source}: fragment {name!r} must be a string with its own name")
        # A fragment may use the word lists and the fragments defined before it.
        fragments[name] = _expand(f"{source}, fragment {name!r}", fragment, {**shared, **fragments})
    rules: dict[str, Rule] = {}
    for entry in data.get("rules") or []:
        rule = _compile_rule(source, entry, {**shared, **fragments})
        if rule.name in rules:
            raise RuleError(f"{source}: rule {rule.name!r} is defined twice")
        rules[rule.name] = rule
    raw_tables = data.get("tables") or {}
    tables = {name: _table(source, name, raw) for name, raw in raw_tables.items()}
    # Grouped tables also as written ({value: [keys]}, in order): the polarity axes.
    groups = {
        name: {str(value): tuple(keys) for value, keys in raw.items()}
        for name, raw in raw_tables.items()
        if all(isinstance(keys, list) for keys in raw.values())
    }
    raw_fragments = {name: fragments[name] for name in data.get("fragments") or {}}
    return RuleFile(source, words, rules, tables, raw_fragments, groups), fragments


def _table(source: str, name: str, raw: Any) -> dict[str, str | int]:
    if not isinstance(raw, dict):
        raise RuleError(f"{source}: table {name!r} must be a mapping")
    table: dict[str, str | int] = {}
    grouped = [isinstance(value, list) for value in raw.values()]
    if all(grouped):
        for value, keys in raw.items():
            for key in keys:
                if not isinstance(key, str):
                    raise RuleError(f"{source}: table {name!r}: {key!r} is not text")
                table[key] = str(value)
        return table
    for key, value in raw.items():
        if any(grouped) or not isinstance(value, str | int) or isinstance(value, bool):
            raise RuleError(
                f"{source}: table {name!r} mixes lists and values, or has a value that is "
                f"neither text nor a whole number ({key!r})"
            )
        table[str(key)] = value
    return table


def _word_lists(source: str, raw: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    words: dict[str, tuple[str, ...]] = {}
    for name, items in raw.items():
        if isinstance(items, dict):
            words[name] = _inflected(source, name, items, words)
        elif isinstance(items, list) and all(isinstance(item, str) for item in items):
            words[name] = tuple(items)
        else:
            raise RuleError(f"{source}: word list {name!r} must be a list of strings")
    return words


def _inflected(
    source: str, name: str, spec: Mapping[str, Any], known: Mapping[str, tuple[str, ...]]
) -> tuple[str, ...]:
    """{inflect: [list names or words], ending: "ing"}: the inflected forms of the verbs
    (of the named earlier lists, or the words themselves), those with the ending only."""
    verbs: list[str] = []
    for item in spec.get("inflect") or []:
        if isinstance(item, str) and item.startswith("@"):
            if item[1:] not in known:
                raise RuleError(f"{source}: word list {name!r} refers to unknown {item!r}")
            verbs.extend(known[item[1:]])
        elif isinstance(item, str):
            verbs.append(item)
        else:
            raise RuleError(f"{source}: word list {name!r}: inflect takes strings")
    ending = str(spec.get("ending", ""))
    forms = {form for verb in verbs for form in inflections(verb) if form.endswith(ending)}
    return tuple(sorted(forms))


def _compile_rule(source: str, entry: Any, fragments: Mapping[str, str]) -> Rule:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise RuleError(f"{source}: every rule needs a name")
    name = entry["name"]
    where = f"{source}, rule {name!r}"
    raw = entry.get("pattern")
    if isinstance(raw, list) and all(isinstance(piece, str) for piece in raw):
        raw = "".join(raw)
    if not isinstance(raw, str):
        raise RuleError(f"{where}: needs a pattern")
    flags = 0
    for flag in entry.get("flags") or []:
        if flag not in _FLAGS:
            raise RuleError(f"{where}: unknown flag {flag!r}")
        flags |= _FLAGS[flag]
    try:
        pattern = re.compile(_expand(where, raw, fragments), flags)
    except re.error as exc:
        raise RuleError(f"{where}: bad regular expression: {exc}") from None
    positive = _examples(where, entry.get("positive"))
    negative = _examples(where, entry.get("negative"))
    for example in positive:
        if pattern.search(example.text) is None:
            raise RuleError(f"{where}: positive example {example.text!r} does not match")
    for example in negative:
        if pattern.search(example.text) is not None:
            raise RuleError(f"{where}: negative example {example.text!r} matches")
    return Rule(name, source, pattern, positive, negative)


def _expand(where: str, raw: str, fragments: Mapping[str, str]) -> str:
    """`raw` with each `{@name}` replaced by that word list's alternation or fragment."""

    def replace(match: re.Match[str]) -> str:
        reference = match.group(1)
        if reference not in fragments:
            raise RuleError(f"{where}: unknown word list or fragment {{@{reference}}}")
        return fragments[reference]

    return _REFERENCE.sub(replace, raw)


def _examples(where: str, raw: Any) -> tuple[Example, ...]:
    examples: list[Example] = []
    for item in raw or []:
        if isinstance(item, str):
            examples.append(Example(item))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            cls = item.get("class")
            examples.append(Example(item["text"], None if cls is None else str(cls)))
        else:
            raise RuleError(f"{where}: an example is a string or {{text, class}}")
    return tuple(examples)
