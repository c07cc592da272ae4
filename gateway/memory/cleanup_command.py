"""`gateway memory cleanup`: asks a running gateway to apply its memory retention
policies now (`POST /admin/memories/cleanup`). Through the gateway rather than the
store, so the embedded backend's database stays one process's and every replica of a
Redis deployment sees the same result."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

ADMIN_KEY_ENV = "GATEWAY_ADMIN_KEY"
_TIMEOUT_SECONDS = 600.0


def run_cleanup(url: str, tenant: str | None, user: str | None) -> int:
    """Prints the gateway's answer; 0 when it ran, 1 when it did not, 2 on bad usage."""
    if user is not None and tenant is None:
        print("gateway memory cleanup: --user needs --tenant", file=sys.stderr)
        return 2
    body = {name: value for name, value in (("tenant", tenant), ("user", user)) if value}
    request = urllib.request.Request(  # noqa: S310 (the operator's own gateway URL)
        url.rstrip("/") + "/admin/memories/cleanup",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json"},
    )
    admin_key = os.environ.get(ADMIN_KEY_ENV)
    if admin_key:
        request.add_header("authorization", f"Bearer {admin_key}")
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS) as response:  # noqa: S310
            print(response.read().decode())
            return 0
    except urllib.error.HTTPError as exc:
        print(f"gateway memory cleanup: {exc.code} {exc.read().decode()}", file=sys.stderr)
    except (urllib.error.URLError, OSError) as exc:
        print(f"gateway memory cleanup: cannot reach {url} ({exc})", file=sys.stderr)
    return 1
