"""Forgetting one item deletes every copy the service keeps: a secret sent over A2A (real HTTP),
stored as a pair, forgotten through the HTTP API, leaves no byte in the SQLite file or its WAL,
while another message of the same owner survives and the conversation goes on."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from smartctx.core import HashingEmbedder, Settings
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.service.client import SmartctxClient
from smartctx.service.forget_copies import TextMatcher
from smartctx.service.owner import OWNER_HEADER as OWNER
from smartctx.service.server import AsyncServerHandle, serve_async

SECRET = "kumquat-7731-zebra"
KEEP = "I prefer the window seat on long train rides."


@pytest.fixture
async def handle(tmp_path: Path, hashing_kb: KnowledgeBase) -> AsyncIterator[AsyncServerHandle]:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'forget.db'}")
    server = await serve_async(
        settings, host="127.0.0.1", port=0, embedder=HashingEmbedder(), kb=hashing_kb
    )
    try:
        yield server
    finally:
        await server.stop()


def _db_bytes(path: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()
    )


async def test_forgetting_a_pair_removes_every_copy(
    handle: AsyncServerHandle, tmp_path: Path
) -> None:
    db_file = tmp_path / "forget.db"
    async with SmartctxClient(handle.url, owner="hana") as hana:
        first = await hana.send(f"My locker code is {SECRET}.")
        cid = first.context_id
        await hana.send(KEEP, context_id=cid)
        elsewhere = await hana.send("What is my locker code?")  # recalls it from memory
    assert SECRET in first.text and SECRET in elsewhere.text
    await handle.app.db.checkpoint()
    assert SECRET.encode() in _db_bytes(db_file)

    async with httpx.AsyncClient(base_url=handle.url, headers={OWNER: "hana"}) as http:
        pairs = (await http.get("/memory/owners/hana/pairs")).json()["pairs"]
        ids = [p["id"] for p in pairs if SECRET in p["user_text"] + p["assistant_text"]]
        assert len(ids) == 2  # the statement, and the other context's answer
        totals: Counter[str] = Counter()
        gone: set[str] = set()
        for pair_id in ids:
            if pair_id in gone:  # forgotten already: it restated the first one
                continue
            answer = await http.delete(f"/memory/owners/hana/items/pair/{pair_id}")
            assert answer.status_code == 200, answer.text
            copies = dict(answer.json()["copies"]["service_copies"])
            gone.update(copies.pop("restating_pairs"))
            totals.update(copies)
        assert gone == set(ids[1:])  # the other context's answer restated the secret
        # both windows' user/agent/tool-log slots, the memory item, both turns' tasks
        assert totals["window_slots"] >= 4 and totals["contexts"] >= 2, totals
        assert totals["memory_items"] >= 1 and totals["a2a_tasks"] >= 2, totals
        left = (await http.get("/memory/owners/hana/pairs")).json()["pairs"]
    assert [p["user_text"] for p in left] == [KEEP]
    await handle.app.db.checkpoint()

    data = _db_bytes(db_file)
    assert SECRET.encode() not in data
    assert KEEP.encode() in data
    assert not handle.app.registry.is_live("hana", cid)
    async with SmartctxClient(handle.url, owner="hana") as hana:
        snapshot = await hana.snapshot(cid)
        texts = [s["text"] for s in snapshot["slots"]]
        assert KEEP in texts and not any(SECRET in t for t in texts)
        again = await hana.send("What is my locker code?", context_id=cid)
        fresh = await hana.send("What is my locker code?")
    assert again.state == "completed" and SECRET not in again.text
    assert SECRET not in fresh.text


def test_short_texts_match_whole_texts_only() -> None:
    matcher = TextMatcher(["yes", "My locker code is kumquat-7731-zebra."])
    assert matcher.holds("yes") and matcher.holds("  yes ")
    assert not matcher.holds("yes, the VPN works")
    assert matcher.holds("kb.search('My locker code is kumquat-7731-zebra.')")
    assert matcher.part_of("My locker code is kumquat-7731-zebra")
    assert not matcher.part_of("locker")
    assert matcher.holds_json('{"text": "yes"}')
    assert not matcher.holds_json('{"text": "yes please"}')
    assert matcher.holds_json('"My locker code is kumquat-7731-zebra."')
