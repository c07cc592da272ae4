"""Replacing a generated block of the README between two marker comments.

The markers are HTML comments, each on a line of its own (invisible in the rendered
README). Only the text between them changes; the markers and everything around them stay
byte for byte (the file is read and written as bytes, so line endings are kept too).
"""

from __future__ import annotations

import re
from pathlib import Path

LOAD_START = "<!-- load-benchmark:start -->"
LOAD_END = "<!-- load-benchmark:end -->"


class MarkersError(ValueError):
    """The README does not hold exactly one start marker followed by one end marker."""


def _marker_lines(text: str, marker: str) -> list[re.Match[str]]:
    # Only a marker on a line of its own counts: prose that names it (as the README's
    # description of this option does) is left alone.
    return list(re.finditer(rf"^[ \t]*{re.escape(marker)}[ \t]*\r?$", text, re.MULTILINE))


def replace_between(text: str, block: str, start: str = LOAD_START, end: str = LOAD_END) -> str:
    """`text` with what lies between the `start` and `end` lines replaced by `block` (on
    lines of its own between the markers)."""
    starts, ends = _marker_lines(text, start), _marker_lines(text, end)
    if len(starts) != 1 or len(ends) != 1:
        raise MarkersError(
            f"expected one line {start} and one line {end}, found {len(starts)} and "
            f"{len(ends)}: put the two markers, each on a line of its own, around the block"
        )
    head_end, tail_start = starts[0].end(), ends[0].start()
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
