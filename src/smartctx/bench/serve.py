"""``smartctx bench serve``: served turns under load, smartctx against an a2a-sdk echo agent.

One run measures, each on its own throw-away database and its own server process(es) (the
one-process servers of a store side by side, measured level by level in turn):

- the *matrix*: servers ``echo`` / ``smartctx`` (offline defaults, memory on) /
  ``smartctx-nomem`` (``--no-memory``), stores SQLite and PostgreSQL, 1 process (and 2 processes
  on PostgreSQL, the clients alternating between them), N concurrent clients per level; per
  setting: requests per second, p50/p99 latency, errors, server CPU per request and RSS;
- *growth*: the latency of each turn as one context grows (1,000 turns by default), by bucket;
- *stored contexts*: per-turn latency on new and on stored contexts with 0 and with 10,000
  contexts already in the database (the stored ones cloned from a real conversation).

Everything is bounded: servers must answer within a start-up deadline, every request has a
timeout, each level sends a fixed number of requests; every server is stopped and every database
dropped even when a step fails. Results are a JSON-ready dict (see :func:`run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import statistics
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from smartctx.bench.docs import machine_info
from smartctx.bench.serve_load import (
    LoadResult,
    TurnClient,
    client_owner,
    one_turn,
    run_level,
    run_turns,
)
from smartctx.bench.serve_procs import (
    DEFAULT_POSTGRES,
    SERVERS,
    ServerProcess,
    postgres_answers,
    start_server,
    throwaway_database,
)
from smartctx.bench.serve_seed import clone_context


class Reporter(Protocol):
    """Progress of the run: a new phase with its number of steps, then steps done."""

    def phase(self, description: str, total: int) -> None: ...

    def advance(self, steps: int = 1) -> None: ...


@dataclass
class ServeOptions:
    """What one run measures (the defaults are the full benchmark of issue 10)."""

    servers: Sequence[str] = SERVERS
    stores: Sequence[str] = ("sqlite", "postgresql")
    clients: Sequence[int] = (1, 8, 32)
    requests: int = 300
    two_process: bool = True
    growth_turns: int = 1000
    stored_contexts: int = 10_000
    stored_turns: int = 60
    timeout: float = 60.0
    postgres: str = DEFAULT_POSTGRES
    workdir: Path | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def quick(cls, **overrides: Any) -> ServeOptions:
        """A short run for development: few requests per level, short growth, 1,000 stored."""
        base: dict[str, Any] = {
            "requests": 24,
            "growth_turns": 60,
            "stored_contexts": 1000,
            "stored_turns": 12,
        }
        return cls(**(base | overrides))


def _setting(
    server: str, store: str, processes: int, load: LoadResult, cpu: float, rss: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    public = {
        "server": server,
        "store": store,
        "processes": processes,
        "clients": load.clients,
        "rps": round(load.rps, 2),
        "p50_ms": round(load.percentile_ms(0.50), 1),
        "p99_ms": round(load.percentile_ms(0.99), 1),
        "errors": load.errors,
    }
    detail = {
        "server": server,
        "store": store,
        "processes": processes,
        "clients": load.clients,
        "requests": load.ok + load.errors,
        "seconds": round(load.seconds, 2),
        "cpu_ms_per_request": round(1000 * cpu / max(load.ok + load.errors, 1), 1),
        "rss_mb": round(rss, 1),
        "error_samples": load.error_samples,
    }
    return public, detail


@contextlib.asynccontextmanager
async def _servers(
    kind: str, database: str, processes: int, workdir: Path
) -> AsyncIterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    try:
        # One after the other: the first migrates the database, the second finds it ready.
        for _ in range(processes):
            started.append(await start_server(kind, database, workdir))
        yield started
    finally:
        for server in started:
            await asyncio.to_thread(server.stop)


async def _matrix(
    options: ServeOptions, workdir: Path, reporter: Reporter, out: dict[str, Any]
) -> None:
    """A one-process leg starts its servers (one kind each, on its own database) together,
    then measures level by level, kind after kind: the echo agent and smartctx at one N run
    seconds apart, so a machine that drifts during the run moves both sides of their ratio
    alike. The two-process leg runs one kind at a time: six servers' connection pools would
    pass a default PostgreSQL's 100 connections."""
    legs = [(store, 1) for store in options.stores]
    if options.two_process and "postgresql" in options.stores:
        legs.append(("postgresql", 2))
    for store, processes in legs:
        together = [list(options.servers)] if processes == 1 else [[k] for k in options.servers]
        for kinds in together:
            async with contextlib.AsyncExitStack() as stack:
                running: dict[str, list[ServerProcess]] = {}
                for kind in kinds:
                    database = await stack.enter_async_context(
                        throwaway_database(store, workdir, options.postgres)
                    )
                    running[kind] = await stack.enter_async_context(
                        _servers(kind, database, processes, workdir)
                    )
                for n in options.clients:
                    for kind, servers in running.items():
                        await _level(options, reporter, out, (kind, store, processes), servers, n)


async def _level(
    options: ServeOptions,
    reporter: Reporter,
    out: dict[str, Any],
    setting: tuple[str, str, int],
    servers: list[ServerProcess],
    clients: int,
) -> None:
    """One level: ``clients`` concurrent clients against ``servers``; appends its figures."""
    kind, store, processes = setting
    reporter.phase(f"{kind} · {store} · {processes}p · {clients} clients", options.requests)
    cpu0 = sum(s.cpu_seconds() for s in servers)
    load = await run_level(
        [s.url for s in servers],
        clients,
        options.requests,
        timeout=options.timeout,
        progress=reporter.advance,
    )
    cpu = sum(s.cpu_seconds() for s in servers) - cpu0
    rss = sum(s.rss_mb() for s in servers)
    public, detail = _setting(kind, store, processes, load, cpu, rss)
    out["settings"].append(public)
    out["details"].append(detail)


