"""A fake OpenAI-compatible provider: a real HTTP server for tests and benchmarks.

It answers `/v1/chat/completions` (JSON or SSE) and `/v1/embeddings`. Behaviour is
steered by markers in the last user message, so it works the same in-process and in
another process:

    [[status:500]]   answer with that HTTP status and an OpenAI error body
    [[sleep:1.5]]    wait that many seconds first
    [[retry_after:1]]  send `retry-after: 1` with the answer (with [[status:429]]: a
                     provider asking to be retried after that many seconds)
    [[length]]       finish_reason "length" (a truncated answer)
    [[tool]]         answer with a tool call to the first tool of the request; once the
                     request ends with that tool's result (a `tool` message), a text
                     answer that quotes the result (an agent's second turn)
    [[abort]]        stream: send two chunks, then drop the connection
    [[badsse]]       stream: send two chunks, then a line `data: {not json` and end
    [[badsse:garbage]]   the same with bytes that are neither SSE nor UTF-8
    [[badsse:truncate]]  the same with lines an SSE parser skips: the stream just ends,
                     without finish_reason or [DONE] (a truncated answer)
    [[badsse:error]]     the same with an in-band `data: {"error": ...}` event
    [[slowstream:0.2]]  stream: wait that many seconds before every chunk after the first
    [[nosse]]        stream: answer 200 with an HTML page instead of events (a proxy's page)
    [[nosse:empty]]  stream: answer 200 with an empty event stream
    [[nosse:json]]   stream: answer with the plain JSON completion, as if `stream` was unset
    [[refusal]]      refuse: `refusal` set and `content` null (JSON), `delta.refusal` (stream)
    [[cite]]         the message carries a `url_citation` annotation over its first word
                     (JSON: `message.annotations`; stream: `delta.annotations`)

A request with `response_format` of type `json_schema` gets a JSON object that fits the
schema's properties (strings carry the answer's sequence number), as a structured-output
model answers.

A request with `logprobs: true` gets token logprobs like OpenAI's (one token per word,
`top_logprobs` alternatives each): `choice.logprobs.content` (or `.refusal`) in JSON,
each chunk's `choice.logprobs` in a stream.

`/v1/embeddings` reads its own markers in the input texts (chat ignores them):

    [[embed_status:500]]  answer with that HTTP status and an OpenAI error body
    [[embed_sleep:2]]     wait that many seconds first

A model named `fake-meaning` answers by meaning, deterministically and without a
sequence number (`MEANING_TABLE`): paraphrases of one question get the same answer, a
near miss (another product, another device) a different one; anything else gets
"Answer: <text>". It stands in for a temperature-0 model.

A model named `fake-judge-yes` / `fake-judge-no` answers just "Yes" / "No" (a stand-in
for a small reviewer model); `fake-judge-slow` waits 3 seconds before answering "Yes",
and `fake-judge-error` answers with HTTP 500.

Every answer carries a sequence number, so a served cache entry is told apart from a
fresh upstream answer, and the headers a provider sends with it (on errors too): its
request id `x-request-id: req_fake<number>`, `x-ratelimit-limit-requests` /
`x-ratelimit-remaining-requests`, and one internal header (`x-fake-upstream-host`) that
a gateway has no reason to pass on.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

_MARKER = re.compile(r"\[\[(\w+)(?::([^\]]*))?\]\]")


@dataclass
class UpstreamLog:
    """What the fake received; tests read it to count upstream calls."""

    chat_bodies: list[dict[str, Any]] = field(default_factory=list)
    embedding_bodies: list[dict[str, Any]] = field(default_factory=list)


# (words that must all appear, lower-cased; the answer), first match wins: the near
# misses come before the question they are near.
MEANING_TABLE: tuple[tuple[tuple[str, ...], str], ...] = (
    (("duck",), "A duck egg needs about twelve minutes."),
    (("fry", "egg"), "Fry the egg for three minutes over medium heat."),
    (("boil", "egg"), "Boil the egg for nine minutes, then cool it in cold water."),
    (("paper", "boat"), "Fold a paper hat, then pull its sides out into a boat."),
    (("paper",), "Fold the sheet lengthwise, the corners to the centre, then the wings down."),
)


def meaning_answer(text: str) -> str:
    lowered = text.lower()
    for words, answer in MEANING_TABLE:
        if all(word in lowered for word in words):
            return answer
    return f"Answer: {text}"


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _markers(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) or "" for m in _MARKER.finditer(text)}


def _json(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(content), status_code=status, media_type="application/json", headers=headers
    )


def _completion(
    completion_id: str, body: dict[str, Any], choice: dict[str, Any], usage: dict[str, Any]
) -> dict[str, Any]:
    """A non-streamed `chat.completion` object holding one choice."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [choice],
        "usage": usage,
    }


