"""Knowledge-base persistence: kb_chunks rows, owner isolation, vectors reused, forget."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from smartctx.core.embeddings import HashingEmbedder, Vector
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_store import KBStore, StoredDocument, delete_owner
from smartctx.store import Database

PRINTERS = "# Printers\n\n## Toner\n\nSpare toner cartridges are in cupboard ZX-81 on floor 3.\n"

WIFI = "# Wi-Fi\n\n## Guests\n\nGuests join the network ExampleGuest with the code on the badge.\n"


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting passages; ``name`` tells stored vectors apart."""

    def __init__(self, name: str = "counting") -> None:
        super().__init__(dim=64)
        self.name = name
        self.passages = 0

    def embed(self, texts: Sequence[str]) -> Vector:
        self.passages += len(texts)
        return super().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return super().embed(texts)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}")
    await database.migrate()
    yield database
    await database.close()


async def test_migration_creates_kb_chunks_on_the_knowledge_branch(db: Database) -> None:
    async with db.session() as s:
        tables = (await s.execute(text("SELECT name FROM sqlite_master"))).scalars().all()
        versions = (await s.execute(text("SELECT version_num FROM alembic_version"))).scalars()
        assert {"kb_chunks", "kb_versions"} <= set(tables)
        assert "0010_i10kbtoken" in set(versions)  # the knowledge branch's head
    await db.migrate()  # idempotent


async def test_saved_documents_load_with_their_vectors(db: Database) -> None:
    writer = KnowledgeBase(embedder=CountingEmbedder(), db=db, owner="acme")
    writer.add_text("printers.md", PRINTERS)
    writer.add_text("wifi.md", WIFI)
    assert await writer.save() == 2
    assert await writer.save() == 0
    assert [d.origin for d in writer.documents()] == ["stored", "stored"]

    embedder = CountingEmbedder()
    reader = await KnowledgeBase.open(db, builtin=False, embedder=embedder, owner="acme")
    assert [(d.name, d.origin, d.chunks) for d in reader.documents()] == [
        ("printers.md", "stored", 1),
        ("wifi.md", "stored", 1),
    ]
    assert reader.search("toner cartridges")[0].source_id == "kb:printers.md#1"
    assert embedder.passages == 0  # stored vectors were reused

    summaries = await KBStore(db).summaries("acme")
    assert [(s.name, s.chunks) for s in summaries] == [("printers.md", 1), ("wifi.md", 1)]


async def test_vectors_of_another_embedder_are_recomputed(db: Database) -> None:
    writer = KnowledgeBase(embedder=CountingEmbedder("old-model"), db=db)
    writer.add_text("printers.md", PRINTERS)
    await writer.save()
    embedder = CountingEmbedder("new-model")
    reader = await KnowledgeBase.open(db, builtin=False, embedder=embedder)
    assert reader.search("toner")[0].source_id == "kb:printers.md#1"
    assert embedder.passages == 1


async def test_owners_are_isolated(db: Database) -> None:
    acme = KnowledgeBase(embedder=HashingEmbedder(), db=db, owner="acme")
    acme.add_text("printers.md", PRINTERS)
    await acme.save()
    other = await KnowledgeBase.open(db, builtin=False, embedder=HashingEmbedder(), owner="globex")
    assert other.documents() == []
    assert other.search("toner") == []
    assert await KBStore(db).summaries("globex") == []


async def test_changed_and_removed_documents_replace_rows(db: Database) -> None:
    kb = KnowledgeBase(embedder=HashingEmbedder(), db=db)
    kb.add_text("printers.md", PRINTERS)
    kb.add_text("wifi.md", WIFI)
    await kb.save()
    kb.add_text("printers.md", PRINTERS + "\n## Paper\n\nPaper reams are next to the toner.\n")
    kb.remove("wifi.md")
    assert await kb.save() == 2
    summaries = await KBStore(db).summaries("default")
    assert [(s.name, s.chunks) for s in summaries] == [("printers.md", 2)]
    fresh = await KnowledgeBase.open(db, builtin=False, embedder=HashingEmbedder())
    assert fresh.chunk("kb:printers.md#2").text == "Paper reams are next to the toner."


async def test_builtin_corpus_is_never_written_and_stored_docs_shadow_it(db: Database) -> None:
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder(), db=db)
    assert await kb.save() == 0
    kb.add_text("vpn.md", "# VPN\n\n## Our own VPN\n\nUse the ZX-81 tunnel appliance.\n")
    await kb.save()
    reopened = await KnowledgeBase.open(db, embedder=HashingEmbedder())
    origins = {d.name: d.origin for d in reopened.documents()}
    assert origins["vpn.md"] == "stored"
    assert origins["leave.md"] == "builtin"
    assert reopened.chunk("kb:vpn.md#1").text == "Use the ZX-81 tunnel appliance."


