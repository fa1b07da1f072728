"""SQLite for SQLAlchemy's asyncio engine without a thread hop per call.

``sqlite+aiosqlite`` runs every driver call (cursor, execute, fetch, close, commit) on one
background thread per connection and wakes the event loop for each result: a served turn's ~35
small statements cost about 150 such round trips, and one ``SELECT ... WHERE id = ?`` through
a session costs several times the CPU of the ``sqlite3`` call itself (``smartctx bench
sqlite``). Our statements are small and SQLite answers them from its page cache in
microseconds, so :class:`InlineConnection` calls ``sqlite3`` directly, on the calling (event
loop) thread, behind the awaitable surface of an ``aiosqlite.Connection`` that SQLAlchemy's
``aiosqlite`` dialect drives. It is plugged in with the engine's documented ``async_creator``
hook, so the dialect, pooling and error translation are SQLAlchemy's own.

Waiting never happens on the loop. The connection keeps the busy timeout it is given
(``PRAGMA busy_timeout=N`` is recorded, and SQLite's own is kept at 0), so a statement that
finds the database locked by another process fails at once inside SQLite, without effect, and
is run again on a worker thread that waits up to the recorded timeout. Maintenance statements
sent on the connection itself (``checkpoint``'s ``VACUUM``) always run on a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
from collections.abc import Generator, Sequence
from typing import Any

_BUSY_PRAGMA = re.compile(r"^\s*PRAGMA\s+busy_timeout\s*=\s*(\d+)\s*;?\s*$", re.IGNORECASE)
_Params = Sequence[Any] | dict[str, Any]


def _locked(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


class _Immediate:
    """What SQLAlchemy's adapter expects of ``aiosqlite.Connection._tx``: a queue of
    ``(future, function)`` calls, here run at once."""

    def put_nowait(self, item: tuple[asyncio.Future[Any], Any]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as err:  # handed to the awaiting caller, as aiosqlite does
            future.set_exception(err)


class InlineCursor:
    """An ``aiosqlite.Cursor``-shaped wrapper over a ``sqlite3.Cursor`` (module docstring)."""

    def __init__(self, connection: InlineConnection, cursor: sqlite3.Cursor) -> None:
        self._connection = connection
        self._cursor = cursor

    def __await__(self) -> Generator[Any, None, InlineCursor]:
        return self._self().__await__()

    async def _self(self) -> InlineCursor:
        return self

    async def __aenter__(self) -> InlineCursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def execute(self, sql: str, parameters: _Params | None = None) -> InlineCursor:
        busy = _BUSY_PRAGMA.match(sql)
        if busy is not None:
            self._connection.busy_timeout_ms = int(busy.group(1))
            sql = "PRAGMA busy_timeout=0"
        args = () if parameters is None else parameters
        await self._connection.run(self._cursor.execute, sql, args)
        return self

    async def executemany(self, sql: str, parameters: Sequence[_Params]) -> InlineCursor:
        await self._connection.run(self._cursor.executemany, sql, parameters)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value


class InlineConnection:
    """An ``aiosqlite.Connection``-shaped wrapper over a ``sqlite3.Connection`` that runs calls
    on the caller's thread (see the module docstring). ``inline`` marks it for tests."""

    inline = True

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._conn = connection
        self._connection: sqlite3.Connection | None = connection
        self._tx = _Immediate()
        self.busy_timeout_ms = 0

    @classmethod
    def connect(cls, path: str) -> InlineConnection:
        """A connection to the SQLite file ``path`` (usable from worker threads, one at a time,
        for the waits above)."""
        return cls(sqlite3.connect(path, check_same_thread=False))

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    def cursor(self) -> InlineCursor:
        return InlineCursor(self, self._conn.cursor())

    async def execute(self, sql: str, parameters: _Params | None = None) -> InlineCursor:
        """Run ``sql`` on a worker thread (maintenance such as ``VACUUM``, which may take long)."""
        cursor = self._conn.cursor()
        args = () if parameters is None else parameters
        await self.waiting(cursor.execute, sql, args)
        return InlineCursor(self, cursor)

    async def run(self, call: Any, *args: Any) -> Any:
        """``call(*args)`` here and now; when it finds the database locked (it did nothing),
        again on a worker thread that waits up to the recorded busy timeout."""
        try:
            return call(*args)
        except sqlite3.OperationalError as err:
            if not _locked(err) or self.busy_timeout_ms <= 0:
                raise
            return await self.waiting(call, *args)

    async def waiting(self, call: Any, *args: Any) -> Any:
        """``call(*args)`` on a worker thread with SQLite's busy timeout set to the recorded one
        (0 again afterwards); the connection is not used by anyone else meanwhile (SQLAlchemy
        hands one connection to one session at a time)."""

        def run() -> Any:
            self._conn.execute(f"PRAGMA busy_timeout={self.busy_timeout_ms}")
            try:
                return call(*args)
            finally:
                self._conn.execute("PRAGMA busy_timeout=0")

        waiting = asyncio.ensure_future(asyncio.to_thread(run))
        try:
            return await asyncio.shield(waiting)
        except asyncio.CancelledError:
            # the statement still runs on the thread: let it end before the connection goes
            # back to the pool (a rollback must not meet it from another thread)
            with contextlib.suppress(BaseException):
                await waiting
            raise

    async def commit(self) -> None:
        await self.run(self._conn.commit)

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        self._connection = None
        self._conn.close()

    def stop(self) -> None:
        self._connection = None
        self._conn.close()

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)
