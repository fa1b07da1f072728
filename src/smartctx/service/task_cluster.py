"""A2A tasks shared by several replicas: the SDK's cluster components on our tables.

``build_task_stores(db, cluster=...)`` gives the request handler its task store and event
stream. With ``cluster`` (the service turns it on for PostgreSQL) they are a2a-sdk 1.3's
``VersionedDatabaseTaskStore`` and ``DatabaseTaskEventStream`` (``a2a.server.cluster``):

- every write to a task is a compare-and-swap on ``a2a_task_versions``, so two replicas never
  overwrite each other's task state (a cancel through B of a task running on A wins, and A stops
  the turn when its next write finds the version moved);
- every write also appends its event (a serialised ``StreamResponse``) to ``a2a_task_events`` in
  the same transaction; a ``SubscribeToTask`` (``tasks/resubscribe``) for a task running on
  another replica answers with the stored task, then tails that log (one indexed query every
  :data:`POLL_SECONDS` while it waits) until a terminal, interrupted or message event.

Without ``cluster`` the store is the SDK's plain ``DatabaseTaskStore`` (one write per event, no
log; :class:`ReadingTaskStore` reads without a write transaction), which is all one process
needs: it resubscribes from its own running task.

The SDK never creates tables here: all three come from the Alembic revision ``0007_i10cluster``
(``smartctx.store.migrations``). The SDK's constructors define a new mapped class on the SDK's
global metadata when given a table name, which fails the second time in one process, so the
stores are built on the SDK's default models and then pointed at ours (:func:`task_models`, made
once per process on a private declarative base).

Data kept in step with the tasks: :func:`forget_owner_tasks` deletes an owner's tasks, versions
and events; :class:`OrphanEventsForgetter` deletes the events and versions of tasks that a
forget deleted; :func:`prune_events` drops the event log of tasks that ended more than
``older_than`` ago (nobody can resubscribe to a finished task) and of deleted tasks.

Start-up repair (:func:`fail_interrupted`): the cluster's version of
:func:`smartctx.service.delivery.fail_interrupted_tasks`, with the same choice of tasks (on a
shared database those unfinished and not updated for ``stale_after`` seconds) and the same
message, written through the versioned store: the FAILED state is logged as an event, so a
client resubscribed through another replica sees the end of a turn whose replica died, and a
replica still writing the task wins (its version moved) instead of being overwritten.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from a2a.server.cluster import (
    ConcurrentTaskModificationError,
    DatabaseTaskEventStream,
    StoredTask,
    VersionedDatabaseTaskStore,
)
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.server.models import (
    create_task_event_model,
    create_task_model,
    create_task_version_model,
)
from a2a.server.tasks import DatabaseTaskStore
from a2a.types.a2a_pb2 import Message, Part, Role, Task, TaskState, TaskStatusUpdateEvent
from a2a.utils.proto_utils import to_stream_response
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase

from smartctx.memory.forget import ForgottenItem
from smartctx.service.delivery import INTERRUPTED_TEXT, UNFINISHED
from smartctx.service.fresh_tasks import FreshTaskIds
from smartctx.service.owner import OwnerUser
from smartctx.service.task_rows import task_row
from smartctx.store.db import Database

TASK_TABLE = "a2a_tasks"
VERSION_TABLE = "a2a_task_versions"
EVENT_TABLE = "a2a_task_events"
POLL_SECONDS = 0.25
"""How often a resubscription to a task running on another replica reads the event log."""
EVENT_RETENTION = timedelta(minutes=5)
"""How long the events of a finished task are kept (see :func:`prune_events`)."""
TERMINAL = (
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
)


class _TaskBase(DeclarativeBase):
    """A private declarative base, so our task models do not clash with the SDK's."""


@dataclass(frozen=True)
class TaskModels:
    """The SDK's task, event and version models on our table names."""

    task: Any
    event: Any
    version: Any