async def test_pending_changes_win_over_load(db: Database) -> None:
    kb = KnowledgeBase(embedder=HashingEmbedder(), db=db)
    kb.add_text("printers.md", PRINTERS)
    await kb.save()
    kb.add_text("printers.md", WIFI)
    await kb.load()
    assert "ExampleGuest" in kb.chunk("kb:printers.md#1").text


async def test_forget_deletes_every_copy_from_the_database_file(
    db: Database, tmp_path: Path
) -> None:
    acme = KnowledgeBase(embedder=HashingEmbedder(), db=db, owner="acme")
    acme.add_text("printers.md", PRINTERS)
    await acme.save()
    keep = KnowledgeBase(embedder=HashingEmbedder(), db=db, owner="globex")
    keep.add_text("wifi.md", WIFI)
    await keep.save()
    await db.checkpoint()
    assert b"ZX-81" in (tmp_path / "kb.db").read_bytes()

    assert await acme.forget() == 1
    assert acme.documents() == []
    assert await delete_owner(db, "acme") == 0
    await db.checkpoint()
    assert b"ZX-81" not in (tmp_path / "kb.db").read_bytes()
    assert [s.name for s in await KBStore(db).summaries("globex")] == ["wifi.md"]


async def test_store_rejects_mismatched_vectors(db: Database) -> None:
    kb = KnowledgeBase(embedder=HashingEmbedder())
    chunks = tuple(kb.add_text("printers.md", PRINTERS))
    bad = StoredDocument("printers.md", "h", chunks, np.zeros((2, 4), np.float32), "x")
    with pytest.raises(ValueError):
        await KBStore(db).write("default", [bad])


async def test_removing_a_shipped_document_hides_it_and_saves_once(db: Database) -> None:
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder(), db=db)
    kb.remove("leave.md")
    assert await kb.save() == 1
    assert await kb.save() == 0
    assert "leave.md" not in {d.name for d in kb.documents()}
    assert all(h.doc != "leave.md" for h in kb.search("annual leave days", k=20))
    kb.add_text("leave.md", "# Leave\n\n## Annual leave\n\nThirty annual leave days.\n")
    assert kb.search("annual leave days")[0].text == "Thirty annual leave days."


async def test_long_chunks_store_and_reuse_all_their_views(db: Database) -> None:
    sentence = " ".join(["the traveller books a train seat early"] * 8)
    long_text = "# Policy\n\n## Travel\n\n" + "\n\n".join(
        f"Rule {i} about marker{i}: {sentence}" for i in range(6)
    )
    writer = KnowledgeBase(embedder=CountingEmbedder(), db=db)
    (chunk,) = writer.add_text("policy.md", long_text)
    await writer.save()
    assert isinstance(writer.embedder, CountingEmbedder)
    assert writer.embedder.passages > 1  # the whole chunk plus its paragraph views

    (stored,) = await KBStore(db).read("default")
    assert stored.vectors is not None
    assert stored.vectors[0].shape == (writer.embedder.passages, 64)

    embedder = CountingEmbedder()
    reader = await KnowledgeBase.open(db, builtin=False, embedder=embedder)
    hits = reader.search("marker3")
    assert [h.source_id for h in hits] == [chunk.source_id]
    assert embedder.passages == 0


async def test_owners_stored_before_tokens_get_one_and_a_base_without_one_reads_nothing(
    db: Database,
) -> None:
    from sqlalchemy import event

    from smartctx.retrieval.kb_version import KBWatcher, current

    writer = KnowledgeBase(embedder=CountingEmbedder(), db=db, owner="legacy")
    writer.add_text("printers.md", PRINTERS)
    await writer.save()
    # as stored before revision 0006 wrote tokens: chunks without a token, 0010 not applied
    async with db.session() as s:
        await s.execute(text("DELETE FROM kb_versions WHERE owner = 'legacy'"))
        await s.execute(
            text(
                "UPDATE alembic_version SET version_num = '0006_i12api' "
                "WHERE version_num = '0010_i10kbtoken'"
            )
        )
    assert await current(db, "legacy") == ""
    await db.migrate()
    assert await current(db, "legacy") != ""  # backfilled: the base below loads it
    reader = KBWatcher(KnowledgeBase(embedder=CountingEmbedder(), db=db, owner="legacy"))
    assert await reader.refresh() and reader.kb.documents()
    seen: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    nobody = KBWatcher(KnowledgeBase(embedder=CountingEmbedder(), db=db, owner="nobody"))
    await nobody.refresh()
    assert len(seen) == 1 and "kb_versions" in seen[0]  # the token only: no chunk is read
    writer = KnowledgeBase(embedder=CountingEmbedder(), db=db, owner="nobody")
    writer.add_text("wifi.md", WIFI)
    await writer.save()
    assert await nobody.refresh() and nobody.kb.documents()  # stored since: loaded
