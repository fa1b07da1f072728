"""The knowledge base on a running server: ``smartctx kb add`` and the HTTP ingest are retrieved
by the next turn, without a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from smartctx.cli import app
from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
PRINTERS = "# Printers\n\n## Toner\n\nSpare toner cartridges are in cupboard ZX-81 on floor 3.\n"
QUESTION = "Where are the spare toner cartridges?"


@pytest.fixture
def live(start_server: StartServer, db_url: str, monkeypatch: pytest.MonkeyPatch) -> ServerHandle:
    """A server whose knowledge base lives in its database (the CLI writes the same one)."""
    monkeypatch.setenv("SMARTCTX_DATABASE_URL", db_url)
    monkeypatch.setenv("SMARTCTX_RETRIEVAL_EMBEDDER", "hashing")
    return start_server(kb=None)


async def _sources(server: ServerHandle, owner: str = "default") -> list[str]:
    async with SmartctxClient(server.url, owner=owner) as client:
        reply = await client.send(QUESTION)
    # what the turn retrieved (its knowledge leaves the window when the turn ends)
    return [
        str(e["source_id"])
        for e in reply.events
        if e["kind"] == "admitted" and e["slot_kind"] == "rag_doc"
    ]


async def test_kb_add_is_retrieved_by_a_running_server(live: ServerHandle, tmp_path: Path) -> None:
    assert not any(s.startswith("kb:printers.md") for s in await _sources(live))
    doc = tmp_path / "printers.md"
    doc.write_text(PRINTERS)
    added = await asyncio.to_thread(CliRunner().invoke, app, ["kb", "add", str(doc)])
    assert added.exit_code == 0, added.output
    assert "kb:printers.md#1" in await _sources(live)


async def test_http_ingest_then_search_and_turn(live: ServerHandle) -> None:
    headers = {"X-Smartctx-Owner": "default"}
    async with httpx.AsyncClient(base_url=live.url, headers=headers) as http:
        ingested = await http.post("/kb/documents", json={"name": "printers.md", "text": PRINTERS})
        assert ingested.status_code == 201, ingested.text
        assert ingested.json() == {"name": "printers.md", "status": "added", "chunks": 1}
        found = await http.get("/kb/search", params={"query": "toner cartridges"})
        docs = await http.get("/kb/documents")
        bad = await http.post("/kb/documents", json={"name": "../x.md", "text": "hello"})
    assert found.json()["results"][0]["source_id"] == "kb:printers.md#1"
    assert {"printers.md", "vpn.md"} <= {d["name"] for d in docs.json()["documents"]}
    assert bad.status_code == 400
    assert "kb:printers.md#1" in await _sources(live)


async def test_ingest_is_scoped_to_the_owner(live: ServerHandle) -> None:
    headers = {"X-Smartctx-Owner": "acme"}
    async with httpx.AsyncClient(base_url=live.url, headers=headers) as http:
        await http.post("/kb/documents", json={"name": "printers.md", "text": PRINTERS})
        mine = await http.get("/kb/search", params={"query": "toner cartridges"})
    async with httpx.AsyncClient(base_url=live.url) as http:
        theirs = await http.get("/kb/search", params={"query": "toner cartridges"})
    assert mine.json()["results"][0]["source_id"] == "kb:printers.md#1"
    assert all(not h["source_id"].startswith("kb:printers") for h in theirs.json()["results"])
