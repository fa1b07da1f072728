"""The SDK's cluster task store and event stream on our tables (``smartctx.service.task_cluster``),
on SQLite and on PostgreSQL (a throw-away database per test; skipped when PostgreSQL does not
answer): versioned writes, the event log a resubscription tails, pruning, and forgetting."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from a2a.server.cluster import ConcurrentTaskModificationError, TaskVersion
from a2a.server.context import ServerCallContext
from a2a.types.a2a_pb2 import Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from google.protobuf.timestamp_pb2 import Timestamp
from test_service_forget_item import SECRET, _db_bytes

from smartctx.bench.serve_procs import postgres_answers, throwaway_database
from smartctx.core import HashingEmbedder, Settings
from smartctx.memory.forget import ForgottenItem
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.service.client import SmartctxClient
from smartctx.service.delivery import INTERRUPTED_TEXT
from smartctx.service.owner import OwnerUser
from smartctx.service.server import serve_async
from smartctx.service.task_cluster import (
    ClusterEventStream,
    ClusterTaskStore,
    OrphanEventsForgetter,
    build_task_stores,
    fail_interrupted,
    forget_owner_tasks,
    prune_events,
    task_models,
)
from smartctx.store.db import Database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _admin() -> str:
    url = os.environ.get(
        "SMARTCTX_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    return url.rsplit("/", 1)[0] + "/postgres"


@pytest.fixture(params=["sqlite", "postgresql"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "postgresql" and not await postgres_answers(_admin()):
        pytest.skip("PostgreSQL does not answer")
    async with throwaway_database(request.param, tmp_path, _admin()) as url:
        database = Database(url)
        await database.migrate()
        try:
            yield database
        finally:
            await database.close()


def _as(owner: str) -> ServerCallContext:
    return ServerCallContext(user=OwnerUser(owner))


def _task(task_id: str, state: int, at: datetime = NOW) -> Task:
    stamp = Timestamp()
    stamp.FromDatetime(at)
    return Task(id=task_id, context_id="ctx", status=TaskStatus(state=state, timestamp=stamp))


def _event(task: Task) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=task.status)


async def _save(
    store: ClusterTaskStore, task: Task, prev: TaskVersion, owner: str = "ann"
) -> TaskVersion:
    return await store.save(
        task, event=_event(task), prev=None, prev_version=prev, context=_as(owner)
    )


def _simple_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The simple-protocol queries (BEGIN, COMMIT...) asyncpg sends from now on."""
    import asyncpg.connection

    sent: list[str] = []
    execute = asyncpg.connection.Connection.execute

    async def spy(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(query)
        return await execute(self, query, *args, **kwargs)

    monkeypatch.setattr(asyncpg.connection.Connection, "execute", spy)
    return sent


async def _count(db: Database, table: str, **where: str) -> int:
    clause = " AND ".join(f"{k} = :{k}" for k in where) or "1 = 1"
    async with db.engine.connect() as conn:
        result = await conn.execute(sa.text(f"SELECT count(*) FROM {table} WHERE {clause}"), where)
        return int(result.scalar_one())


async def test_writes_are_versioned_owner_scoped_and_logged(db: Database) -> None:
    store, again = ClusterTaskStore(db), ClusterTaskStore(db)  # two in one process is fine
    v1 = await _save(store, _task("t1", TaskState.TASK_STATE_SUBMITTED), TaskVersion.MISSING)
    v2 = await _save(again, _task("t1", TaskState.TASK_STATE_WORKING), v1)
    assert v2.is_after(v1)
    with pytest.raises(ConcurrentTaskModificationError):  # a replica writing from a stale read
        await _save(store, _task("t1", TaskState.TASK_STATE_COMPLETED), v1)
    stored = await again.get("t1", _as("ann"))
    assert stored is not None and stored.version == v2
    assert stored.task.status.state == TaskState.TASK_STATE_WORKING
    assert await store.get("t1", _as("bob")) is None
    assert await _count(db, "a2a_task_events", task_id="t1", owner="ann") == 2
    assert await _count(db, "a2a_task_versions", task_id="t1") == 1


async def test_a_save_is_one_statement_on_postgresql_and_loses_whole(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ClusterTaskStore(db)
    statements: list[str] = []
    simple = _simple_queries(monkeypatch)

    def count(*args: Any) -> None:
        statements.append(args[2])

    sa.event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    try:
        v1 = await _save(store, _task("t1", TaskState.TASK_STATE_SUBMITTED), TaskVersion.MISSING)
        v2 = await _save(store, _task("t1", TaskState.TASK_STATE_WORKING), v1)
    finally:
        sa.event.remove(db.engine.sync_engine, "before_cursor_execute", count)
    if db.engine.dialect.name == "postgresql":  # the SDK's path elsewhere: four statements
        assert len(statements) == 2, statements
        assert simple == [], simple  # no BEGIN or COMMIT around them: one round trip a save
    with pytest.raises(ConcurrentTaskModificationError):  # a second first save loses
        await _save(store, _task("t1", TaskState.TASK_STATE_FAILED), TaskVersion.MISSING)
    with pytest.raises(ConcurrentTaskModificationError):  # so does a stale one
        await _save(store, _task("t1", TaskState.TASK_STATE_COMPLETED), v1)
    stored = await store.get("t1", _as("ann"))  # and neither wrote the task or its event
    assert stored is not None and stored.version == v2
    assert stored.task.status.state == TaskState.TASK_STATE_WORKING
    assert await _count(db, "a2a_task_events", task_id="t1") == 2


async def test_the_stream_yields_the_events_after_a_version(db: Database) -> None:
    store, stream = ClusterTaskStore(db), ClusterEventStream(db, poll_seconds=0.01)
    v1 = await _save(store, _task("t2", TaskState.TASK_STATE_SUBMITTED), TaskVersion.MISSING)
    v2 = await _save(store, _task("t2", TaskState.TASK_STATE_WORKING), v1)
    v3 = await _save(store, _task("t2", TaskState.TASK_STATE_COMPLETED), v2)
    await _save(store, _task("other", TaskState.TASK_STATE_WORKING), TaskVersion.MISSING)
    seen: list[tuple[TaskVersion, int]] = []
    subscription = stream.subscribe("t2", after=v1)
    async for versioned in subscription:
        event: Any = versioned.event
        seen.append((versioned.version, event.status.state))
        if len(seen) == 2:
            break
    await subscription.aclose()
    assert seen == [(v2, TaskState.TASK_STATE_WORKING), (v3, TaskState.TASK_STATE_COMPLETED)]


async def test_pruning_drops_the_log_of_ended_and_deleted_tasks(db: Database) -> None:
    store = ClusterTaskStore(db)
    old = NOW - timedelta(hours=1)
    for task_id, state, at in (
        ("ended-long-ago", TaskState.TASK_STATE_COMPLETED, old),
        ("failed-long-ago", TaskState.TASK_STATE_FAILED, old),
        ("ended-just-now", TaskState.TASK_STATE_COMPLETED, NOW),
        ("still-running", TaskState.TASK_STATE_WORKING, old),
        ("deleted", TaskState.TASK_STATE_WORKING, NOW),
    ):
        await _save(store, _task(task_id, state, at), TaskVersion.MISSING)
    await store.as_task_store.delete("deleted", _as("ann"))
    assert await prune_events(db, older_than=timedelta(minutes=5), now=NOW) == 3
    async with db.engine.connect() as conn:
        left = await conn.execute(sa.text("SELECT task_id FROM a2a_task_events ORDER BY task_id"))
        assert list(left.scalars()) == ["ended-just-now", "still-running"]


async def test_start_up_repair_logs_the_failure_of_a_crashed_turn(db: Database) -> None:
    store, stream = ClusterTaskStore(db), ClusterEventStream(db, poll_seconds=0.01)
    old = NOW - timedelta(hours=1)
    crashed = await _save(
        store, _task("crashed", TaskState.TASK_STATE_WORKING, old), TaskVersion.MISSING
    )
    await _save(store, _task("running", TaskState.TASK_STATE_WORKING, NOW), TaskVersion.MISSING)
    await _save(store, _task("done", TaskState.TASK_STATE_COMPLETED, old), TaskVersion.MISSING)
    failed = await fail_interrupted(db, store, stale_after=900, now=NOW)
    # a shared database leaves a turn updated within ``stale_after`` to its replica; SQLite
    # (one process) fails every unfinished task, as delivery.fail_interrupted_tasks does
    assert failed == (2 if db.is_sqlite else 1)
    subscription = stream.subscribe("crashed", after=crashed)
    async for versioned in subscription:  # what a client resubscribed elsewhere receives
        event: Any = versioned.event
        break
    await subscription.aclose()
    assert event.status.state == TaskState.TASK_STATE_FAILED
    assert event.status.message.parts[0].text == INTERRUPTED_TEXT
    stored = await store.get("crashed", _as("ann"))
    assert stored is not None and stored.task.status.state == TaskState.TASK_STATE_FAILED
    running = await store.get("running", _as("ann"))
    assert running is not None
    assert running.task.status.state == (
        TaskState.TASK_STATE_FAILED if db.is_sqlite else TaskState.TASK_STATE_WORKING
    )


async def test_forgetting_an_owner_deletes_tasks_versions_and_events(db: Database) -> None:
    store = ClusterTaskStore(db)
    await _save(store, _task("ann-1", TaskState.TASK_STATE_COMPLETED), TaskVersion.MISSING)
    await _save(store, _task("bob-1", TaskState.TASK_STATE_COMPLETED), TaskVersion.MISSING, "bob")
    assert await forget_owner_tasks(db, "ann") == 3
    for table in ("a2a_tasks", "a2a_task_versions", "a2a_task_events"):
        assert await _count(db, table, owner="ann") == 0
        assert await _count(db, table, owner="bob") == 1


async def test_forgetting_an_item_deletes_the_log_of_its_deleted_tasks(db: Database) -> None:
    store = ClusterTaskStore(db)
    await _save(store, _task("kept", TaskState.TASK_STATE_COMPLETED), TaskVersion.MISSING)
    await _save(store, _task("gone", TaskState.TASK_STATE_COMPLETED), TaskVersion.MISSING)
    await store.as_task_store.delete("gone", _as("ann"))  # what the copies forgetter does
    item = ForgottenItem(owner="ann", kind="pair", id="p1", texts=("x",), source_ids=())
    counts = await OrphanEventsForgetter(db).forget_item(item)
    assert counts == {"a2a_task_events": 1, "a2a_task_versions": 1}
    assert await _count(db, "a2a_task_events", task_id="kept") == 1


def test_without_cluster_the_plain_store_is_used(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    plain, cluster = build_task_stores(db, cluster=False), build_task_stores(db, cluster=True)
    assert not plain.cluster and plain.store is plain.table
    assert cluster.cluster and isinstance(cluster.store, ClusterTaskStore)
    assert plain.table.task_model is cluster.table.task_model is task_models().task


async def test_a_forgotten_secret_leaves_no_task_event_behind(
    tmp_path: Path, hashing_kb: KnowledgeBase
) -> None:
    """The byte-level forget check of ``test_service_forget_item``, with the cluster task store
    (whose event log holds every message and reply) forced on for SQLite."""
    db_file = tmp_path / "forget.db"
    settings = Settings(database_url=f"sqlite+aiosqlite:///{db_file}")
    handle = await serve_async(
        settings,
        host="127.0.0.1",
        port=0,
        embedder=HashingEmbedder(),
        kb=hashing_kb,
        cluster_tasks=True,
    )
    try:
        async with SmartctxClient(handle.url, owner="hana") as hana:
            await hana.send(f"My locker code is {SECRET}.")
        assert await _count(handle.app.db, "a2a_task_events", owner="hana") > 0
        async with httpx.AsyncClient(
            base_url=handle.url, headers={"X-Smartctx-Owner": "hana"}
        ) as http:
            pairs = (await http.get("/memory/owners/hana/pairs")).json()["pairs"]
            assert len(pairs) == 1
            for pair in pairs:
                answer = await http.delete(f"/memory/owners/hana/items/pair/{pair['id']}")
                assert answer.status_code == 200, answer.text
        await handle.app.db.checkpoint()
        assert SECRET.encode() not in _db_bytes(db_file)
        assert answer.json()["copies"]["a2a_task_events"]["a2a_task_events"] >= 1
    finally:
        await handle.stop()


async def test_the_plain_store_saves_reads_and_overwrites_a_task_per_owner(db: Database) -> None:
    from google.protobuf.struct_pb2 import Struct

    from smartctx.service.task_cluster import build_task_stores

    store = build_task_stores(db, cluster=False).store
    task = _task("p1", TaskState.TASK_STATE_SUBMITTED)
    await store.save(task, _as("ann"))
    task.status.state = TaskState.TASK_STATE_COMPLETED
    meta = Struct()
    meta.update({"note": "done"})
    task.metadata.CopyFrom(meta)
    await store.save(task, _as("ann"))  # the same row, overwritten
    stored = await store.get("p1", _as("ann"))
    assert stored is not None and stored.status.state == TaskState.TASK_STATE_COMPLETED
    assert dict(stored.metadata) == {"note": "done"}
    assert await store.get("p1", _as("bob")) is None
    assert await _count(db, "a2a_tasks", id="p1") == 1


@pytest.mark.parametrize("cluster", [True, False])
async def test_a_new_task_is_missing_without_a_query_until_a_save_starts(
    db: Database, cluster: bool
) -> None:
    from a2a.server.id_generator import IDGeneratorContext

    stores = build_task_stores(db, cluster=cluster)
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    async def read(task_id: str) -> Task | None:
        if isinstance(stores.store, ClusterTaskStore):
            found = await stores.store.get(task_id, _as("ann"))
            return None if found is None else found.task
        return await stores.store.get(task_id, _as("ann"))

    new = stores.fresh.generate(IDGeneratorContext())
    sa.event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    try:
        assert await read(new) is None and statements == []  # the SDK's reads before a save
        assert await read("named-by-a-client") is None and len(statements) == 1
        task = _task(new, TaskState.TASK_STATE_SUBMITTED)
        if isinstance(stores.store, ClusterTaskStore):
            await _save(stores.store, task, TaskVersion.MISSING)
        else:
            await stores.store.save(task, _as("ann"))
        stored = await read(new)  # read from the database from the first save on
    finally:
        sa.event.remove(db.engine.sync_engine, "before_cursor_execute", count)
    assert stored is not None and stored.status.state == TaskState.TASK_STATE_SUBMITTED
    assert not stores.fresh.unsaved(new)


async def test_a_served_turn_never_reads_its_new_task_and_the_task_is_there_after(
    db: Database, hashing_kb: KnowledgeBase
) -> None:
    # the served stores: the plain one on SQLite, the cluster one on PostgreSQL
    settings = Settings(database_url=db.url)
    handle = await serve_async(
        settings, host="127.0.0.1", port=0, embedder=HashingEmbedder(), kb=hashing_kb
    )
    reads: list[str] = []

    def count(*args: Any) -> None:
        if "FROM a2a_tasks" in args[2]:
            reads.append(args[2])

    engine = handle.app.db.engine.sync_engine
    try:
        async with SmartctxClient(handle.url, owner="ann") as ann:
            sa.event.listen(engine, "before_cursor_execute", count)
            try:
                reply = await ann.send("How many vacation days do I get?")
            finally:
                sa.event.remove(engine, "before_cursor_execute", count)
        assert reads == [] and reply.state == "completed"
        async with httpx.AsyncClient(
            base_url=handle.url, headers={"X-Smartctx-Owner": "ann", "A2A-Version": "1.0"}
        ) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": reply.task_id}}
            task = (await http.post("/", json=body)).json()["result"]
        assert task["id"] == reply.task_id and task["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        await handle.stop()
