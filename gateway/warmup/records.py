"""One line of an import file -> a recorded (request body, answer) pair, or the reason
it cannot be one.

Accepted shapes, one JSON object per line:

- `{"request": {chat body}, "response": {chat.completion}}`: the response may also be
  the list of `chat.completion.chunk` objects of a streamed answer; optional
  `"status_code"` and `"error"` beside them.
- OpenAI batch lines with the request joined in: `{"body": {chat body}, "response":
  {"status_code": 200, "body": {chat.completion}}, "error": null}`; a `url` other than
  the chat completions endpoint is refused.

Nothing here looks at the texts: classification, keys and the store rules are the
pipeline's (`gateway/warmup/importer.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from gateway.completions import StreamAssembler
from gateway.errors import GatewayInternalError

CHAT_COMPLETIONS_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_CHUNK = "chat.completion.chunk"


class Refusal(StrEnum):
    """Why a record was not stored, besides the classifier's bypass reasons (those keep
    their own codes: `write_intent`, `time_sensitive`, ...)."""

    INVALID_JSON = "invalid_json"  # the line is not JSON
    INVALID_RECORD = "invalid_record"  # JSON, but none of the accepted shapes
    UNSUPPORTED_ENDPOINT = "unsupported_endpoint"  # a batch line for another endpoint
    ERROR = "error"  # the recorded call failed: status >= 400 or an `error` object
    INVALID_REQUEST = "invalid_request"  # the body the gateway would answer with a 400
    INVALID_RESPONSE = "invalid_response"  # no chat.completion (or its chunks)
    UNKNOWN_MODEL = "unknown_model"  # the body's model is not in the config's model_list
    # The body names a user while the policy injects memory: the recorded answer may
    # have been written with that user's memories (`--include-user-records` to import).
    USER_SCOPED = "user_scoped"
    # The request carries the gateway's injected memory block.
    MEMORY_PERSONALIZED = "memory_personalized"
    # An answer that did not finish normally: cut off (`length`), filtered, empty.
    FINISH_REASON = "finish_reason"
    # The answer lacks what the request asks for (token logprobs, `n` choices).
    REPLAY_INCOMPLETE = "replay_incomplete"
    DUPLICATE = "duplicate"  # same exact key earlier in the file or already cached
    STORE_FAILED = "store_failed"  # the cache store failed (counted and logged)
    # Neither layer could take it (exact cache off, and no ask to match by meaning).
    NOT_STORED = "not_stored"
    # An unexpected failure on this record (logged by type; the import goes on).
    IMPORT_FAILED = "import_failed"


@dataclass(frozen=True, slots=True)
class RecordedPair:
    body: dict[str, Any]  # the chat request as the client sent it
    completion: dict[str, Any]  # the answer, as one chat.completion


class RecordError(GatewayInternalError):
    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.value)
        self.refusal = refusal


def parse_line(line: bytes) -> RecordedPair:
    """The pair recorded on `line`; `RecordError` with the refusal otherwise."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise RecordError(Refusal.INVALID_JSON) from None
    if not isinstance(record, dict):
        raise RecordError(Refusal.INVALID_RECORD)
    if "request" in record:
        return _pair(record, record.get("request"), record.get("response"), record)
    if "body" in record:
        return _batch_pair(record)
    raise RecordError(Refusal.INVALID_RECORD)


def _batch_pair(record: Mapping[str, Any]) -> RecordedPair:
    url = record.get("url")
    if url is not None and url not in CHAT_COMPLETIONS_PATHS:
        raise RecordError(Refusal.UNSUPPORTED_ENDPOINT)
    response = record.get("response")
    if _failed(record):
        raise RecordError(Refusal.ERROR)
    if not isinstance(response, dict):
        raise RecordError(Refusal.INVALID_RECORD)
    return _pair(response, record.get("body"), response.get("body"), record)


def _pair(
    status_holder: Mapping[str, Any], body: Any, response: Any, record: Mapping[str, Any]
) -> RecordedPair:
    if _failed(record) or _failed(status_holder):
        raise RecordError(Refusal.ERROR)
    if not isinstance(body, dict):
        raise RecordError(Refusal.INVALID_RECORD)
    if isinstance(response, dict) and response.get("error") is not None:
        raise RecordError(Refusal.ERROR)
    completion = _completion(response)
    if completion is None:
        raise RecordError(Refusal.INVALID_RESPONSE)
    return RecordedPair(body=body, completion=completion)


def _failed(holder: Mapping[str, Any]) -> bool:
    """A recorded failure: an `error` object (null means none), or an HTTP status of
    400 and above."""
    if holder.get("error") is not None:
        return True
    status = holder.get("status_code", holder.get("status"))
    return isinstance(status, int) and not isinstance(status, bool) and status >= 400


def _completion(response: Any) -> dict[str, Any] | None:
    """A `chat.completion` object; a streamed answer's chunks joined into one (the
    same assembly as a live stream's before it is stored)."""
    if isinstance(response, dict):
        choices = response.get("choices")
        if response.get("object", "chat.completion") != "chat.completion":
            return None
        return response if isinstance(choices, list) else None
    if isinstance(response, list) and response and all(isinstance(c, dict) for c in response):
        if any(chunk.get("error") is not None for chunk in response):
            raise RecordError(Refusal.ERROR)  # a stream that failed in-band
        if any(chunk.get("object", _CHUNK) != _CHUNK for chunk in response):
            return None
        assembler = StreamAssembler()
        for chunk in response:
            assembler.add(chunk)
        return assembler.completion()
    return None
