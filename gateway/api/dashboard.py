"""`GET /dashboard`: the cache dashboard page.

The page is static and holds no data and no secrets, so it is served without auth. All
numbers come from the admin endpoints (`/admin/stats`, `/admin/decisions`), which the page
calls from the browser with the admin key the operator gives it (URL fragment or a password
field); the key never reaches this handler.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Request, Response

router = APIRouter()

PAGE_PACKAGE = "gateway.dashboard"
PAGE_NAME = "index.html"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    )
)
PAGE_HEADERS = {
    "cache-control": "no-store",
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _page(request: Request) -> bytes:
    """The page's bytes, read from the package once per app (kept on `app.state`)."""
    cached: bytes | None = getattr(request.app.state, "dashboard_page", None)
    if cached is None:
        cached = files(PAGE_PACKAGE).joinpath(PAGE_NAME).read_bytes()
        request.app.state.dashboard_page = cached
    return cached


@router.get("/dashboard", include_in_schema=False)
async def dashboard(request: Request) -> Response:
    return Response(_page(request), media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)
