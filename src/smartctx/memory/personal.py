"""``PersonalMemory``: the personal-memory API, one transaction per call.

It ties the tiers together over one :class:`~smartctx.store.Database`: storing turns (with
profile extraction), compaction, promotion, revert, retention, sync and forget. Every method
takes the ``owner`` first and never returns another owner's rows. The constructor does no I/O;
the schema comes from ``await db.migrate()``. Time comes from the injected ``Clock``; the
chat-model summariser is an optional async ``summarize(texts) -> str`` (else extractive).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.clock import Clock, SystemClock
from smartctx.core.errors import InvalidInput, NotFound, Unavailable
from smartctx.core.settings import Settings
from smartctx.memory import forget, forget_jobs, pairs, promotion, retention, revert
from smartctx.memory import sync as sync_mod
from smartctx.memory.compaction import CompactionReport, Compactor
from smartctx.memory.forget import Forgetter, ItemForgetter
from smartctx.memory.pairs import PairIn
from smartctx.memory.read_cache import StampedReads, note_turn_stamp, turn_stamp
from smartctx.memory.repository import (
    NEVER_WRITTEN,
    STAMP_PROBE,
    audit_view,
    bump,
    bump_stamp,
    current_stamp,
    current_version,
    cursor_str,
    pair_view,
    profile_view,
    summary_view,
    version_str,
)
from smartctx.memory.summarizer import ExtractiveSummarizer, ModelSummarizer, SummarizeFn
from smartctx.memory.tables import (
    AuditRow,
    DailySummaryRow,
    PairRow,
    ProfileItemRow,
    SessionSummaryRow,
    WeeklyDigestRow,
)
from smartctx.memory.vault import SecretVault
from smartctx.store import turn_probes
from smartctx.store.db import Database

logger = logging.getLogger(__name__)
_OWNER = re.compile(r"^[^\x00-\x1f]{1,128}$")


def check_owner(owner: str) -> str:
    """``owner`` when it is 1-128 printable characters, else ``InvalidInput``."""
    if not isinstance(owner, str) or not _OWNER.match(owner):
        raise InvalidInput("an owner is 1-128 printable characters", owner=str(owner)[:40])
    return owner


class PersonalMemory:
    """Personal memory of many owners in one database (see the package docs for the tiers)."""

    def __init__(
        self,
        db: Database,
        *,
        clock: Clock | None = None,
        settings: Settings | None = None,
        summarize: SummarizeFn | None = None,
        forgetters: Sequence[Forgetter] = (),
        item_forgetters: Sequence[ItemForgetter] = (),
    ) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.settings = settings or Settings()
        summarizer = ModelSummarizer(summarize) if summarize else ExtractiveSummarizer()
        self.compactor = Compactor(summarizer)
        self.retention = retention.Retention.from_settings(self.settings)
        self.vault = SecretVault.from_settings(self.settings)
        self.forgetters: list[Forgetter] = list(forgetters)
        self.item_forgetters: list[ItemForgetter] = list(item_forgetters)
        self.reads = StampedReads()
        """What :meth:`everything` read, per owner state (see :mod:`smartctx.memory.read_cache`)."""

    def add_forgetter(self, forgetter: Forgetter, *, first: bool = False) -> None:
        """Register another store to empty on ``forget_owner`` (window log, KB, A2A tasks);
        with ``first`` it runs before those already registered (a store's own forgetter then
        reports its rows before a generic table sweep finds them gone)."""
        if first:
            self.forgetters.insert(0, forgetter)
        else:
            self.forgetters.append(forgetter)

    def add_item_forgetter(self, forgetter: ItemForgetter) -> None:
        """Register another store to clean on ``forget_item`` (window slots, long-term memory,
        A2A tasks); a forgetter with an already registered ``name`` is ignored."""
        if all(f.name != forgetter.name for f in self.item_forgetters):
            self.item_forgetters.append(forgetter)

    # -- pairs ---------------------------------------------------------------------------------

    async def add_pair(self, owner: str, pair: PairIn) -> dict[str, Any]:
        """Store one turn (idempotent by ``pair.id``) and extract its profile evidence.

        Returns ``stored`` (False for a duplicate), the pair, the profile items it touched
        (``profile_candidates``) and the owner's new cursor and version.
        """
        check_owner(owner)
        try:
            # a new pair (the usual case) is written without reading first: the pair's primary
            # key refuses a duplicate, and then the write is made again knowing it
            return await self._add_pair(owner, pair, known=set())
        except IntegrityError:  # a pair id stored before, or the same one written concurrently
            return await self._add_pair(owner, pair, known=None)

    async def _add_pair(
        self, owner: str, pair: PairIn, *, known: set[str] | None
    ) -> dict[str, Any]:
        """Store ``pair``; ``known``: the owner's pair ids among it, when the caller knows them
        (None: read them)."""
        now = self.clock.now()
        epoch: str | None = None  # the owner's new epoch when this is their first write
        async with self.db.session() as s:
            if known is None:
                known = await pairs.existing_ids(s, owner, [pair.id])
            if pair.id in known:
                seq = await current_version(s, owner)
                result = pairs.StoreResult(duplicates=[pair.id])
                row = await s.get(PairRow, (owner, pair.id))
            else:
                seq, epoch = await bump_stamp(s, owner)
                result = await pairs.store_pairs(
                    s, owner, [pair], now=now, seq=seq, vault=self.vault, known=known
                )
                row = result.rows[0] if result.rows else None
            view = pair_view(row) if row else None
            out = {
                "stored": bool(result.stored),
                "pair": view,
                "profile_candidates": [candidate_view(i) for i in result.items],
                "cursor": cursor_str(seq),
                "version": version_str(seq),
            }
        if result.stored and view is not None:  # committed: what this process keeps moves on
            self.reads.added_pair(
                owner, seq - 1, seq, view, profile_changed=bool(result.items), epoch=epoch
            )
        return out

    async def delete_pair(self, owner: str, pair_id: str) -> dict[str, Any]:
        """Delete a pair and recompute/revert everything that rested on it (audited)."""
        check_owner(owner)
        async with self.db.session() as s:
            detail = await revert.revert_pair(
                s, owner, pair_id, compactor=self.compactor, now=self.clock.now()
            )
        self.reads.drop(owner)
        return detail

    async def pairs(
        self, owner: str, *, session_id: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """The owner's most recent pairs (oldest first), optionally of one session."""
        check_owner(owner)
        async with self.db.read() as s:
            return await _pairs(s, owner, session_id, limit)

    # -- summaries and profile -----------------------------------------------------------------

    async def summaries(self, owner: str) -> dict[str, list[dict[str, Any]]]:
        """Session summaries, daily summaries and weekly digests, each oldest first."""
        check_owner(owner)
        async with self.db.read() as s:
            return await _summaries(s, owner)

    async def profile(self, owner: str, *, status: str | None = None) -> list[dict[str, Any]]:
        """Profile items with status, confidence and provenance, most confident first."""
        check_owner(owner)
        if status is not None and status not in promotion.STATUSES:
            raise InvalidInput(f"status must be one of {list(promotion.STATUSES)}")
        async with self.db.read() as s:
            return await _profile(s, owner, status)

    async def confirmed_profile(self, owner: str) -> list[dict[str, Any]]:
        """``profile(owner, status="confirmed")``, taken from what :meth:`everything` kept for
        the owner's current state when it kept something (a served turn's memory snapshot was
        read just before): then one read of the stamp, or none inside a turn block whose
        :meth:`everything` read it (:func:`smartctx.memory.read_cache.turn_reads`). The list is
        shared: do not change it."""
        check_owner(owner)
        stamp = turn_stamp(owner)  # read by everything() earlier in this turn (read_cache)
        if stamp is None:
            async with self.db.read_core() as c:
                stamp = await current_stamp(c, owner)
        kept = self.reads.any_at(owner, stamp)
        if kept is not None:
            return list(kept["profile"])
        return await self.profile(owner, status="confirmed")

    async def everything(
        self, owner: str, *, session_id: str | None = None, pair_limit: int = 50
    ) -> dict[str, Any]:
        """What :meth:`pairs`, :meth:`summaries`, confirmed :meth:`profile` items and
        :meth:`sync_state` return, read in one session (a served turn's memory snapshot):
        ``{"pairs", "summaries", "profile", "sync"}``.

        Kept per owner state (:mod:`smartctx.memory.read_cache`): while nothing was written
        since, this is one read of the owner's stamp. The lists are shared: do not change them.
        """
        check_owner(owner)
        key = (session_id, pair_limit)
        stamp = turn_probes.take(self.db, STAMP_PROBE.kind, owner)  # read with the turn's start
        if stamp is turn_probes.MISSING:
            async with self.db.read_core() as c:
                stamp = await current_stamp(c, owner)
        note_turn_stamp(owner, stamp)
        stored = self.reads.get(owner, key, stamp)
        if stored is None and stamp == NEVER_WRITTEN:
            # Every write bumps the owner's stamp first (``repository.bump``): an owner never
            # written has no row in any tier, so a new owner's first turn reads none of them.
            stored = {"pairs": [], "summaries": _no_summaries(), "profile": []}
            self.reads.put(owner, key, stamp, stored)  # kept, so a stored pair moves it on
        if stored is None:
            async with self.db.read() as s:
                stored = {
                    "pairs": await _pairs(s, owner, session_id, pair_limit),
                    "summaries": await _summaries(s, owner),
                    "profile": await _profile(s, owner, "confirmed"),
                }
                if await current_stamp(s, owner) == stamp:  # no write landed in between
                    self.reads.put(owner, key, stamp, stored)
        n = stamp[0]
        return {**stored, "sync": {"cursor": cursor_str(n), "version": version_str(n)}}

    async def accept(
        self,
        owner: str,
        *,
        item_id: str | None = None,
        key: str | None = None,
        value: str | None = None,
    ) -> dict[str, Any]:
        """Explicit acceptance of an item (by id, or by key and value): it confirms it."""
        check_owner(owner)
        now = self.clock.now()
        async with self.db.session() as s:
            if item_id is not None:
                item = await s.get(ProfileItemRow, (owner, item_id))
                if item is None:
                    raise NotFound(f"owner {owner!r} has no profile item {item_id!r}")
                key, value = item.key, item.value
            if not key or not value:
                raise InvalidInput("accept needs an item id, or a key and a value")
            seq = await bump(s, owner)
            items = await pairs.respond_to_suggestion(
                s, owner, "", True, now=now, seq=seq, key=key, value=value
            )
            return profile_view(items[0])

    async def respond_to_suggestion(
        self, owner: str, suggestion: str, accepted: bool
    ) -> list[dict[str, Any]]:
        """The user's answer to a proactive suggestion ("안방 청정을 시작할까요?" -> yes)."""
        check_owner(owner)
        now = self.clock.now()
        async with self.db.session() as s:
            seq = await bump(s, owner)
            items = await pairs.respond_to_suggestion(
                s, owner, suggestion, accepted, now=now, seq=seq
            )
            return [profile_view(i) for i in items]

    async def mark_wrong(self, owner: str, item_id: str) -> dict[str, Any]:
        """Reject a profile item and retire its evidence (audited); returns the item."""
        check_owner(owner)
        async with self.db.session() as s:
            await revert.mark_wrong(s, owner, item_id, now=self.clock.now())
            item = await s.get(ProfileItemRow, (owner, item_id))
            if item is None:
                raise NotFound(f"owner {owner!r} has no profile item {item_id!r}")
            return profile_view(item)

    async def audit_log(self, owner: str, *, limit: int = 100) -> list[dict[str, Any]]:
        """The owner's audit records, newest first."""
        check_owner(owner)
        async with self.db.session() as s:
            rows = await s.scalars(
                select(AuditRow).where(AuditRow.owner == owner).order_by(AuditRow.id.desc())
                .limit(limit)
            )  # fmt: skip
            return [audit_view(r) for r in rows]

    # -- worker jobs ---------------------------------------------------------------------------

    async def owners(self) -> list[str]:
        """Every owner with personal memory."""
        async with self.db.session() as s:
            return await retention.owners(s)

    async def compact(
        self, owner: str | None = None, *, force: bool = False
    ) -> list[CompactionReport]:
        """Roll the tiers of ``owner`` (every owner when None); one transaction per owner."""
        targets = [check_owner(owner)] if owner is not None else await self.owners()
        reports = []
        for who in targets:
            async with self.db.session() as s:
                reports.append(
                    await self.compactor.compact(s, who, now=self.clock.now(), force=force)
                )
        return reports

    async def enforce_retention(self, owner: str | None = None) -> dict[str, dict[str, Any]]:
        """Delete rows past their tier's retention period; counts per owner."""
        targets = [check_owner(owner)] if owner is not None else await self.owners()
        out = {}
        for who in targets:
            async with self.db.session() as s:
                out[who] = await retention.enforce(s, who, self.retention, now=self.clock.now())
        return out

    # -- sync ----------------------------------------------------------------------------------

    async def sync_state(self, owner: str) -> dict[str, str]:
        """The owner's current cursor and version."""
        check_owner(owner)
        async with self.db.read() as s:
            n = await current_version(s, owner)
        return {"cursor": cursor_str(n), "version": version_str(n)}

    async def sync(
        self,
        owner: str,
        *,
        cursor: str | None = None,
        version: str | None = None,
        pairs: Sequence[PairIn] = (),
    ) -> dict[str, Any]:
        """A device's sync call (see :mod:`smartctx.memory.sync`); ``Conflict`` when stale."""
        check_owner(owner)
        try:
            return await self._sync(owner, cursor, version, pairs)
        except IntegrityError:  # the same pair ids written concurrently: now they are duplicates
            return await self._sync(owner, cursor, version, pairs)

    async def _sync(
        self, owner: str, cursor: str | None, version: str | None, pairs: Sequence[PairIn]
    ) -> dict[str, Any]:
        async with self.db.session() as s:
            return await sync_mod.sync(
                s,
                owner,
                cursor=cursor,
                version=version,
                pairs=pairs,
                now=self.clock.now(),
                vault=self.vault,
            )

    # -- forget --------------------------------------------------------------------------------

    async def forget_owner(self, owner: str, *, checkpoint: bool = True) -> dict[str, Any]:
        """Delete every copy of ``owner``'s data: memory tables, then each registered forgetter.

        A forget job is recorded in the transaction that empties the memory tables and cleared
        once every forgetter succeeded (:mod:`smartctx.memory.forget_jobs`): when one fails,
        the others still run, the job stays for :meth:`resume_forgets`, and ``Unavailable``
        names the stores still holding data (the same call again finishes the job). With
        ``checkpoint`` the SQLite WAL is flushed and the file vacuumed, so no deleted byte
        survives in the database files.
        """
        check_owner(owner)
        async with self.db.session() as s:
            counts: dict[str, Any] = await forget.forget_owner(s, owner)
            await forget_jobs.begin(s, owner, self.clock.now())
        self.reads.drop(owner)  # no forgotten text stays in this process either
        failed: list[str] = []
        for forgetter in self.forgetters:
            try:
                counts[forgetter.name] = await forgetter.forget_owner(owner)
            except Exception:
                logger.exception("forgetting owner in %s failed", forgetter.name)
                failed.append(forgetter.name)
        if failed:
            raise Unavailable(
                f"the forget did not finish: {', '.join(failed)} still hold data of the owner; "
                "send the same request again to finish it (it also resumes at the next start)",
                pending=failed,
            )
        async with self.db.session() as s:
            await forget_jobs.finish(s, owner)
        if checkpoint:
            await self.db.checkpoint()
        return counts

    async def resume_forgets(self) -> list[str]:
        """Finish every forget that began and did not end (run at start-up); returns the owners
        finished. A job that fails again stays for the next time."""
        async with self.db.session() as s:
            owners = await forget_jobs.pending(s)
        done: list[str] = []
        for owner in owners:
            try:
                await self.forget_owner(owner, checkpoint=False)
            except Unavailable:
                continue
            done.append(owner)
        if done:
            await self.db.checkpoint()
        return done

    async def forget_item(
        self, owner: str, kind: str, item_id: str, *, checkpoint: bool = False
    ) -> dict[str, Any]:
        """Delete one pair, profile item or summary and every copy of it.

        The memory tiers are cleaned in one transaction; then every registered item forgetter
        deletes its copies (window slots, long-term memory, A2A tasks), its counts reported
        under its name in ``copies``. With ``checkpoint`` the SQLite file is vacuumed after.
        """
        check_owner(owner)
        async with self.db.session() as s:
            described = await forget.describe_item(s, owner, kind, item_id)
            detail = await forget.forget_item(
                s, owner, kind, item_id, compactor=self.compactor, now=self.clock.now()
            )
        self.reads.drop(owner)
        if described is not None and self.item_forgetters:
            copies: dict[str, Any] = {}
            for forgetter in self.item_forgetters:
                copies[forgetter.name] = await forgetter.forget_item(described)
            detail = {**detail, "copies": copies}
        if checkpoint:
            await self.db.checkpoint()
        return detail