def _buckets(latencies: list[float], count: int = 10) -> list[dict[str, Any]]:
    size = max(1, math.ceil(len(latencies) / count))
    rows = []
    for start in range(0, len(latencies), size):
        chunk = latencies[start : start + size]
        good = [x for x in chunk if not math.isnan(x)]
        rows.append(
            {
                "turns": f"{start + 1}-{start + len(chunk)}",
                "p50_ms": round(1000 * statistics.median(good), 1) if good else None,
                "mean_ms": round(1000 * statistics.fmean(good), 1) if good else None,
                "errors": len(chunk) - len(good),
            }
        )
    return rows


async def _growth(options: ServeOptions, workdir: Path, reporter: Reporter) -> dict[str, Any]:
    reporter.phase(f"growth · one context to {options.growth_turns} turns", options.growth_turns)
    async with (
        throwaway_database("sqlite", workdir) as database,
        _servers("smartctx", database, 1, workdir) as servers,
    ):
        await one_turn(servers[0].url, "warm-up", options.timeout)
        cpu0 = servers[0].cpu_seconds()
        latencies = await run_turns(
            servers[0].url, options.growth_turns, timeout=options.timeout, progress=reporter.advance
        )
        cpu = servers[0].cpu_seconds() - cpu0
    buckets = _buckets(latencies)
    first, last = buckets[0]["p50_ms"], buckets[-1]["p50_ms"]
    ratio = round(last / first, 2) if first and last else None
    return {
        "server": "smartctx",
        "store": "sqlite",
        "turns": options.growth_turns,
        "cpu_ms_per_turn": round(1000 * cpu / max(len(latencies), 1), 1),
        "buckets": buckets,
        "last_over_first": ratio,
    }


async def _stored_leg(
    options: ServeOptions, workdir: Path, reporter: Reporter, stored: int
) -> dict[str, Any]:
    async with throwaway_database("sqlite", workdir) as database:
        async with _servers("smartctx", database, 1, workdir) as servers:
            seed = await run_level([servers[0].url], 1, 6, warmup=0, timeout=options.timeout)
        seeder = client_owner(0)  # the seed's only client
        cloned = await clone_context(database, count=stored, owner=seeder) if stored else []
        reporter.phase(f"stored · {stored:,} contexts", 2 * options.stored_turns)
        fresh, reopened = LoadResult(1, 0.0), LoadResult(1, 0.0)
        async with (
            _servers("smartctx", database, 1, workdir) as servers,
            TurnClient(servers[0].url, options.timeout, owner=seeder) as client,
        ):
            await client.turn("warm-up")
            rng = random.Random(7)
            chosen = rng.sample(cloned, min(len(cloned), options.stored_turns))
            for i in range(options.stored_turns):
                pairs = [(fresh, f"new-{i}")]
                if i < len(chosen):
                    pairs.append((reopened, chosen[i]))
                for into, context_id in pairs:
                    latency = await client.turn(context_id)
                    if latency is None:
                        into.errors += 1
                    else:
                        into.latencies.append(latency)
                reporter.advance(2)
    return {
        "stored_contexts": stored,
        "seed_errors": seed.errors,
        "new_context_p50_ms": round(fresh.percentile_ms(0.5), 1),
        "new_context_p99_ms": round(fresh.percentile_ms(0.99), 1),
        "stored_context_p50_ms": round(reopened.percentile_ms(0.5), 1) if cloned else None,
        "stored_context_p99_ms": round(reopened.percentile_ms(0.99), 1) if cloned else None,
        "errors": fresh.errors + reopened.errors,
    }


async def run(options: ServeOptions, reporter: Reporter) -> dict[str, Any]:
    """Run the benchmark; returns ``{"settings": [...], "details": [...], "growth": {...},
    "stored": [...], "machine": {...}, "notes": [...]}``. ``settings`` has exactly the keys of
    issue 10 (server, store, processes, clients, rps, p50_ms, p99_ms, errors); ``details`` adds
    CPU per request and RSS for the same settings, in the same order."""
    if "postgresql" in options.stores and not await postgres_answers(options.postgres):
        options.stores = [s for s in options.stores if s != "postgresql"]
        options.notes.append("PostgreSQL did not answer: the PostgreSQL legs were skipped")
    out: dict[str, Any] = {"settings": [], "details": [], "growth": None, "stored": []}
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
    with contextlib.ExitStack() as stack:
        workdir = options.workdir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="smartctx-bench-serve-"))
        )
        await _matrix(options, workdir, reporter, out)
        if options.growth_turns > 0:
            out["growth"] = await _growth(options, workdir, reporter)
        if options.stored_contexts > 0:
            for stored in (0, options.stored_contexts):
                out["stored"].append(await _stored_leg(options, workdir, reporter, stored))
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
    out["machine"] = machine_info() | {"load_start": load_start, "load_end": load_end}
    out["options"] = {
        "requests": options.requests,
        "clients": list(options.clients),
        "growth_turns": options.growth_turns,
        "stored_contexts": options.stored_contexts,
    }
    out["notes"] = list(options.notes)
    return out
