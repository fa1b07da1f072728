"""Exactly-once turns for retried messages, and tasks left behind by a crash.

``DeliveryLog`` records, per owner, which A2A task a ``messageId`` started (table
``a2a_deliveries``). The request handler claims the message id *before* the turn runs, in its
own committed transaction, so a client that retries a message whose answer it never received
gets the first task back (with the same reply) instead of a second turn, even after a crash.
A retry of a message whose task failed (for example one interrupted by a crash, see below)
runs again. Two retries that arrive at once in one process are serialised by a lock per
(owner, messageId). Across replicas only a retry that arrives after the first claim is answered
with the first task; two deliveries of one message that reach two replicas at the same moment
both run, and the later claim is the one kept.

A plain send's task is stored only when it ends (see :mod:`smartctx.service.executor`), so
a crash during one leaves the message claimed and no task: its retry runs again. So does a
retry that reaches another replica while the first delivery's turn is still running (before,
it got the first task back, unfinished).
``fail_interrupted_tasks`` marks the A2A tasks a crash left ``SUBMITTED`` or ``WORKING`` (a
stream's, a ``returnImmediately`` send's) as ``FAILED`` at start-up, with a message saying to
send the message again. On SQLite (one process owns the file) that is every unfinished task; on
a shared database only those not updated for ``stale_after`` seconds, so that another replica's
running turns are left alone.

Cost: one insert per new message (:meth:`DeliveryLog.claim_new`: the handler takes the new
task's id ahead, :mod:`smartctx.service.fresh_tasks`); a message delivered before adds a
primary-key read, and an upsert when it runs again. A message that names its task (``taskId``)
takes the read and the upsert.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from smartctx.core.clock import Clock, SystemClock
from smartctx.store.db import Database

_metadata = sa.MetaData()
DELIVERIES = sa.Table(
    "a2a_deliveries",
    _metadata,
    sa.Column("owner", sa.String(255), primary_key=True),
    sa.Column("message_id", sa.String(255), primary_key=True),
    sa.Column("task_id", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
_TASK_FOR = sa.select(DELIVERIES.c.task_id).where(
    DELIVERIES.c.owner == sa.bindparam("owner"),
    DELIVERIES.c.message_id == sa.bindparam("message_id"),
)
UNFINISHED = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
INTERRUPTED_TEXT = (
    "interrupted: the server stopped during this turn; send the message again to retry it"
)


class DeliveryLog:
    """(owner, messageId) -> task id, persisted (see the module docstring)."""

    def __init__(self, db: Database, *, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        insert = (sqlite_insert if db.is_sqlite else pg_insert)(DELIVERIES)
        key = [DELIVERIES.c.owner, DELIVERIES.c.message_id]
        self._claim_new = insert.on_conflict_do_nothing(index_elements=key)
        self._claim = insert.on_conflict_do_update(
            index_elements=key, set_={"task_id": insert.excluded.task_id}
        )

    def lock(self, owner: str, message_id: str) -> asyncio.Lock:
        """The in-process lock that serialises retries of one message."""
        return self._locks.setdefault((owner, message_id), asyncio.Lock())

    def release(self, owner: str, message_id: str) -> None:
        """Forget the lock of a message once no request holds it."""
        lock = self._locks.get((owner, message_id))
        if lock is not None and not lock.locked():
            del self._locks[(owner, message_id)]

    async def task_for(self, owner: str, message_id: str) -> str | None:
        """The task a message started, or None."""
        async with self.db.read_core() as connection:
            value = await connection.scalar(_TASK_FOR, {"owner": owner, "message_id": message_id})
        return None if value is None else str(value)

    async def claim_new(self, owner: str, message_id: str, task_id: str) -> bool:
        """Claim the message for ``task_id`` unless it was delivered before: one insert, which
        does nothing when the message has a task already. Returns whether it claimed (False:
        ask :meth:`task_for` which task the earlier delivery started)."""
        return bool(await self._write(self._claim_new, owner, message_id, task_id))

    async def claim(self, owner: str, message_id: str, task_id: str) -> None:
        """Record that ``task_id`` answers the message: one upsert, which replaces the task of
        an earlier delivery (the handler only starts a new task when that one failed or is
        gone; two replicas given the same message at once keep the later claim)."""
        await self._write(self._claim, owner, message_id, task_id)

    async def _write(self, statement: Any, owner: str, message_id: str, task_id: str) -> int:
        """Run one of the claim statements; returns the rows it wrote."""
        values = {
            "owner": owner,
            "message_id": message_id,
            "task_id": task_id,
            "created_at": self.clock.now(),
        }
        async with self.db.atomic_core() as connection:
            result = await connection.execute(statement, values)
        return int(result.rowcount)


async def fail_interrupted_tasks(
    db: Database, task_model: Any, *, stale_after: float = 900.0
) -> int:
    """Mark tasks a crash left unfinished as failed (see the module docstring)."""
    status_text = sa.cast(task_model.status, sa.Text)
    unfinished = sa.or_(*(status_text.like(f"%{state}%") for state in UNFINISHED))
    query = sa.select(task_model.id, task_model.status).where(unfinished)
    now = datetime.now(UTC)
    naive_now = now.replace(tzinfo=None)  # the SDK's ``last_updated`` is a naive UTC time
    if not db.is_sqlite:
        query = query.where(task_model.last_updated < naive_now - timedelta(seconds=stale_after))
    failed = 0
    async with db.session() as session:
        for task_id, status in (await session.execute(query)).all():
            if not isinstance(status, dict) or status.get("state") not in UNFINISHED:
                continue
            new_status = {
                "state": "TASK_STATE_FAILED",
                "timestamp": now.isoformat().replace("+00:00", "Z"),
                "message": {
                    "messageId": uuid.uuid4().hex,
                    "role": "ROLE_AGENT",
                    "parts": [{"text": INTERRUPTED_TEXT}],
                    "taskId": task_id,
                },
            }
            await session.execute(
                sa.update(task_model)
                .where(task_model.id == task_id)
                .values(status=new_status, last_updated=naive_now)
            )
            failed += 1
    return failed


__all__ = ["DELIVERIES", "INTERRUPTED_TEXT", "DeliveryLog", "fail_interrupted_tasks"]
