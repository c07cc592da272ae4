"""FT.SEARCH replies read into rows: a document whose key expired between the index's
answer and the load of its fields (no fields) is left out, in RESP2 and RESP3."""

from __future__ import annotations

from gateway.storage.redis.vectors import _search_rows


def test_resp2_rows_without_fields_are_left_out() -> None:
    reply = [2, b"k:gone", None, b"k:kept", [b"entry_id", b"kept", b"vector_distance", b"0.1"]]
    assert _search_rows(reply) == [{"entry_id": b"kept", "vector_distance": b"0.1", "id": "k:kept"}]


def test_resp3_rows_without_fields_are_left_out() -> None:
    reply = {
        b"total_results": 2,
        b"results": [
            {b"id": b"k:gone", b"extra_attributes": {}},
            {b"id": b"k:kept", b"extra_attributes": {b"entry_id": b"kept"}},
        ],
    }
    assert _search_rows(reply) == [{"entry_id": b"kept"}]