def candidate_view(item: ProfileItemRow) -> dict[str, Any]:
    """A profile candidate as it travels in ``write_candidates.profile_candidates``."""
    return {
        "candidate_id": item.id,
        "key": item.key,
        "value": item.value,
        "status": item.status,
        "confidence": item.confidence,
        "evidence_days": list(item.evidence_days),
    }


async def _pairs(
    s: AsyncSession, owner: str, session_id: str | None, limit: int
) -> list[dict[str, Any]]:
    query = select(PairRow).where(PairRow.owner == owner)
    if session_id is not None:
        query = query.where(PairRow.session_id == session_id)
    query = query.order_by(PairRow.seq.desc(), PairRow.created_at.desc()).limit(limit)
    rows = list(await s.scalars(query))
    return [pair_view(r) for r in reversed(rows)]


async def _summaries(s: AsyncSession, owner: str) -> dict[str, list[dict[str, Any]]]:
    return {
        "session": await _views(s, SessionSummaryRow, owner, SessionSummaryRow.day),
        "daily": await _views(s, DailySummaryRow, owner, DailySummaryRow.day),
        "weekly": await _views(s, WeeklyDigestRow, owner, WeeklyDigestRow.week),
    }


async def _profile(s: AsyncSession, owner: str, status: str | None) -> list[dict[str, Any]]:
    query = select(ProfileItemRow).where(ProfileItemRow.owner == owner)
    if status is not None:
        query = query.where(ProfileItemRow.status == status)
    order = (ProfileItemRow.confidence.desc(), ProfileItemRow.key, ProfileItemRow.value)
    query = query.order_by(*order)
    return [profile_view(r) for r in await s.scalars(query)]


def _no_summaries() -> dict[str, list[dict[str, Any]]]:
    """What :func:`_summaries` gives for an owner with none."""
    return {"session": [], "daily": [], "weekly": []}


async def _views(s: AsyncSession, table: Any, owner: str, order: Any) -> list[dict[str, Any]]:
    rows = await s.scalars(select(table).where(table.owner == owner).order_by(order, table.seq))
    return [summary_view(r) for r in rows]
