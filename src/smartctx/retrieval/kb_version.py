"""A per-owner change token of the knowledge base, so a running server sees ``kb add``.

Every write of an owner's knowledge-base rows (``KBStore.write``) renews the owner's token in
table ``kb_versions`` in the same transaction; ``delete_owner`` deletes it (a forgotten owner
leaves no row). A reader remembers the token it loaded with and reloads when the stored one
differs: one primary-key lookup per check, nothing proportional to the documents. Tokens are
random, so "differs" is the only comparison (a forget followed by a write never repeats an old
token). The table comes from migration ``0006_i12api``; ``0010_i10kbtoken`` gave a token to every
owner stored before it, so an owner without a token has nothing stored.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import String, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from smartctx.store import Base, Database
from smartctx.store.turn_probes import OWNER_PARAM, Probe


class KBVersionRow(Base):
    """The current change token of one owner's knowledge base."""

    __tablename__ = "kb_versions"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    token: Mapped[str] = mapped_column(String(32))


async def renew(session: AsyncSession, owner: str) -> str:
    """Give ``owner`` a new token inside the caller's transaction; returns it."""
    token = uuid.uuid4().hex
    result = await session.execute(
        update(KBVersionRow).where(KBVersionRow.owner == owner).values(token=token)
    )
    if not getattr(result, "rowcount", 0):
        session.add(KBVersionRow(owner=owner, token=token))
    return token


async def drop(session: AsyncSession, owner: str) -> None:
    """Delete ``owner``'s token inside the caller's transaction."""
    await session.execute(delete(KBVersionRow).where(KBVersionRow.owner == owner))


_TOKENS = select(KBVersionRow.owner, KBVersionRow.token).where(
    KBVersionRow.owner.in_(bindparam("owners", expanding=True))
)


TOKENS_PROBE = "kb_tokens"


def tokens_probe(org_owner: str) -> Probe:
    """The tokens of ``org_owner`` and of the turn's owner as a turn probe
    (:mod:`smartctx.store.turn_probes`): its answer is ``(org token, owner token)``, ``""``
    for one never written."""

    def token_of(param: Any) -> Any:
        return select(KBVersionRow.token).where(KBVersionRow.owner == param).scalar_subquery()

    return Probe(
        TOKENS_PROBE,
        (token_of(bindparam("kb_org")), token_of(bindparam(OWNER_PARAM))),
        lambda values: tuple(str(v or "") for v in values),
        {"kb_org": org_owner},
    )


async def current(db: Database, owner: str) -> str:
    """The owner's stored token (``""`` when the owner never wrote)."""
    return (await current_of(db, [owner]))[owner]


async def current_of(db: Database, owners: Sequence[str]) -> dict[str, str]:
    """The stored tokens of ``owners`` in one read (``""`` for an owner who never wrote)."""
    async with db.read_core() as session:
        found = await session.execute(_TOKENS, {"owners": list(owners)})
        tokens = {str(owner): str(token) for owner, token in found}
    return {owner: tokens.get(owner, "") for owner in owners}


class KBWatcher:
    """Keeps a loaded :class:`~smartctx.retrieval.kb.KnowledgeBase` in step with the store.

    ``await refresh()`` costs one primary-key lookup when nothing changed; when the owner's
    token differs from the one last loaded, it reloads the stored documents (their vectors come
    with them) and re-indexes in a worker thread. Concurrent refreshes wait for one another. A
    knowledge base without a database never changes underneath and is left alone. Writers of
    the same instance (``add_text`` + ``save``) hold ``lock`` so they never overlap a reload.
    """

    def __init__(self, kb: Any) -> None:
        self.kb = kb
        self.token: str | None = None
        self.lock = asyncio.Lock()

    async def refresh(self, token: str | None = None) -> bool:
        """Reload when the stored token moved; returns whether it reloaded. ``token``: the
        stored token, when the caller has just read it (:func:`current_of`)."""
        db = self.kb.db
        if db is None:
            return False
        async with self.lock:
            if token is None:
                token = await current(db, self.kb.owner)
            if token == self.token:
                return False
            if token or self.token is not None:
                # read after the token: a later write shows up next time. No token means
                # nothing stored (every write renews it; migration 0010 gave one to each owner
                # stored before tokens), so a base never loaded has nothing to read then.
                await self.kb.load()
            await asyncio.to_thread(self.kb.prepare)
            self.token = token
            return True


__all__ = [
    "TOKENS_PROBE",
    "KBVersionRow",
    "KBWatcher",
    "current",
    "current_of",
    "drop",
    "renew",
    "tokens_probe",
]
