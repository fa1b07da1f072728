"""Limits that keep one server's memory bounded (issue 11): least recently used context windows
leave memory (not the store), and ``json_depth`` counts nesting outside strings only."""

from __future__ import annotations

from typing import Any

import httpx

from smartctx.service.limits import json_depth


async def test_least_recently_used_contexts_leave_memory_not_the_store(
    start_server: Any,
) -> None:
    handle = start_server(max_live_contexts=3)
    registry = handle.app.registry
    # Named owner: a header-less caller would get a fresh anonymous owner per request.
    headers = {"X-Smartctx-Owner": "default"}
    async with httpx.AsyncClient(base_url=handle.url, headers=headers) as http:
        for i in range(6):
            created = await http.post("/memory/contexts", json={"context_id": f"lru-{i}"})
            assert created.status_code == 201
        assert registry.live_count == 3
        assert [registry.is_live("default", f"lru-{i}") for i in range(6)] == [
            False, False, False, True, True, True
        ]  # fmt: skip
        snapshot = await http.get("/memory/contexts/lru-0/snapshot")  # reloaded from the store
        assert snapshot.status_code == 200
    assert registry.live_count == 3
    assert registry.is_live("default", "lru-0") and not registry.is_live("default", "lru-3")


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth(b"") == 0
    assert json_depth(b'{"a": [1, {"b": 2}]}') == 3
    assert json_depth(b'{"text": "[[[[[[{{{{ \\" [[[["}') == 1
    assert json_depth(b"[" * 1000) == 1000
