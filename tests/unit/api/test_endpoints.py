"""The served-endpoint list and the `/v1` alias, read from an app's routes."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from gateway.api.endpoints import api_endpoints, not_found_message
from gateway.api.v1_alias import aliased_roots


def _app() -> FastAPI:
    app = FastAPI()
    api = APIRouter()
    api.add_api_route("/v1/things/{thing_id:path}", lambda: None, methods=["GET"])
    api.add_api_route("/v1/answers", lambda: None, methods=["POST"])
    other = APIRouter()
    other.add_api_route("/healthz", lambda: None, methods=["GET"])
    app.include_router(api)
    app.include_router(other)
    return app


def test_endpoints_come_from_included_routers() -> None:
    assert api_endpoints(_app().routes) == ["GET /v1/things/{thing_id}", "POST /v1/answers"]


def test_alias_covers_v1_roots_and_openai_roots_not_served_only() -> None:
    roots = aliased_roots(_app().routes)
    assert {"things", "answers", "files", "audio"} <= roots
    assert "healthz" not in roots


def test_not_served_openai_route_and_unknown_path_messages() -> None:
    message, code = not_found_message("POST", "/v1/files", _app().routes)
    assert code == "unsupported_endpoint" and "POST /v1/answers" in message
    message, code = not_found_message("GET", "/elsewhere", _app().routes)
    assert code == "not_found" and "GET /elsewhere" in message
