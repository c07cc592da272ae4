"""Chat-completion chunks -> the Responses API's stream of events.

One translator for both kinds of stream: a live answer's chunks as the provider sends
them, and a cached answer's chunks (`completions.replay_chunks`), so a replay carries
the same events as the live answer it was stored from (ids and timestamps aside).

Events: `response.created`, `response.in_progress`; per output item
`response.output_item.added`, for a message `response.content_part.added`,
`response.output_text.delta`... (or `response.refusal.delta`...),
`response.output_text.done`, `response.content_part.done`; for a tool call
`response.function_call_arguments.delta`... and `.done`; `response.output_item.done`;
last `response.completed` (or `response.incomplete` when the answer was cut short)
with the whole response. Every event has a `sequence_number`. A failure mid-stream
ends with an `error` event and `response.failed`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from typing import Any

from gateway.api.responses_render import (
    OutputIds,
    ResponseEcho,
    call_item,
    message_item,
    response_object,
    shell,
)
from gateway.completions import StreamAssembler
from gateway.errors import GatewayError

# The finished response (to store) before its final event is sent.
OnComplete = Callable[[dict[str, Any]], Awaitable[None]]


class _Open:
    """The output items opened so far, in the order the client saw them."""

    def __init__(self) -> None:
        self.order: list[str] = []  # item ids by output_index
        self.text: str | None = None  # the message's text part, once opened
        self.refusal: str | None = None
        self.message_added = False
        self.message_done = False
        self.calls: dict[int, dict[str, Any]] = {}  # position -> function_call item
        self.calls_done: set[int] = set()


class ResponseEventStream:
    def __init__(
        self,
        *,
        response_id: str,
        created_at: int,
        echo: ResponseEcho,
        usage: Mapping[str, Any] | None = None,
        served_from_cache: bool = False,
        on_complete: OnComplete | None = None,
    ) -> None:
        """`usage`: what to report instead of the chunks' own usage (a cache hit's
        original counts)."""
        self._id = response_id
        self._created_at = created_at
        self._echo = echo
        self._usage = usage
        self._from_cache = served_from_cache
        self._on_complete = on_complete
        self._ids = OutputIds()
        self._sequence = 0
        self._open = _Open()

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    async def events(self, chunks: AsyncIterable[Mapping[str, Any]]) -> Any:
        """The events for `chunks` (an async generator of event dicts)."""
        start = shell(self._id, self._created_at, self._echo)
        yield self._event("response.created", response=start)
        yield self._event("response.in_progress", response=start)
        assembler = StreamAssembler()
        try:
            async for chunk in chunks:
                assembler.add(chunk)
                for event in self._chunk_events(chunk):
                    yield event
        except GatewayError as exc:
            yield self._event("error", code=exc.code, message=exc.message, param=exc.param)
            failed = {
                **shell(self._id, self._created_at, self._echo, "failed"),
                "error": {"code": exc.code or "server_error", "message": exc.message},
            }
            yield self._event("response.failed", response=failed)
            return
        completion = assembler.completion()
        for event in self._closing_events(completion):
            yield event
        response = response_object(
            completion,
            response_id=self._id,
            created_at=self._created_at,
            echo=self._echo,
            ids=self._ids,
            usage=self._usage if self._usage is not None else completion.get("usage"),
            served_from_cache=self._from_cache,
        )
        # In the order the stream announced them.
        position = {item_id: index for index, item_id in enumerate(self._open.order)}
        response["output"].sort(key=lambda item: position.get(item["id"], len(position)))
        if self._on_complete is not None:
            await self._on_complete(response)
        final = (
            "response.incomplete" if response["status"] == "incomplete" else "response.completed"
        )
        yield self._event(final, response=response)

    # --- per chunk -------------------------------------------------------------------------

    def _chunk_events(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for choice in chunk.get("choices") or []:
            if int(choice.get("index", 0)) != 0:
                continue  # the Responses API has one output per response
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                events += self._text_delta(text)
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                events += self._refusal_delta(refusal)
            for call in delta.get("tool_calls") or []:
                events += self._call_delta(call)
        return events

    def _add_message(self) -> list[dict[str, Any]]:
        state = self._open
        if state.message_added:
            return []
        state.message_added = True
        state.order.append(self._ids.message)
        item = message_item(self._ids.message, [], "in_progress")
        return [
            self._event("response.output_item.added", output_index=len(state.order) - 1, item=item)
        ]

    def _message_index(self) -> int:
        return self._open.order.index(self._ids.message)

    def _text_delta(self, text: str) -> list[dict[str, Any]]:
        events = self._add_message()
        state = self._open
        if state.text is None:
            state.text = ""
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            events.append(self._part_event("response.content_part.added", 0, part))
        state.text += text
        events.append(
            self._event(
                "response.output_text.delta",
                item_id=self._ids.message,
                output_index=self._message_index(),
                content_index=0,
                delta=text,
                logprobs=[],
            )
        )
        return events

    def _refusal_index(self) -> int:
        return 0 if self._open.text is None else 1

    def _refusal_delta(self, refusal: str) -> list[dict[str, Any]]:
        events = self._add_message()
        state = self._open
        if state.refusal is None:
            state.refusal = ""
            part = {"type": "refusal", "refusal": ""}
            events.append(
                self._part_event("response.content_part.added", self._refusal_index(), part)
            )
        state.refusal += refusal
        events.append(
            self._event(
                "response.refusal.delta",
                item_id=self._ids.message,
                output_index=self._message_index(),
                content_index=self._refusal_index(),
                delta=refusal,
            )
        )
        return events

    def _part_event(self, kind: str, content_index: int, part: dict[str, Any]) -> dict[str, Any]:
        return self._event(
            kind,
            item_id=self._ids.message,
            output_index=self._message_index(),
            content_index=content_index,
            part=part,
        )

    def _call_delta(self, call: Mapping[str, Any]) -> list[dict[str, Any]]:
        state = self._open
        position = int(call.get("index", len(state.calls)))
        function = call.get("function") or {}
        events: list[dict[str, Any]] = []
        item = state.calls.get(position)
        if item is None:
            item_id = self._ids.call(position)
            item = call_item(
                item_id, {**call, "function": {**function, "arguments": ""}}, "in_progress"
            )
            state.calls[position] = item
            state.order.append(item_id)
            events.append(
                self._event(
                    "response.output_item.added", output_index=len(state.order) - 1, item=dict(item)
                )
            )
        elif function.get("name"):
            item["name"] += function["name"]
        piece = function.get("arguments")
        if isinstance(piece, str) and piece:
            item["arguments"] += piece
            events.append(
                self._event(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=state.order.index(item["id"]),
                    delta=piece,
                )
            )
        return events

    # --- at the end ------------------------------------------------------------------------

    def _closing_events(self, completion: Mapping[str, Any]) -> list[dict[str, Any]]:
        state = self._open
        events: list[dict[str, Any]] = []
        final_items = {
            item["id"]: item
            for item in response_object(
                completion,
                response_id=self._id,
                created_at=self._created_at,
                echo=self._echo,
                ids=self._ids,
                usage=None,
                served_from_cache=False,
            )["output"]
        }
        if state.message_added:
            item = final_items.get(self._ids.message) or message_item(
                self._ids.message, [], "completed"
            )
            index = self._message_index()
            for content_index, part in enumerate(item["content"]):
                if part["type"] == "output_text":
                    events.append(
                        self._event(
                            "response.output_text.done",
                            item_id=item["id"],
                            output_index=index,
                            content_index=content_index,
                            text=part["text"],
                            logprobs=[],
                        )
                    )
                else:
                    events.append(
                        self._event(
                            "response.refusal.done",
                            item_id=item["id"],
                            output_index=index,
                            content_index=content_index,
                            refusal=part["refusal"],
                        )
                    )
                events.append(self._part_event("response.content_part.done", content_index, part))
            events.append(self._event("response.output_item.done", output_index=index, item=item))
        for position in sorted(state.calls):
            opened = state.calls[position]
            item = final_items.get(opened["id"]) or {**opened, "status": "completed"}
            index = state.order.index(item["id"])
            events.append(
                self._event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    name=item["name"],
                    arguments=item["arguments"],
                )
            )
            events.append(self._event("response.output_item.done", output_index=index, item=item))
        return events
