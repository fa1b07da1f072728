"""The live memory dashboard at ``/ui``: one self-contained HTML page over the memory API.

The page (``static/dashboard.html``, shipped as package data) has no build step and loads
nothing from the network: its CSS and JavaScript are inline, and a Content-Security-Policy
header keeps every request on the serving origin. In the browser it

- lists the owner's contexts (``GET /memory/contexts``) in a picker,
- draws a token gauge (tokens used / budget, one bar segment per slot kind),
- shows the active slots (kind, priority, source, tokens, state, pinned, repeat count,
  provenance, text) from ``GET /memory/contexts/{id}/snapshot``,
- follows ``GET /memory/contexts/{id}/events`` (server-sent events) to add memory events to a
  timeline as they happen, re-reading the snapshot after each change and reconnecting with
  back-off when the stream ends;
- expands a slot's row to its full text, provenance and metadata on click;
- shows the prompt the model received at the last turn (``GET .../last-prompt``): the messages,
  the slots sent and the recalled ones, with a gauge that counts both;
- shows the owner's profile, pairs and audit (``/memory/owners/{owner}/...``) with accept, mark
  wrong and forget actions.

Every request of the page goes through one function (``request``) that adds the headers, so
credentials can be added in one place.

The stream is read with ``fetch`` rather than ``EventSource`` because the memory API scopes
every request by the ``X-Smartctx-Owner`` header, which ``EventSource`` cannot send.
"""

from __future__ import annotations

import functools
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

DASHBOARD_PATH = "/ui"

# Inline script and style are the page; everything it fetches is on the serving origin.
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


@functools.cache
def dashboard_html() -> str:
    """The dashboard page (read from package data once per process)."""
    page = resources.files("smartctx.service").joinpath("static/dashboard.html")
    return page.read_text(encoding="utf-8")


def dashboard_router() -> APIRouter:
    """A router serving the dashboard at ``GET /ui`` and redirecting browsers from ``GET /``
    (no I/O until the first request).

    Mount it before the A2A SDK's REST routes, which end with a catch-all ``/{tenant}`` mount.
    """
    router = APIRouter(tags=["smartctx: dashboard"])

    @router.get(DASHBOARD_PATH, response_class=HTMLResponse, summary="Live memory dashboard")
    async def dashboard() -> HTMLResponse:
        """Open ``http://127.0.0.1:8000/ui`` in a browser while ``smartctx serve`` runs."""
        return HTMLResponse(
            dashboard_html(),
            headers={
                "Cache-Control": "no-cache",
                "Content-Security-Policy": _CSP,
                "X-Content-Type-Options": "nosniff",
            },
        )

    @router.get("/", include_in_schema=False)
    async def root(request: Request) -> Response:
        """A browser opening the server's root URL goes to the dashboard; JSON-RPC stays POST."""
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse(DASHBOARD_PATH, status_code=307)
        body = {
            "error": "method_not_allowed",
            "message": f"POST A2A JSON-RPC requests to /; the dashboard is at {DASHBOARD_PATH}",
            "detail": {},
        }
        return JSONResponse(body, status_code=405, headers={"Allow": "POST"})

    return router
