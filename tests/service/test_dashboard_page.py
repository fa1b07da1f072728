"""The ``/ui`` page as served: one self-contained HTML document with the dashboard's parts."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from fastapi import FastAPI

from smartctx.core import HashingEmbedder, Settings
from smartctx.service.app import create_app
from smartctx.service.dashboard import DASHBOARD_PATH, dashboard_html, dashboard_router


def _app(tmp_path: Path) -> FastAPI:
    """The real service app, which mounts the dashboard (no lifespan: ``/ui`` needs no database)."""
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'ui.db'}")
    return create_app(settings, embedder=HashingEmbedder(), providers=[], hooks=[]).asgi


async def _get(app: FastAPI, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        return await http.get(path)


async def test_the_page_has_the_picker_gauge_slot_table_and_timeline(tmp_path: Path) -> None:
    response = await _get(_app(tmp_path), DASHBOARD_PATH)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    for element in (
        'id="apikey"',
        'id="owner"',
        'id="context"',
        'id="gauge"',
        'id="gauge-text"',
        'id="slots"',
    ):
        assert element in page
    assert '<ul id="timeline">' in page
    headers = re.findall(r"<th>([^<]+)</th>", page)
    assert headers[:10] == [
        "#",
        "kind",
        "priority",
        "source",
        "tokens",
        "state",
        "pinned",
        "repeat",
        "provenance",
        "text",
    ]
    for endpoint in ("/memory/contexts", "/snapshot", "/events", "X-Smartctx-Owner", "Bearer"):
        assert endpoint in page
    for view in ("window", "prompt", "profile", "pairs", "audit"):
        assert f'id="view-{view}"' in page and f'data-view="{view}"' in page
    # One helper makes every request, so headers (credentials) are added in one place.
    assert page.count("fetch(") == 1


async def test_the_page_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    response = await _get(_app(tmp_path), DASHBOARD_PATH)
    page = response.text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    # the one link is the page's icon, inline (a data URL: no request for /favicon.ico)
    assert page.count("<link") == 1 and '<link rel="icon" href="data:,">' in page
    assert "<script src" not in page
    assert "@import" not in page and "url(" not in page
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
    assert response.headers["cache-control"] == "no-cache"


async def test_the_dashboard_route_is_described_once_in_the_openapi_schema(tmp_path: Path) -> None:
    app = _app(tmp_path)
    schema = (await _get(app, "/openapi.json")).json()
    assert list(schema["paths"]).count(DASHBOARD_PATH) == 1
    assert schema["paths"][DASHBOARD_PATH]["get"]["summary"] == "Live memory dashboard"


async def test_the_router_serves_the_page_on_a_bare_app() -> None:
    app = FastAPI()
    app.include_router(dashboard_router())
    response = await _get(app, DASHBOARD_PATH)
    assert response.status_code == 200
    assert response.text == dashboard_html()
    assert (await _get(app, DASHBOARD_PATH + "/nothing")).status_code == 404