@functools.cache
def task_models() -> TaskModels:
    """The models on ``a2a_tasks``, ``a2a_task_events`` and ``a2a_task_versions`` (made once)."""
    return TaskModels(
        task=create_task_model(TASK_TABLE, _TaskBase),
        event=create_task_event_model(EVENT_TABLE, _TaskBase),
        version=create_task_version_model(VERSION_TABLE, _TaskBase),
    )


class ClusterTaskStore(VersionedDatabaseTaskStore):
    """``VersionedDatabaseTaskStore`` on our tables (see the module docstring).

    On PostgreSQL a save is one statement and one round trip: the SDK's compare-and-swap of the
    version row, the task row and the event, each a data-modifying ``WITH`` clause of one query
    (the SDK runs an ``UPDATE``, the ORM's ``SELECT`` then ``INSERT``/``UPDATE`` of the task, and
    an ``INSERT`` in a transaction: six round trips, four saves a turn). The task row and the
    event are selected from the moved version row, so a compare-and-swap that moves nothing
    writes nothing, and the statement, atomic on its own, needs no transaction around it
    (:meth:`Database.atomic`). The semantics are the SDK's: the version moves from
    ``prev_version`` to the next or the save raises :class:`ConcurrentTaskModificationError`
    and writes nothing; a first save inserts version 1 and loses to a concurrent first save on
    the version row's key.
    A cancel (which locks and reads the stored task first) takes the SDK's own path.
    """

    def __init__(self, db: Database, fresh: FreshTaskIds | None = None) -> None:
        super().__init__(db.engine, create_table=False)
        self.fresh = fresh or FreshTaskIds()
        models = task_models()
        self.as_task_store.task_model = models.task  # type: ignore[attr-defined]
        self._event_model = models.event
        self._version_model = models.version
        self._one_statement = db.engine.dialect.name == "postgresql"
        self._smartctx_db = db
        self._statements: dict[tuple[bool, bool], tuple[Any, list[tuple[str, str]]]] = {}

    async def _save_once(
        self, task: Task, *, event: Any, prev_version: TaskVersion, owner: str
    ) -> TaskVersion:
        self.fresh.saving(task.id)
        if not self._one_statement or task.status.state == TaskState.TASK_STATE_CANCELED:
            return await super()._save_once(
                task, event=event, prev_version=prev_version, owner=owner
            )
        first = prev_version.is_missing
        new_version = 1 if first else _version_number(prev_version) + 1
        row = task_row(task, owner)
        statement, columns = self._save_statement(first=first, with_event=event is not None)
        values: dict[str, Any] = {f"t_{name}": row[key] for name, key in columns}
        values |= {"v_task": task.id, "v_owner": owner, "v_new": new_version}
        if not first:
            values["v_prev"] = _version_number(prev_version)
        if event is not None:
            values["e_data"] = to_stream_response(event).SerializeToString()
        try:
            async with self._smartctx_db.atomic_core() as connection:
                moved = (await connection.execute(statement, values)).scalar_one()
                if not moved:
                    raise ConcurrentTaskModificationError(task.id)
        except IntegrityError as err:
            if first:  # another replica's first save took the version row
                raise ConcurrentTaskModificationError(task.id) from err
            raise
        return TaskVersion(new_version)

    async def _get_once(self, task_id: str, owner: str) -> StoredTask | None:
        """The SDK's read of a task with its version (one outer-joined SELECT), through
        :meth:`Database.read`: no transaction, so one round trip on PostgreSQL (the SDK's session
        adds a BEGIN and a ROLLBACK; the SDK reads a task three times a turn). A new task that
        no save has reached yet is missing without a query (:mod:`.fresh_tasks`)."""
        if self.fresh.unsaved(task_id):
            return None
        task_model = self.as_task_store.task_model  # type: ignore[attr-defined]
        versions = self._version_model
        query = (
            sa.select(task_model, versions.version)
            .outerjoin(
                versions,
                (versions.task_id == task_model.id) & (versions.owner == task_model.owner),
            )
            .where(task_model.id == task_id, task_model.owner == owner)
        )
        async with self._smartctx_db.read() as session:
            found = (await session.execute(query)).one_or_none()
            if found is None:
                return None
            row, number = found
            task = self._db._from_orm(row)
        return StoredTask(task, TaskVersion.MISSING if number is None else TaskVersion(number))

    def _save_statement(
        self, *, first: bool, with_event: bool
    ) -> tuple[Any, list[tuple[str, str]]]:
        """The one-statement save (compiled once per shape) and the task model's
        (column, attribute) names; values are bound per call (``t_``, ``v_``, ``e_`` names)."""
        key = (first, with_event)
        if key in self._statements:
            return self._statements[key]
        columns = _task_columns(self.as_task_store.task_model)  # type: ignore[attr-defined]
        tasks, events, versions = _tables()
        task_id: Any = sa.bindparam("v_task")
        owner: Any = sa.bindparam("v_owner")
        if first:
            version: Any = sa.insert(versions).values(
                task_id=task_id, owner=owner, version=sa.bindparam("v_new")
            )
        else:
            version = (
                sa.update(versions)
                .where(
                    versions.c.task_id == task_id,
                    versions.c.owner == owner,
                    versions.c.version == sa.bindparam("v_prev"),
                )
                .values(version=sa.bindparam("v_new"))
            )
        moved = version.returning(versions.c.version).cte("moved")
        # Each write selects its values from the moved row: no row, nothing written (a
        # data-modifying WITH clause runs to completion whether or not the main query reads it,
        # but an INSERT ... SELECT of no rows inserts none). The bound values carry the
        # columns' types, so they are cast as in a VALUES list.
        task_values = [
            sa.bindparam(f"t_{name}", type_=tasks.c[name].type).label(name) for name, _ in columns
        ]
        insert = pg_insert(tasks).from_select(
            [name for name, _ in columns], sa.select(*task_values).select_from(moved)
        )
        writes = [_upsert_row(insert, tasks, columns).returning(tasks.c.id).cte("task_row")]
        if with_event:
            event_values = {
                "task_id": task_id,
                "owner": owner,
                "task_version": sa.bindparam("v_new"),
                "event_data": sa.bindparam("e_data"),
            }
            logged = sa.insert(events).from_select(
                list(event_values),
                sa.select(
                    *(
                        sa.type_coerce(value, events.c[name].type).label(name)
                        for name, value in event_values.items()
                    )
                ).select_from(moved),
            )
            writes.append(logged.returning(events.c.seq).cte("event_row"))
        # add_cte renders the writes although nothing selects from them.
        statement = sa.select(sa.func.count()).select_from(moved).add_cte(*writes)
        self._statements[key] = (statement, columns)
        return statement, columns


