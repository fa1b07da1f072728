"""Forget is complete (issue 11): a reply in another thread that restated the forgotten item in
the second person goes with it, byte for byte; a forget of an owner that stops halfway answers
503 (never 500), keeps its job, and finishes on the next call or at the next start."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
from test_service_forget_item import _db_bytes, handle

from smartctx.service.client import SmartctxClient
from smartctx.service.server import AsyncServerHandle

# Said as a statement the offline responder acknowledges ("Noted: ..."): a turn answered with
# an abstention is junk that memory never stores, and the fact must be stored to be forgotten.
FACT = "Remember that I keep my spare key under the blue flowerpot."
NEEDLES = (b"blue flowerpot", b"spare key under")
__all__ = ["handle"]  # the fixture: a server on forget.db with personal memory on


def _as(owner: str) -> dict[str, str]:
    """Headers acting as ``owner`` (a caller naming none is a fresh anonymous owner)."""
    return {"X-Smartctx-Owner": owner}


async def test_restatements_in_other_threads_are_forgotten_too(
    handle: AsyncServerHandle, tmp_path: Path
) -> None:
    db_file = tmp_path / "forget.db"
    async with SmartctxClient(handle.url, owner="hana") as hana:
        await hana.send(FACT)
        answer = await hana.send("Where do I keep my spare key?")  # a new thread recalls it
    assert "your spare key under the blue flowerpot" in answer.text.lower()
    async with httpx.AsyncClient(base_url=handle.url, headers=_as("hana")) as http:
        pairs = (await http.get("/memory/owners/hana/pairs")).json()["pairs"]
        [pair_id] = [p["id"] for p in pairs if p["user_text"] == FACT]
        forgotten = await http.delete(f"/memory/owners/hana/items/pair/{pair_id}")
        assert forgotten.status_code == 200, forgotten.text
        assert forgotten.json()["copies"]["service_copies"]["restating_pairs"]
        left = (await http.get("/memory/owners/hana/pairs")).json()["pairs"]
    assert not [p for p in left if "flowerpot" in p["user_text"] + p["assistant_text"]]
    await handle.app.db.checkpoint()
    data = _db_bytes(db_file)
    assert not [needle for needle in NEEDLES if needle in data]


class _FailsOnce:
    name = "flaky_store"

    def __init__(self) -> None:
        self.calls = 0

    async def forget_owner(self, owner: str) -> int:
        self.calls += 1
        if self.calls == 1:
            raise OSError("disk unplugged at /secret/path")
        return 0


async def test_a_forget_that_stops_halfway_resumes(
    handle: AsyncServerHandle, tmp_path: Path
) -> None:
    db_file = tmp_path / "forget.db"
    personal = handle.app.personal
    assert personal is not None
    flaky = _FailsOnce()
    personal.add_forgetter(flaky)
    async with SmartctxClient(handle.url, owner="ines") as ines:
        await ines.send(FACT)
    async with httpx.AsyncClient(base_url=handle.url, headers=_as("ines")) as http:
        first = await http.delete("/memory/owners/ines")
        with sqlite3.connect(db_file) as conn:
            jobs = conn.execute("SELECT owner FROM forget_jobs").fetchall()
        second = await http.delete("/memory/owners/ines")
    assert first.status_code == 503
    assert "flaky_store" in first.json()["message"] and "/secret" not in first.text
    assert jobs == [("ines",)]
    assert second.status_code == 200
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("SELECT COUNT(*) FROM forget_jobs").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM slots WHERE owner = 'ines'").fetchone() == (0,)


async def test_pending_forgets_finish_at_start(handle: AsyncServerHandle) -> None:
    personal = handle.app.personal
    assert personal is not None
    async with SmartctxClient(handle.url, owner="jo") as jo:
        await jo.send(FACT)
    flaky = _FailsOnce()
    personal.add_forgetter(flaky)
    async with httpx.AsyncClient(base_url=handle.url, headers=_as("jo")) as http:
        assert (await http.delete("/memory/owners/jo")).status_code == 503
    assert await personal.resume_forgets() == ["jo"]
    assert await personal.resume_forgets() == []
