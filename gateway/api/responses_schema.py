"""Validation of a Responses API request body (`POST /v1/responses`).

As for chat (`schemas.py`), the model checks the types the gateway relies on and lets
unknown fields through; the body as sent is what gets translated. The translated chat
body is validated again as a chat body, with the chat route's limits.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gateway.api.schemas import INT64_MAX, _OpenBody


class ResponsesRequest(_OpenBody):
    model: str = Field(min_length=1, max_length=256)
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    previous_response_id: str | None = Field(default=None, min_length=1, max_length=256)
    store: bool | None = None
    stream: bool | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_output_tokens: int | None = Field(default=None, ge=1, le=INT64_MAX)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    text: dict[str, Any] | None = None
    reasoning: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None
    user: str | None = None
