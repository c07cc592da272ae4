"""The node-aware YAML reader: safe_load's data, plus the line of every key and item."""

from __future__ import annotations

import pytest
import yaml

from gateway.yamlfile import YamlFileError, parse_yaml_document

SAMPLES = [
    "a: 1\nb:\n  c: 2\n  d: [x,\n    y]\ne:\n  - 1\n  - f: 3\n",
    "base: &b\n  x: 1\n  y: 2\nother:\n  <<: *b\n  y: 3\n",
    "flow: {a: 1, b: [1, 2, {c: d}]}\nwhen: 2024-01-01\nnothing: ~\n",
    "",
    "# only a comment\n",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_same_data_as_safe_load(text: str) -> None:
    assert parse_yaml_document(text, "x.yaml").data == (yaml.safe_load(text) or {})


def test_lines_of_keys_and_items() -> None:
    document = parse_yaml_document(SAMPLES[0], "x.yaml")
    assert document.lines[("b", "c")] == 3
    assert document.lines[("b", "d", 1)] == 5
    assert document.lines[("e", 1, "f")] == 8
    assert document.line_of(("b", "d", 7, "deeper")) == 4  # nearest known ancestor
    assert document.line_of(("missing",)) is None


def test_merged_keys_point_at_where_they_were_written() -> None:
    document = parse_yaml_document(SAMPLES[1], "x.yaml")
    assert document.lines[("other", "x")] == 2  # from the anchor
    assert document.lines[("other", "y")] == 6  # overridden here


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("a: 1\n b: [\n", 2, "not valid YAML"),
        ("a: 1\nb: 2\na: 3\n", 3, "duplicate key (first at line 1)"),
        ("- 1\n", 1, "the top level must be a mapping"),
        ("a: &x [*x]\n", 1, "recursive alias"),
        ("a: !!python/name:os.system\n", 1, "not valid YAML"),
    ],
)
def test_errors_carry_the_line(text: str, line: int, reason: str) -> None:
    with pytest.raises(YamlFileError) as caught:
        parse_yaml_document(text, "x.yaml")
    assert caught.value.line == line
    assert caught.value.reason.startswith(reason)
    assert str(caught.value).startswith(f"x.yaml:{line}: {reason}")


def test_alias_bombs_are_refused() -> None:
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for level in range(1, 7):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    with pytest.raises(YamlFileError, match="too many values"):
        parse_yaml_document("\n".join(lines) + "\n", "x.yaml")