class ClusterEventStream(DatabaseTaskEventStream):
    """``DatabaseTaskEventStream`` over ``a2a_task_events`` (see the module docstring)."""

    def __init__(self, db: Database, *, poll_seconds: float = POLL_SECONDS) -> None:
        super().__init__(db.engine, create_table=False, poll_interval_s=poll_seconds)
        self._event_model = task_models().event


@dataclass(frozen=True)
class TaskStores:
    """What the handler is given (``store``, ``events``) and the plain table view (``table``:
    the SDK's ``DatabaseTaskStore`` on ``a2a_tasks``, for start-up repair and forgetting)."""

    store: DatabaseTaskStore | ClusterTaskStore
    table: DatabaseTaskStore
    events: ClusterEventStream | None
    fresh: FreshTaskIds
    """The task id generator to give the request handler (see :mod:`.fresh_tasks`)."""

    @property
    def cluster(self) -> bool:
        return self.events is not None


def build_task_stores(db: Database, *, cluster: bool) -> TaskStores:
    """The task store and event stream for ``db`` (no I/O; see the module docstring)."""
    fresh = FreshTaskIds()
    if cluster:
        store = ClusterTaskStore(db, fresh)
        table: Any = store.as_task_store
        return TaskStores(store=store, table=table, events=ClusterEventStream(db), fresh=fresh)
    plain = ReadingTaskStore(db, fresh)
    plain.task_model = task_models().task
    return TaskStores(store=plain, table=plain, events=None, fresh=fresh)