def _provider_headers(number: int, markers: dict[str, str]) -> dict[str, str]:
    """What a provider sends with every answer: request id, rate-limit state, and
    `retry-after` when the request's markers ask for it."""
    headers = {
        "x-request-id": f"req_fake{number}",
        "x-ratelimit-limit-requests": "1000",
        "x-ratelimit-remaining-requests": "999",
        "x-fake-upstream-host": "upstream-7",
    }
    if "retry_after" in markers:
        headers["retry-after"] = markers["retry_after"]
    return headers


def create_fake_upstream(log: UpstreamLog | None = None) -> Starlette:
    received = log if log is not None else UpstreamLog()
    sequence = itertools.count(1)

    async def chat(request: Request) -> Response:
        body = orjson.loads(await request.body())
        received.chat_bodies.append(body)
        number = next(sequence)
        text = _last_user_text(body)
        markers = _markers(text)
        headers = _provider_headers(number, markers)
        if "sleep" in markers:
            await asyncio.sleep(float(markers["sleep"]))
        if "status" in markers:
            status = int(markers["status"])
            error = {"message": f"fake upstream error {status}", "type": "server_error"}
            return _json({"error": error}, status, headers)
        finish_reason = "length" if "length" in markers else "stop"
        content: str | None = f"Answer #{number}: {text}"
        model = str(body.get("model", ""))
        if model == "fake-judge-slow":
            await asyncio.sleep(3)
        if model == "fake-judge-error":
            error = {"message": "fake judge error", "type": "server_error"}
            return _json({"error": error}, 500, headers)
        if model == "fake-meaning":
            content = meaning_answer(text)
        elif model == "fake-judge-reads-answer":
            # Says yes only when it was shown the stored answer (the review prompt that
            # asks whether that answer fits the new request).
            content = "Yes" if "<earlier_answer>" in text else "No"
        elif model.startswith("fake-judge-"):
            content = "No" if model.endswith("no") else "Yes"
        tool_calls = None
        messages = body.get("messages") or []
        tool_result = (
            messages[-1].get("content") if messages and messages[-1].get("role") == "tool" else None
        )
        schema = _json_schema(body)
        if schema is not None:
            content = orjson.dumps(_fits(schema, f"Answer #{number}")).decode()
        if "tool" in markers and tool_result is not None:
            content = f"Answer #{number}: the tool said {tool_result}"
        elif "tool" in markers and body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            tool_calls = [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {"name": name, "arguments": '{"city": "Paris"}'},
                }
            ]
            content, finish_reason = None, "tool_calls"
        refusal: str | None = None
        if "refusal" in markers and tool_calls is None:
            content, refusal = None, f"I can't help with that (#{number})."
        completion_id = f"chatcmpl-fake{number}"
        # With the detail fields OpenAI reports (a hit must keep them).
        usage = {
            "prompt_tokens": 10,
            "completion_tokens": 7,
            "total_tokens": 17,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 2, "audio_tokens": 0},
        }
        answer = _Answer(content, refusal, tool_calls, finish_reason, "cite" in markers)
        if body.get("stream") and "nosse" in markers:
            return _no_sse(markers["nosse"], body, completion_id, content, finish_reason, usage)
        if body.get("stream"):
            return StreamingResponse(
                _stream(body, completion_id, answer, usage, markers),
                media_type="text/event-stream",
                headers=headers,
            )
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if answer.cite and content:
            message["annotations"] = [_citation(content)]
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish_reason}
        choice["logprobs"] = _logprobs(body, content, refusal) if body.get("logprobs") else None
        return _json(_completion(completion_id, body, choice, usage), headers=headers)

    async def embeddings(request: Request) -> Response:
        body = orjson.loads(await request.body())
        received.embedding_bodies.append(body)
        inputs = body.get("input")
        items = inputs if isinstance(inputs, list) else [inputs]
        markers = _markers(" ".join(str(item) for item in items))
        if "embed_sleep" in markers:
            await asyncio.sleep(float(markers["embed_sleep"]))
        if "embed_status" in markers:
            status = int(markers["embed_status"])
            error = {"message": f"fake upstream error {status}", "type": "server_error"}
            return _json({"error": error}, status)
        data = [
            {"object": "embedding", "index": i, "embedding": _pseudo_vector(str(item))}
            for i, item in enumerate(items)
        ]
        usage = {"prompt_tokens": len(items), "total_tokens": len(items)}
        return _json({"object": "list", "data": data, "model": body.get("model"), "usage": usage})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
        ]
    )


def _no_sse(
    variant: str,
    body: dict[str, Any],
    completion_id: str,
    content: str | None,
    finish_reason: str,
    usage: dict[str, Any],
) -> Response:
    """A 200 answer to a stream request that holds no SSE event at all."""
    if variant == "empty":
        return Response(b"", media_type="text/event-stream")
    if variant == "json":  # an upstream that ignores `stream`
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": finish_reason}
        return _json(_completion(completion_id, body, choice, usage))
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    return Response(page, media_type="text/html")


