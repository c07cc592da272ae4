"""How the order of the words that carry two asks changed: a block moved, a symmetric
pair swapped, or roles swapped around a pivot (`order_change`)."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.difference.tokens import Token

# Question words of both languages: in a pivot they belong to the question.
_ASKING = frozenset(
    {
        "what",
        "which",
        "who",
        "how",
        "why",
        "where",
        "when",
        "谁",
        "哪",
        "哪个",
        "哪些",
        "几",
        "多少",
    }
)
# Pivots that keep both roles when the words around them swap ("A and B", "A 和 B").
_SYMMETRIC = frozenset(
    {"and", "or", "vs", "versus", ",", "、", "和", "与", "跟", "及", "以及", "同", "还是", "或"}
)
# Preserving classes whose words may move freely (question words of a template).
_EDGE_SLACK = 2
_MAX_ORDER_TOKENS = 60
BEARING_ORDER = frozenset({"role_swap", "reorder_operator"})


def order_change(
    telling_l: Sequence[tuple[int, Token]], telling_r: Sequence[tuple[int, Token]]
) -> str:
    """How the order of the telling words (`_telling`) changed between two asks:

    - `template`: it did not (only templates, question words or filler moved);
    - `reorder_block`: two adjacent blocks traded places, X Y -> Y X ("install Python
      on Windows" / "on Windows, install Python", 百度贴吧怎么设置头像 / 怎么设置百度贴吧头像);
      in English the two must touch in one of the asks ("the tallest mountain" /
      "mountain ... the tallest"): "every integer a rational number" / "every
      rational number an integer" swaps subject and predicate around the article;
    - `reorder_symmetric`: X M Y -> Y M X around a symmetric pivot ("A and B", 和);
    - `role_swap` (bearing): X M Y -> Y M X around any other pivot ("Celsius to
      Fahrenheit", "Alice owes Bob", 北京比上海);
    - `reorder_operator` (bearing): a transposed block holds an operator, a number or a
      quoted span (`x++` / `++x`);
    - `reorder`: anything else; the caller has the structure guard confirm it."""
    keys_l, keys_r = [t.key for _, t in telling_l], [t.key for _, t in telling_r]
    start = 0
    while start < min(len(keys_l), len(keys_r)) and keys_l[start] == keys_r[start]:
        start += 1
    end = 0
    while (
        end < min(len(keys_l), len(keys_r)) - start
        and keys_l[len(keys_l) - 1 - end] == keys_r[len(keys_r) - 1 - end]
    ):
        end += 1
    # A shared edge may belong to a transposed block (战争雷霆 / 战机世界 share 战,
    # "X好还是Y好" ends both alternatives in 好): the lenient reading of a few shorter
    # edges wins over a role swap.
    found = [
        _transposition(telling_l, telling_r, shared_start, shared_end)
        for shared_start in range(start, max(start - _EDGE_SLACK, 0) - 1, -1)
        for shared_end in range(end, max(end - _EDGE_SLACK, 0) - 1, -1)
    ]
    for outcome in ("reorder_block", "reorder_symmetric", "reorder_operator", "role_swap"):
        if outcome in found:
            return outcome
    return "reorder"


def _transposition(
    telling_l: Sequence[tuple[int, Token]],
    telling_r: Sequence[tuple[int, Token]],
    start: int,
    end: int,
) -> str | None:
    """X M Y -> Y M X between the first `start` and the last `end` telling tokens."""
    left = [token for _, token in telling_l]
    keys_l, keys_r = [t.key for t in left], [t.key for _, t in telling_r]
    middle_l = left[start : len(left) - end]
    core_l, core_r = keys_l[start : len(keys_l) - end], keys_r[start : len(keys_r) - end]
    if sorted(core_l) != sorted(core_r) or len(core_l) > _MAX_ORDER_TOKENS:
        return None
    size = len(core_l)
    for x in range(1, size):
        for y in range(1, size - x + 1):
            pivot = core_l[x : size - y]
            if core_r != core_l[size - y :] + pivot + core_l[:x]:
                continue
            blocks = [*middle_l[:x], *middle_l[size - y :]]
            if any(t.kind == "operator" for t in blocks):
                return "reorder_operator"
            # Question words and templates in the pivot belong to the question, not to
            # either role ("罗汉鱼能和鹦鹉鱼一起养吗": 能 is "can").
            roles = [
                t.key for t in middle_l[x : size - y] if t.kind != "canon" and t.key not in _ASKING
            ]
            if not pivot:
                if not _touching(telling_l, telling_r, start, size, x, y):
                    return "reorder"
                return "reorder_block"
            # Nothing but question words between them ("10 公里是多少英里" / "10 英里是
            # 多少公里") is no evidence of symmetry.
            if roles and all(key in _SYMMETRIC for key in roles):
                return "reorder_symmetric"
            return "role_swap"
    return None


def _touching(
    telling_l: Sequence[tuple[int, Token]],
    telling_r: Sequence[tuple[int, Token]],
    start: int,
    size: int,
    x: int,
    y: int,
) -> bool:
    """Whether the two transposed blocks stand next to each other, with no token at all
    between them, in either ask (left: X then Y; right: Y then X)."""
    x_end_l = telling_l[start + x - 1][0]
    y_start_l = telling_l[start + x][0]
    y_end_r = telling_r[start + y - 1][0]
    x_start_r = telling_r[start + y][0]
    return y_start_l == x_end_l + 1 or x_start_r == y_end_r + 1