class ReadingTaskStore(DatabaseTaskStore):
    """The SDK's ``DatabaseTaskStore`` whose ``get`` reads through :meth:`Database.read` and whose
    ``save`` is one upsert of the SDK's own row in a :meth:`Database.session` (on SQLite).

    The SDK reads a task several times a turn; on SQLite each read opened a transaction that
    takes the write lock (``BEGIN IMMEDIATE``), so reads queued behind every writer. The query
    and the conversion are the SDK's own (a2a-sdk 1.3's ``DatabaseTaskStore.get``); writes are
    unchanged.
    """

    def __init__(self, db: Database, fresh: FreshTaskIds | None = None) -> None:
        super().__init__(db.engine, create_table=False)
        self._db = db
        self.fresh = fresh or FreshTaskIds()
        self._upsert_statement: tuple[Any, list[tuple[str, str]]] | None = None

    async def save(self, task: Task, context: ServerCallContext) -> None:
        self.fresh.saving(task.id)
        if not self._db.is_sqlite:
            await super().save(task, context)
            return
        # The SDK merges (a SELECT, then an INSERT or UPDATE, through the ORM); one upsert of
        # the same row does it in one statement. Three saves a turn.
        await self._ensure_initialized()
        row = task_row(task, self.owner_resolver(context))
        statement, columns = self._upsert()
        values = {name: row[key] for name, key in columns}
        async with self._db.atomic_core() as connection:  # one statement, no BEGIN and COMMIT
            await connection.execute(statement, values)

    def _upsert(self) -> tuple[Any, list[tuple[str, str]]]:
        """The upsert of one row (its values bound per call, so SQLAlchemy compiles it once)
        and the (column, attribute) names of the SDK's model."""
        if self._upsert_statement is None:
            table: sa.Table = self.task_model.__table__  # type: ignore[assignment]
            columns = _task_columns(self.task_model)
            statement = _upsert_row(sqlite_insert(table), table, columns)
            self._upsert_statement = (statement, columns)
        return self._upsert_statement

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        if self.fresh.unsaved(task_id):  # a new task no save has reached (.fresh_tasks)
            return None
        await self._ensure_initialized()
        owner = self.owner_resolver(context)
        model = self.task_model
        query = sa.select(model).where(model.id == task_id, model.owner == owner)
        async with self._db.read() as session:
            found = (await session.execute(query)).scalar_one_or_none()
            return None if found is None else self._from_orm(found)


def _task_columns(model: Any) -> list[tuple[str, str]]:
    """The (column, attribute) names of the SDK's task model, in its order."""
    return [(a.columns[0].name, a.key) for a in sa.inspect(model).column_attrs]


def _upsert_row(insert: Any, table: sa.Table, columns: list[tuple[str, str]]) -> Any:
    """``insert`` (a dialect's INSERT of one task row) that overwrites the row with that id."""
    return insert.on_conflict_do_update(
        index_elements=[table.c.id],
        set_={name: insert.excluded[name] for name, _ in columns if name != "id"},
    )


def _version_number(version: TaskVersion) -> int:
    """The integer a versioned store's ``TaskVersion`` holds (the SDK's own rule)."""
    value = version._value
    if not isinstance(value, int):
        raise TypeError(f"the task store needs integer versions, got {type(value).__name__}")
    return value


def _tables() -> tuple[sa.Table, sa.Table, sa.Table]:
    models = task_models()
    return models.task.__table__, models.event.__table__, models.version.__table__


async def forget_owner_tasks(db: Database, owner: str) -> int:
    """Delete every task of ``owner`` with its versions and events; the rows deleted."""
    deleted = 0
    async with db.session() as session:
        for table in reversed(_tables()):
            result: Any = await session.execute(sa.delete(table).where(table.c.owner == owner))
            deleted += int(result.rowcount or 0)
    return deleted