# What `[[badsse:<variant>]]` sends after two good chunks, before it ends the response.
_BAD_SSE = {
    "": b"data: {not json\n\n",
    # Bytes that are neither SSE nor UTF-8.
    "garbage": b"\x00\xff\xfe\x9c<html>502 Bad Gateway</html>\r\n\x80\x81\n\n",
    # Lines an SSE parser skips: the stream just ends, without finish_reason or [DONE].
    "truncate": b"<html>502 Bad Gateway</html>\r\n: a comment\n\n",
    # An in-band error event, as OpenAI sends when it fails mid-stream.
    "error": b'data: {"error": {"message": "fake overload", "type": "server_error"}}\n\n',
}


@dataclass(frozen=True)
class _Answer:
    content: str | None
    refusal: str | None
    tool_calls: list[dict[str, Any]] | None
    finish_reason: str
    cite: bool  # a url_citation annotation over the first word


def _words(text: str) -> list[str]:
    """The text cut into tokens the way the stream sends them: words, each but the
    first with its leading space."""
    return [word if i == 0 else " " + word for i, word in enumerate(text.split(" "))]


def _token_logprobs(tokens: list[str], top: int, start: int = 0) -> list[dict[str, Any]]:
    """OpenAI's `ChatCompletionTokenLogprob` entries for `tokens` (the answer's from
    position `start` on), made up but the same in JSON and in a stream."""
    entries = []
    for position, token in enumerate(tokens, start):
        logprob = -round(0.01 * (position % 7 + 1), 4)
        alternatives = [
            {"token": token, "logprob": logprob, "bytes": list(token.encode())},
            *(
                {"token": f"{token}~{k}", "logprob": logprob - k, "bytes": None}
                for k in range(1, top)
            ),
        ][:top]
        entries.append(
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": alternatives,
            }
        )
    return entries


def _logprobs(body: dict[str, Any], content: str | None, refusal: str | None) -> dict[str, Any]:
    top = int(body.get("top_logprobs") or 0)
    return {
        "content": _token_logprobs(_words(content), top) if content else None,
        "refusal": _token_logprobs(_words(refusal), top) if refusal else None,
    }


def _citation(content: str) -> dict[str, Any]:
    first = content.split(" ", 1)[0]
    return {
        "type": "url_citation",
        "url_citation": {
            "start_index": 0,
            "end_index": len(first),
            "title": "Fake source",
            "url": "https://example.com/source",
        },
    }


def _json_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else {}
    return None


def _fits(schema: dict[str, Any], text: str) -> Any:
    """A value of `schema`'s type: objects get every property."""
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {name: _fits(sub, text) for name, sub in properties.items()}
    if kind == "array":
        return [_fits(schema.get("items") or {}, text)]
    return {"integer": 1, "number": 1.5, "boolean": True, "null": None}.get(str(kind), text)


def _pseudo_vector(text: str, dimensions: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [round(b / 255.0, 6) for b in digest[:dimensions]]


async def _stream(
    body: dict[str, Any],
    completion_id: str,
    answer: _Answer,
    usage: dict[str, Any],
    markers: dict[str, str],
) -> AsyncIterator[bytes]:
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
    }
    top = int(body.get("top_logprobs") or 0)
    with_logprobs = bool(body.get("logprobs"))

    def event(
        delta: dict[str, Any], finish: str | None = None, logprobs: dict[str, Any] | None = None
    ) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        return b"data: " + orjson.dumps({**base, "choices": [choice]}) + b"\n\n"

    delay = float(markers["slowstream"]) if "slowstream" in markers else 0.0

    async def paced(chunk: bytes) -> bytes:
        if delay:
            await asyncio.sleep(delay)
        return chunk

    yield event({"role": "assistant", "content": ""})
    content = answer.content
    if content:
        for position, word in enumerate(_words(content)):
            logprobs = (
                {"content": _token_logprobs([word], top, position), "refusal": None}
                if with_logprobs
                else None
            )
            yield await paced(event({"content": word}, logprobs=logprobs))
            if "abort" in markers and position == 1:
                raise ConnectionAbortedError("fake upstream drops the stream")
            if "badsse" in markers and position == 1:
                yield _BAD_SSE.get(markers["badsse"], _BAD_SSE[""])
                return
        if answer.cite:
            yield await paced(event({"annotations": [_citation(content)]}))
    if answer.refusal:
        for position, word in enumerate(_words(answer.refusal)):
            logprobs = (
                {"content": None, "refusal": _token_logprobs([word], top, position)}
                if with_logprobs
                else None
            )
            yield await paced(event({"refusal": word}, logprobs=logprobs))
    for position, call in enumerate(answer.tool_calls or []):
        yield await paced(event({"tool_calls": [{"index": position, **call}]}))
    yield await paced(event({}, answer.finish_reason))
    if (body.get("stream_options") or {}).get("include_usage"):
        yield b"data: " + orjson.dumps({**base, "choices": [], "usage": usage}) + b"\n\n"
    yield b"data: [DONE]\n\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="fake OpenAI-compatible upstream")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(
        create_fake_upstream(),
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
