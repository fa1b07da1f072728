"""Persistence of the knowledge base: chunks and their vectors in table ``kb_chunks``.

One row per chunk, keyed by ``(owner, source_id)``, with the document name, heading path, text,
token count, the chunk's passage vectors (one per view, see ``chunking.passage_views``) as raw
float32 bytes of a ``(views, dim)`` array, plus ``dim`` and the embedder that made them, and the
SHA-256 of the whole document's content. Contract:
- every query filters by ``owner``; nothing of one owner is visible to another;
- ``write`` replaces whole documents and deletes removed ones in ONE transaction, so a reader sees
  a document's old chunks or its new ones, never a mix;
- rows come back ordered by (document name, position), never by time;
- vectors are copied in and out (callers may mutate what they pass or receive).
The schema is created by the Alembic branch ``knowledge`` (``await db.migrate()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import JSON, Integer, LargeBinary, String, Text, delete, func, select
from sqlalchemy.orm import Mapped, mapped_column

from smartctx.core.embeddings import Vector
from smartctx.retrieval import kb_version
from smartctx.retrieval.chunking import Chunk
from smartctx.store import Base, Database


class KBChunkRow(Base):
    """ORM row of ``kb_chunks`` (see migration ``0003_knowledge``)."""

    __tablename__ = "kb_chunks"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    doc: Mapped[str] = mapped_column(String(255))
    position: Mapped[int] = mapped_column(Integer)
    heading: Mapped[list[str]] = mapped_column(JSON)
    text: Mapped[str] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    dim: Mapped[int] = mapped_column(Integer)
    embedder: Mapped[str] = mapped_column(String(64))
    content_hash: Mapped[str] = mapped_column(String(64))


@dataclass(frozen=True)
class StoredDocument:
    """A document as persisted: its chunks, their vectors (one ``(views, dim)`` array per chunk)
    and the embedder that made them."""

    name: str
    content_hash: str
    chunks: tuple[Chunk, ...]
    vectors: tuple[Vector, ...] | None
    embedder: str


@dataclass(frozen=True)
class DocumentSummary:
    """Counts for one stored document (computed in SQL)."""

    name: str
    chunks: int
    tokens: int
    content_hash: str


def _to_bytes(vector: Vector) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _from_bytes(blob: bytes, dim: int) -> Vector:
    out: Vector = np.frombuffer(blob, dtype=np.float32).reshape(-1, dim).copy()
    return out


class KBStore:
    """Knowledge-base rows of one database. The constructor does no I/O."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def write(
        self, owner: str, documents: Sequence[StoredDocument], removed: Iterable[str] = ()
    ) -> None:
        """Replace ``documents`` (all their chunks) and delete ``removed`` documents, atomically.

        Each document's ``vectors`` must hold one ``(views, dim)`` array per chunk, or be None
        (then the rows carry no vector and the loader re-embeds them).
        """
        names = {doc.name for doc in documents} | set(removed)
        rows: list[KBChunkRow] = []
        for doc in documents:
            if doc.vectors is not None and (
                len(doc.vectors) != len(doc.chunks) or any(v.ndim != 2 for v in doc.vectors)
            ):
                raise ValueError(
                    f"{doc.name}: need one (views, dim) array per chunk for {len(doc.chunks)} "
                    f"chunks, got {len(doc.vectors)}"
                )
            for row, chunk in enumerate(doc.chunks):
                vector = doc.vectors[row] if doc.vectors is not None else None
                rows.append(
                    KBChunkRow(
                        owner=owner,
                        source_id=chunk.source_id,
                        doc=doc.name,
                        position=chunk.index,
                        heading=list(chunk.heading),
                        text=chunk.text,
                        tokens=chunk.tokens,
                        vector=_to_bytes(vector) if vector is not None else None,
                        dim=int(vector.shape[1]) if vector is not None else 0,
                        embedder=doc.embedder,
                        content_hash=doc.content_hash,
                    )
                )
        async with self.db.session() as session:
            if names:
                await session.execute(
                    delete(KBChunkRow).where(
                        KBChunkRow.owner == owner, KBChunkRow.doc.in_(sorted(names))
                    )
                )
            session.add_all(rows)
            await kb_version.renew(session, owner)

    async def read(self, owner: str) -> list[StoredDocument]:
        """Every stored document of ``owner``, by name, chunks in position order."""
        async with self.db.session() as session:
            result = await session.execute(
                select(KBChunkRow)
                .where(KBChunkRow.owner == owner)
                .order_by(KBChunkRow.doc, KBChunkRow.position)
            )
            rows = list(result.scalars())
        grouped: dict[str, list[KBChunkRow]] = {}
        for row in rows:
            grouped.setdefault(row.doc, []).append(row)
        return [_document(name, group) for name, group in grouped.items()]

    async def summaries(self, owner: str) -> list[DocumentSummary]:
        """Chunk and token counts per stored document of ``owner``, by name."""
        async with self.db.session() as session:
            result = await session.execute(
                select(
                    KBChunkRow.doc,
                    func.count(),
                    func.sum(KBChunkRow.tokens),
                    func.min(KBChunkRow.content_hash),
                )
                .where(KBChunkRow.owner == owner)
                .group_by(KBChunkRow.doc)
                .order_by(KBChunkRow.doc)
            )
            return [
                DocumentSummary(name, int(count), int(tokens or 0), str(digest))
                for name, count, tokens, digest in result.all()
            ]

    async def delete_owner(self, owner: str) -> int:
        """Delete every chunk and vector of ``owner``; returns the number of rows deleted."""
        async with self.db.session() as session:
            counted = await session.execute(
                select(func.count()).select_from(KBChunkRow).where(KBChunkRow.owner == owner)
            )
            count = int(counted.scalar_one())
            await session.execute(delete(KBChunkRow).where(KBChunkRow.owner == owner))
            await kb_version.drop(session, owner)
        return count


def _document(name: str, rows: list[KBChunkRow]) -> StoredDocument:
    chunks = tuple(
        Chunk(doc=name, index=r.position, heading=tuple(r.heading), text=r.text, tokens=r.tokens)
        for r in rows
    )
    dims = {r.dim for r in rows}
    complete = all(r.vector is not None for r in rows) and len(dims) == 1 and 0 not in dims
    vectors: tuple[Vector, ...] | None = None
    if complete:
        vectors = tuple(_from_bytes(r.vector or b"", r.dim) for r in rows)
    return StoredDocument(
        name=name,
        content_hash=rows[0].content_hash,
        chunks=chunks,
        vectors=vectors,
        embedder=rows[0].embedder,
    )


async def delete_owner(db: Database, owner: str) -> int:
    """Privacy forget: delete every knowledge-base row of ``owner``; returns rows deleted."""
    return await KBStore(db).delete_owner(owner)