class OrphanEventsForgetter:
    """An item forgetter, registered after the one that deletes task rows: deletes the owner's
    task events and versions whose task is gone (an event holds the task's texts)."""

    name = "a2a_task_events"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def forget_item(self, item: ForgottenItem) -> dict[str, Any]:
        tasks, events, versions = _tables()
        counts: dict[str, Any] = {}
        async with self.db.session() as session:
            for name, table, key in (
                (EVENT_TABLE, events, events.c.task_id),
                (VERSION_TABLE, versions, versions.c.task_id),
            ):
                gone = ~sa.exists().where(tasks.c.id == key)
                result: Any = await session.execute(
                    sa.delete(table).where(table.c.owner == item.owner, gone)
                )
                counts[name] = int(result.rowcount or 0)
        return counts


async def prune_events(
    db: Database, *, older_than: timedelta = EVENT_RETENTION, now: datetime | None = None
) -> int:
    """Delete the logged events of tasks that ended before ``now - older_than`` and of tasks
    that no longer exist; the rows deleted. A resubscription tails only running tasks, and a
    tail that is still reading a finished task's last events is done within ``older_than``."""
    tasks, events, _ = _tables()
    cutoff = (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)  # naive UTC
    state = tasks.c.status["state"].as_string()
    ended = sa.exists().where(
        tasks.c.id == events.c.task_id,
        state.in_(TERMINAL),
        sa.or_(tasks.c.last_updated < cutoff - older_than, tasks.c.last_updated.is_(None)),
    )
    gone = ~sa.exists().where(tasks.c.id == events.c.task_id)
    async with db.session() as session:
        result: Any = await session.execute(sa.delete(events).where(sa.or_(ended, gone)))
    return int(result.rowcount or 0)


async def fail_interrupted(
    db: Database,
    store: ClusterTaskStore,
    *,
    stale_after: float = 900.0,
    now: datetime | None = None,
) -> int:
    """Mark the tasks a crash left unfinished as FAILED through ``store`` (see the module
    docstring); the number marked."""
    tasks = task_models().task.__table__
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    query = sa.select(tasks.c.id, tasks.c.owner).where(
        tasks.c.status["state"].as_string().in_(UNFINISHED)
    )
    if not db.is_sqlite:  # another replica's running turns are left alone
        cutoff = moment.replace(tzinfo=None) - timedelta(seconds=stale_after)
        query = query.where(tasks.c.last_updated < cutoff)
    async with db.sessions() as session:
        rows = (await session.execute(query)).all()
    failed = 0
    for task_id, owner in rows:
        context = ServerCallContext(user=OwnerUser(str(owner or "")))
        stored = await store.get(str(task_id), context)
        if stored is None or TaskState.Name(stored.task.status.state) not in UNFINISHED:
            continue
        task = Task()
        task.CopyFrom(stored.task)
        task.status.Clear()
        task.status.state = TaskState.TASK_STATE_FAILED
        task.status.timestamp.FromDatetime(moment.replace(tzinfo=None))
        task.status.message.CopyFrom(
            Message(
                message_id=uuid.uuid4().hex,
                role=Role.ROLE_AGENT,
                parts=[Part(text=INTERRUPTED_TEXT)],
                task_id=task.id,
                context_id=task.context_id,
            )
        )
        event = TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status
        )
        try:
            await store.save(
                task, event=event, prev=stored.task, prev_version=stored.version, context=context
            )
        except ConcurrentTaskModificationError:
            continue  # written meanwhile: its replica is alive
        failed += 1
    return failed


__all__ = [
    "EVENT_TABLE",
    "TASK_TABLE",
    "VERSION_TABLE",
    "ClusterEventStream",
    "ClusterTaskStore",
    "OrphanEventsForgetter",
    "TaskStores",
    "build_task_stores",
    "fail_interrupted",
    "forget_owner_tasks",
    "prune_events",
    "task_models",
]
