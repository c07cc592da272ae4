"""Replacing a generated block of the README between two marker comments.

Only the text between the markers changes; the markers and everything around them stay
byte for byte (the file is read and written as bytes, so line endings are kept too).
"""

from __future__ import annotations

from pathlib import Path

LOAD_START = "<!-- load-benchmark:start -->"
LOAD_END = "<!-- load-benchmark:end -->"


class MarkersError(ValueError):
    """The README does not hold exactly one start marker followed by one end marker."""


def replace_between(text: str, block: str, start: str = LOAD_START, end: str = LOAD_END) -> str:
    """`text` with what lies between `start` and `end` replaced by `block` (on lines of
    its own between the markers)."""
    starts, ends = text.count(start), text.count(end)
    if starts != 1 or ends != 1:
        raise MarkersError(
            f"expected one {start} and one {end}, found {starts} and {ends}: "
            "put the two markers around the block to generate"
        )
    head_end = text.index(start) + len(start)
    tail_start = text.index(end)
    if tail_start < head_end:
        raise MarkersError(f"{end} comes before {start}")
    return f"{text[:head_end]}\n{block.rstrip(chr(10))}\n{text[tail_start:]}"


def rewrite_file(path: str | Path, block: str) -> bool:
    """Replaces the block in the file at `path`; True if the file changed."""
    file = Path(path)
    before = file.read_bytes().decode("utf-8")
    after = replace_between(before, block)
    if after == before:
        return False
    file.write_bytes(after.encode("utf-8"))
    return True
