"""``smartctx bench sqlite``: what one small statement costs through each SQLite driver path.

The served turn runs about 35 small statements. This measures, on a throw-away file, the CPU
(and wall) microseconds of one ``SELECT v FROM t WHERE id = ?`` and of one ``INSERT`` in its own
transaction, each through SQLAlchemy's asyncio session as the store issues them, with the
aiosqlite thread (``inline=False``) and with :class:`~smartctx.store.sqlite_inline.InlineConnection`
(the default), plus the plain synchronous ``sqlite3`` call for reference.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import text

from smartctx.bench.docs import machine_line


async def _timed(n: int, step: Callable[[int], Awaitable[None]]) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        await step(i)
    return {
        "wall_us": round((time.perf_counter() - wall) / n * 1e6, 1),
        "cpu_us": round((time.process_time() - cpu) / n * 1e6, 1),
    }


async def _driver(path: Path, inline: bool, n: int) -> dict[str, Any]:
    from smartctx.store.db import Database

    db = Database(f"sqlite+aiosqlite:///{path}", inline=inline)
    try:
        async with db.session() as s:
            await s.execute(text("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)"))
            await s.execute(text("DELETE FROM t"))

        async def select(i: int) -> None:
            async with db.read() as s:
                await s.execute(text("SELECT v FROM t WHERE id = :i"), {"i": i})

        async def insert(i: int) -> None:
            async with db.session() as s:
                await s.execute(text("INSERT INTO t VALUES (:i, 'x')"), {"i": i})

        return {"select": await _timed(n, select), "insert": await _timed(n, insert)}
    finally:
        await db.close()


def _plain(path: Path, n: int) -> dict[str, Any]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        conn.execute("SELECT v FROM t WHERE id = ?", (i,)).fetchall()
    out = {
        "wall_us": round((time.perf_counter() - wall) / n * 1e6, 1),
        "cpu_us": round((time.process_time() - cpu) / n * 1e6, 1),
    }
    conn.close()
    return {"select": out}


def run(n: int = 2000) -> dict[str, Any]:
    """``{"aiosqlite": {...}, "inline": {...}, "sqlite3": {...}}``: µs per statement."""
    with tempfile.TemporaryDirectory(prefix="smartctx-bench-sqlite-") as tmp:
        path = Path(tmp) / "bench.db"
        result = {
            "aiosqlite": asyncio.run(_driver(path, False, n)),
            "inline": asyncio.run(_driver(path, True, n)),
        }
        result["sqlite3"] = _plain(path, n)
    return {"statements": n, "drivers": result}


def markdown(result: dict[str, Any], command: str) -> str:
    """The ``bench:sqlite`` section."""
    lines = [
        "## SQLite driver: one small statement (`smartctx bench sqlite`)",
        "",
        f"Command: `{command}`. {machine_line()} {result['statements']:,} statements each; "
        "a read is one `SELECT ... WHERE id = ?` in `Database.read()`, a write one `INSERT` in "
        "`Database.session()` (its own `BEGIN IMMEDIATE` ... `COMMIT`).",
        "",
        "| path | read CPU µs | read wall µs | write CPU µs | write wall µs |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, row in result["drivers"].items():
        write = row.get("insert", {})
        lines.append(
            f"| {name} | {row['select']['cpu_us']} | {row['select']['wall_us']} | "
            f"{write.get('cpu_us', '-')} | {write.get('wall_us', '-')} |"
        )
    return "\n".join(lines)
