"""Code comments that cite a measurement link to a section of docs/measurements.md that
exists, and every section there is cited from the code (no orphaned figures)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "measurements.md"
LINK = re.compile(r"docs/measurements\.md#([a-z0-9-]+)")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    return re.sub(r"[^a-z0-9 -]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_from_the_code_names_a_section_and_every_section_is_linked() -> None:
    sections = {_anchor(h) for h in re.findall(r"^## (.+)$", DOC.read_text(), re.MULTILINE)}
    links = {
        anchor
        for path in (ROOT / "gateway").rglob("*.py")
        for anchor in LINK.findall(path.read_text(encoding="utf-8"))
    }
    assert links, "the code links its measurements to docs/measurements.md"
    assert links - sections == set(), "links to sections that do not exist"
    assert sections - links == set(), "sections no code links to"
