"""What the A2A cluster task store costs per turn: ``python -m smartctx.bench.task_store``.

For each database (SQLite, and PostgreSQL when one answers) an in-process server runs with the
SDK's plain ``DatabaseTaskStore`` and with the cluster components
(:mod:`smartctx.service.task_cluster`), alternately, ``rounds`` times each; every round continues
one fresh context for ``turns`` turns after ``warmup`` turns (offline defaults with the hashing
embedders, so the task store's share of a turn is as large as it gets). Reported per turn:
SQL statements in all and on the ``a2a_*`` tables (exact), and the median over rounds of wall
and process-CPU milliseconds (noisy on a shared machine: compare the two rows of one run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

from smartctx.bench.serve_load import TurnClient
from smartctx.bench.serve_procs import DEFAULT_POSTGRES, postgres_answers, throwaway_database


async def _round(url: str, cluster: bool, turns: int, warmup: int, tmp: Path) -> dict[str, Any]:
    from smartctx.core.settings import Settings
    from smartctx.service.server import serve_async

    settings = Settings(
        data_dir=tmp,
        database_url=url,
        embedder="hashing",
        retrieval_embedder="hashing",
    )
    handle = await serve_async(settings, host="127.0.0.1", port=0, cluster_tasks=cluster)
    counts = {"all": 0, "a2a": 0}

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        counts["all"] += 1
        counts["a2a"] += "a2a_task" in statement

    client = TurnClient(handle.url)
    engine = handle.app.db.engine.sync_engine
    try:
        context = f"bench-{time.monotonic_ns()}"
        for _ in range(warmup):
            await client.turn(context)
        event.listen(engine, "before_cursor_execute", count)
        start, cpu0 = time.perf_counter(), time.process_time()
        errors = sum([await client.turn(context) is None for _ in range(turns)])
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
        event.remove(engine, "before_cursor_execute", count)
    finally:
        await client.__aexit__()
        await handle.stop()
    return {
        "errors": errors,
        "wall_ms": 1000 * wall / turns,
        "cpu_ms": 1000 * cpu / turns,
        "sql": counts["all"] / turns,
        "sql_a2a": counts["a2a"] / turns,
    }


async def measure(
    stores: list[str], turns: int, warmup: int, rounds: int, postgres: str
) -> list[dict[str, Any]]:
    """One row per (store, task store): statements per turn and median ms per turn."""
    rows = []
    for store in stores:
        if store == "postgresql" and not await postgres_answers(postgres):
            continue
        results: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
        with tempfile.TemporaryDirectory(prefix="smartctx-taskstore-") as tmp:
            for index in range(rounds):
                for cluster in (False, True):
                    async with throwaway_database(store, Path(tmp), postgres) as url:
                        work = Path(tmp) / f"data-{index}-{cluster}"
                        results[cluster].append(await _round(url, cluster, turns, warmup, work))
        for cluster, runs in results.items():
            rows.append(
                {
                    "store": store,
                    "task_store": "cluster" if cluster else "plain",
                    "turns": turns * rounds,
                    "errors": sum(r["errors"] for r in runs),
                    "sql_per_turn": round(statistics.median(r["sql"] for r in runs), 1),
                    "a2a_sql_per_turn": round(statistics.median(r["sql_a2a"] for r in runs), 1),
                    "wall_ms_per_turn": round(statistics.median(r["wall_ms"] for r in runs), 1),
                    "cpu_ms_per_turn": round(statistics.median(r["cpu_ms"] for r in runs), 1),
                }
            )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| store | task store | turns | errors | SQL / turn | on a2a_task* / turn "
        "| wall ms / turn | CPU ms / turn |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['store']} | {r['task_store']} | {r['turns']} | {r['errors']} | "
        f"{r['sql_per_turn']} | {r['a2a_sql_per_turn']} | {r['wall_ms_per_turn']} | "
        f"{r['cpu_ms_per_turn']} |"
        for r in rows
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    rows = asyncio.run(measure(stores, args.turns, args.warmup, args.rounds, args.postgres))
    print(markdown(rows))
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows}, indent=2))


if __name__ == "__main__":
    main()
