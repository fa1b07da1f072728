"""The memory-context extension over real A2A: card, message metadata in, reply metadata out."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from smartctx.agents.models import ScriptedModel
from smartctx.core import HashingEmbedder, Settings
from smartctx.memory import EXTENSION_URI
from smartctx.service.client import SmartctxClient, smartctx_info
from smartctx.service.server import serve_async
from smartctx.store import Database

MARKER = "zq-marker-5521"


async def test_snapshot_in_message_metadata_update_in_reply_metadata(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'a2a.db'}", kb_top_k=0)
    replies = ScriptedModel(["안방 청정을 시작할게요.", "네", "네"])
    handle = await serve_async(
        settings, host="127.0.0.1", port=0, model=replies, providers=[], embedder=HashingEmbedder()
    )
    try:
        async with SmartctxClient(handle.url, owner="alice") as client:
            card = await client.card()
            assert EXTENSION_URI in [e.uri for e in card.capabilities.extensions]
            voice = {
                "voice_context": {
                    "session_id": "sess-1",
                    "pair_id": "turn-1",
                    "memory_snapshot": {
                        "long_term": {
                            "profile_items": [{"key": "preferred_room", "value": "거실"}]
                        },
                        "sync": {"cursor": "cur-0", "version": "v0"},
                    },
                }
            }
            reply = await client.send("안방으로 가서 청정해줘", metadata={EXTENSION_URI: voice})
            update = reply.metadata[EXTENSION_URI]
            assert update["contract_version"] == "a2a-memory-context-v1"
            pair = update["write_candidates"]["short_term_pair"]
            assert pair["assistant_text"] == "안방 청정을 시작할게요."
            assert pair["pair_id"] == "turn-1"
            assert [c["value"] for c in update["write_candidates"]["profile_candidates"]] == [
                "안방"
            ]
            assert smartctx_info(reply.metadata)["context_id"] == reply.context_id
            await client.send(f"remember {MARKER} for me", context_id=reply.context_id)
        memory = handle.app.personal
        assert next(p["id"] for p in await memory.pairs("alice")) == "turn-1"
        assert await memory.pairs("bob") == []
        assert await _tasks_of(memory.db, "alice") >= 2
        await memory.db.checkpoint()
        assert MARKER.encode() in _db_bytes(tmp_path / "a2a.db")  # pairs, window, tasks
        deleted = await memory.forget_owner("alice")
        assert deleted["mem_pairs"] == 2 and deleted["context_windows_and_tasks"] >= 1, deleted
        assert MARKER.encode() not in _db_bytes(tmp_path / "a2a.db")
        assert await _tasks_of(memory.db, "alice") == 0
    finally:
        await handle.stop()


def _db_bytes(path: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()
    )


async def _tasks_of(db: Database, owner: str) -> int:
    async with db.session() as s:
        count = await s.scalar(
            sa.text("SELECT count(*) FROM a2a_tasks WHERE owner = :owner"), {"owner": owner}
        )
    return int(count or 0)
