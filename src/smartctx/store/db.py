"""The database handle: an async SQLAlchemy engine plus Alembic migrations run at start-up.

SQLite (``sqlite+aiosqlite``) is the embedded default, opened in WAL mode with foreign keys on
and ``synchronous=NORMAL`` (a commit survives a crash of the process, as the WAL is written
before the commit returns; only a power loss or kernel crash may lose the last transactions).
Every SQLite transaction begins with ``BEGIN IMMEDIATE``: a transaction that reads and then
writes would otherwise fail at once with "database is locked" when another connection wrote in
between; taking the write lock up front makes writers wait, for up to ``BUSY_TIMEOUT_MS``, in
the order they came; :meth:`Database.read` opens none, for reads. PostgreSQL
(``postgresql+asyncpg``) for several replicas. Migrations live in ``smartctx/store/migrations``,
one independent Alembic branch per subsystem (context log, personal memory, knowledge base, A2A
tasks...), and ``migrate()`` upgrades all heads. On
PostgreSQL the upgrade holds a transaction-level advisory lock (:data:`MIGRATION_LOCK`), so
replicas started at the same moment migrate one after the other: the first creates the schema,
the others find it current.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.sql import Executable

from smartctx.store.sqlite_inline import InlineConnection

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS = 30_000
POOL_OVERFLOW = 8
"""Connections a PostgreSQL pool opens beyond ``pool_size`` at a peak (closed when returned)."""
_NO_BEGIN = "smartctx_no_begin"
MIGRATION_LOCK = (0x736D6374, 0x6D696772)
"""The two-key advisory lock migrations hold on PostgreSQL (a key space apart from the one-key
locks of :mod:`smartctx.store.context_lock`)."""
logger = logging.getLogger(__name__)

Statements = Callable[[Executable, dict[str, Any]], Awaitable[None]]
"""Runs one statement with its parameters (see :meth:`Database.one_connection`)."""


class _Held:
    """One pooled autocommit connection shared by the reads and single-statement writes of a
    unit of work (see :meth:`Database.hold`): checked out at its first use, used by one
    statement block at a time, returned to the pool when the hold has ended and its last user
    is done."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.loop = asyncio.get_running_loop()
        self.lock = asyncio.Lock()
        self.connection: AsyncConnection | None = None
        self.users = 0
        self.ended = False

    def serves(self, db: Database) -> bool:
        """Whether a block of ``db`` on this loop may use the connection."""
        return db is self.db and not self.ended and asyncio.get_running_loop() is self.loop

    @asynccontextmanager
    async def user(self) -> AsyncIterator[None]:
        """Count the block as a user: the connection stays checked out until it ends."""
        self.users += 1
        try:
            yield
        finally:
            self.users -= 1
            if self.ended and not self.users:
                await self.release()

    @asynccontextmanager
    async def use(self) -> AsyncIterator[AsyncConnection]:
        """The connection, exclusively for the block (waits for the block using it)."""
        async with self.user(), self.lock:
            if self.connection is None:
                self.connection = await self.db.reader.connect()
            yield self.connection

    async def release(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()


_HELD: ContextVar[_Held | None] = ContextVar("smartctx_held_connection", default=None)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # The driver must not open transactions itself: ``_begin_immediate`` does.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    _wal_mode(cursor)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _wal_mode(cursor: Any) -> None:
    """Switch the file to WAL unless it is already, retrying while another connection holds it.

    Changing the journal mode takes an exclusive lock, and SQLite reports "database is locked"
    at once, without its busy handler, when a second connection opens while the first switches
    a new file or migrates it (replicas starting together).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")
            mode = cursor.fetchone()
            if mode and str(mode[0]).lower() == "wal":
                return
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.fetchall()
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _begin_immediate(connection: Connection) -> None:
    if not connection.get_execution_options().get(_NO_BEGIN):
        connection.exec_driver_sql("BEGIN IMMEDIATE")


async def _run_to_end(driver: Any, statement: str) -> None:
    """Run one statement on an aiosqlite connection and close its cursor (an open cursor
    counts as a statement in progress, which VACUUM refuses)."""
    cursor = await driver.execute(statement)
    await cursor.fetchall()
    await cursor.close()


class Database:
    """An async engine and session factory for one database URL.

    A SQLite file is driven through :class:`~smartctx.store.sqlite_inline.InlineConnection`
    (``inline=False``: through aiosqlite's thread): statements run on the loop, any wait for
    another process's lock on a worker thread.

    The constructor does no I/O; ``await db.migrate()`` creates or upgrades the schema and
    ``await db.close()`` disposes of the engine. For SQLite files the parent folder is created.
    """

    def __init__(
        self, url: str, *, echo: bool = False, inline: bool = True, pool_size: int = 32
    ) -> None:
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        if self.is_sqlite and parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # A running turn may hold one connection for its context lock (context_lock.py) beside
        # its sessions: a pool smaller than the turns' peak closes and reopens connections (a
        # fork of a PostgreSQL backend each) on every turn.
        pool: dict[str, Any] = (
            {} if self.is_sqlite else {"pool_size": pool_size, "max_overflow": POOL_OVERFLOW}
        )
        path = parsed.database
        if self.is_sqlite and inline and path and path != ":memory:" and not parsed.query:

            async def connect() -> InlineConnection:
                return InlineConnection.connect(path)

            pool["async_creator"] = connect
        self.engine: AsyncEngine = create_async_engine(url, echo=echo, **pool)
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.engine.sync_engine, "begin", _begin_immediate)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # Reads open no transaction: on SQLite no BEGIN, elsewhere autocommit (a PostgreSQL
        # read is then one round trip, not BEGIN, SELECT and ROLLBACK).
        self.reader: AsyncEngine = self.engine.execution_options(
            **({_NO_BEGIN: True} if self.is_sqlite else {"isolation_level": "AUTOCOMMIT"})
        )
        self._reads = async_sessionmaker(self.reader, expire_on_commit=False)
        self._write_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session in one transaction: committed on success, rolled back on error.

        On SQLite this process's write transactions take turns on an asyncio lock first (see
        :meth:`writing`). Do not open one inside another (a read inside is fine).
        """
        async with self.writing(), self.sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Hold this process's SQLite write turn (a no-op elsewhere).

        SQLite has one writer at a time, and a transaction keeps the write lock across its
        awaits, while the event loop runs other turns. A second writer waiting in SQLite's busy
        handler polls with growing sleeps (up to 100 ms each), which made the slowest turns
        seconds long under load; waiting here is first come, first served and wakes at once.
        Other processes on the same file still meet the busy timeout; a wait here longer than
        ``BUSY_TIMEOUT_MS`` fails as SQLite's would ("database is locked").
        """
        if not self.is_sqlite:
            yield
            return
        loop = asyncio.get_running_loop()
        lock = self._write_locks.get(loop)
        if lock is None:
            lock = self._write_locks[loop] = asyncio.Lock()
        try:
            async with asyncio.timeout(BUSY_TIMEOUT_MS / 1000):
                await lock.acquire()
        except TimeoutError:
            raise sqlite3.OperationalError(
                "database is locked (waited for the write turn)"
            ) from None
        try:
            yield
        finally:
            lock.release()

    @asynccontextmanager
    async def atomic(self) -> AsyncIterator[AsyncSession]:
        """A session for one write statement that stands alone (an upsert, a compare-and-swap
        written as one statement): no transaction is opened around it, so on PostgreSQL it is
        one round trip, not BEGIN, the statement and COMMIT. Each statement commits on its own:
        never run two in it that must stand or fall together. On SQLite it takes this process's
        write turn first (see :meth:`writing`)."""
        async with self.writing(), self._autocommit() as session:
            yield session

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads that need no snapshot across their statements (never write in it).

        No transaction is opened: each SELECT reads the last committed state on its own. On
        SQLite, WAL readers never waiting for a writer, a read neither takes nor waits for the
        write lock that :meth:`session` takes up front (``BEGIN IMMEDIATE``); on PostgreSQL the
        connection is in autocommit, so a read costs one round trip (at the default READ
        COMMITTED each statement of a transaction took its own snapshot anyway).

        Inside :meth:`hold` it runs on the held connection when that is free.
        """
        async with self._autocommit() as session:
            yield session

    @asynccontextmanager
    async def read_core(self) -> AsyncIterator[AsyncConnection]:
        """:meth:`read` with a Core connection in place of an ORM session, for statements over
        tables and columns (``select(Model)`` here returns columns, not objects). A primary-key
        read costs a third of the CPU it costs through a session on PostgreSQL (180 against
        580 us, with the statement built once). Inside :meth:`hold`, the held connection."""
        async with self._autocommit_connection() as connection:
            yield connection

    @asynccontextmanager
    async def atomic_core(self) -> AsyncIterator[AsyncConnection]:
        """:meth:`atomic` with a Core connection in place of an ORM session (see
        :meth:`read_core`): one statement that stands alone, committed on its own."""
        async with self.writing(), self._autocommit_connection() as connection:
            yield connection

    @asynccontextmanager
    async def _autocommit_connection(self) -> AsyncIterator[AsyncConnection]:
        held = _HELD.get()
        if held is None or not held.serves(self) or held.lock.locked():
            async with self.reader.connect() as connection:
                yield connection
            return
        async with held.use() as connection:
            yield connection

    @asynccontextmanager
    async def _autocommit(self) -> AsyncIterator[AsyncSession]:
        async with (
            self._autocommit_connection() as connection,
            self._reads(bind=connection) as session,
        ):
            yield session

    @asynccontextmanager
    async def one_connection(self) -> AsyncIterator[Statements]:
        """Run autocommit statements on one connection for the whole block (a session-level
        lock and its unlock): the held connection inside :meth:`hold` (other blocks may use it
        between the statements), else one from the pool. ``await run(statement, params)``."""
        held = _HELD.get()
        if held is not None and held.serves(self):
            async with held.user():

                async def on_held(statement: Executable, params: dict[str, Any]) -> None:
                    async with held.use() as connection:
                        await connection.execute(statement, params)

                yield on_held
            return
        async with self.reader.connect() as connection:

            async def on_own(statement: Executable, params: dict[str, Any]) -> None:
                await connection.execute(statement, params)

            yield on_own

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Within the block, :meth:`read` and :meth:`atomic` of this task and of the tasks it
        starts share one pooled connection on PostgreSQL, checked out at the first use.

        A served turn runs a dozen short statements, each of which checked a connection out of
        SQLAlchemy's pool and back in; that bookkeeping cost about as much CPU as the statement.
        A block that finds the held connection busy (a concurrent task of the same unit of
        work) takes one from the pool as before, so nothing waits on the sharing. A task still
        using the connection when the hold ends keeps it until it is done. A nested hold is the
        outer one. A no-op on SQLite, whose connections cost nothing to take.
        """
        outer = _HELD.get()
        if self.is_sqlite or (outer is not None and outer.serves(self)):
            yield
            return
        held = _Held(self)
        token = _HELD.set(held)
        try:
            yield
        finally:
            _HELD.reset(token)
            held.ended = True
            if not held.users:
                await held.release()

    async def migrate(self) -> None:
        """Upgrade the schema to every Alembic head (idempotent)."""
        async with self.engine.begin() as conn:
            await conn.run_sync(_upgrade)

    async def checkpoint(self) -> bool:
        """Flush SQLite's WAL into the main file and reclaim free pages; True when done.

        False (logged, never raised) when another connection kept the file busy: the deleted
        rows are gone either way, and the next checkpoint reclaims their pages. No-op (True)
        elsewhere than SQLite.
        """
        if not self.is_sqlite:
            return True
        try:
            async with self.engine.connect() as conn:
                # No BEGIN IMMEDIATE here: VACUUM cannot run inside a transaction.
                await conn.execution_options(**{_NO_BEGIN: True})
                raw = await conn.get_raw_connection()
                driver: Any = raw.driver_connection
                for statement in ("PRAGMA wal_checkpoint(TRUNCATE)", "VACUUM"):
                    await _run_to_end(driver, statement)
                await _run_to_end(driver, "PRAGMA wal_checkpoint(TRUNCATE)")
        except (OperationalError, sqlite3.OperationalError) as err:
            logger.warning("checkpoint skipped, the database is busy: %s", err)
            return False
        return True

    async def close(self) -> None:
        await self.engine.dispose()


def alembic_config(connection: Connection | None = None) -> Any:
    """An Alembic ``Config`` pointing at the packaged migrations."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", str(MIGRATIONS_DIR / "versions"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _upgrade(connection: Connection) -> None:
    from alembic import command

    if connection.dialect.name == "postgresql":
        # Released at the end of the transaction ``Database.migrate`` commits.
        connection.exec_driver_sql("SELECT pg_advisory_xact_lock({}, {})".format(*MIGRATION_LOCK))
    command.upgrade(alembic_config(connection), "heads")
