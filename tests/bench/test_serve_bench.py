"""``smartctx bench serve``'s parts: load generator, echo process, context cloning, report."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from smartctx.bench.serve_load import (
    client_owner,
    message_text,
    one_turn,
    run_level,
    run_turns,
)
from smartctx.bench.serve_procs import server_command, start_server, throwaway_database
from smartctx.bench.serve_report import markdown, plot, rows, targets
from smartctx.bench.serve_seed import clone_context
from smartctx.core import HashingEmbedder, Settings
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.service.owner import OWNER_HEADER
from smartctx.service.server import ServerHandle, serve


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'bench.db'}"


@pytest.fixture
def server(db_url: str) -> Iterator[ServerHandle]:
    """A real smartctx server with fast offline models (hashing embedder)."""
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    kb.prepare()
    handle = serve(
        Settings(database_url=db_url), port=0, embedder=HashingEmbedder(), kb=kb, hooks=[]
    )
    yield handle
    handle.stop()


def test_messages_vary_and_are_deterministic() -> None:
    texts = {message_text(c, t) for c in range(4) for t in range(25)}
    assert len(texts) == 100
    assert message_text(3, 7) == message_text(3, 7)


def test_load_level_against_a_real_server_and_cloned_contexts(
    server: ServerHandle, db_url: str
) -> None:
    handle = server
    load = asyncio.run(run_level([handle.url], 2, 5))
    assert (load.ok, load.errors, load.clients) == (5, 0, 2)
    assert load.rps > 0 and 0 < load.percentile_ms(0.5) <= load.percentile_ms(0.99)
    assert [x == x for x in asyncio.run(run_turns(handle.url, 3))] == [True] * 3

    # the clones belong to the cloned conversation's owner, here the first client's
    owner = client_owner(0)
    ids = asyncio.run(clone_context(db_url, count=3, owner=owner))
    assert ids == ["stored-0", "stored-1", "stored-2"]
    assert set(ids) <= {c["context_id"] for c in _contexts(handle.url, owner)}
    assert not set(ids) & {c["context_id"] for c in _contexts(handle.url, client_owner(1))}
    assert asyncio.run(one_turn(handle.url, "stored-1", owner=owner)) is not None
    assert asyncio.run(one_turn("http://127.0.0.1:9", "x", timeout=2)) is None


def _contexts(url: str, owner: str) -> list[dict[str, Any]]:
    import httpx

    data: Any = httpx.get(
        f"{url}/memory/contexts", headers={OWNER_HEADER: owner}, timeout=10
    ).json()
    return list(data["contexts"] if isinstance(data, dict) else data)


def test_echo_server_process_answers_and_stops(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int, float, float, int | None]:
        async with throwaway_database("sqlite", tmp_path) as url:
            server = await start_server("echo", url, tmp_path)
            try:
                load = await run_level([server.url], 3, 6)
                cpu, rss = server.cpu_seconds(), server.rss_mb()
            finally:
                server.stop()
            return load.ok, load.errors, cpu, rss, server.process.poll()

    ok, errors, cpu, rss, code = asyncio.run(scenario())
    assert (ok, errors) == (6, 0)
    assert cpu > 0 and rss > 10
    assert code is not None


def test_unknown_server_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown server"):
        server_command("nginx", 1, "sqlite+aiosqlite:///x.db")
    assert "--no-memory" in server_command("smartctx-nomem", 1, "u")


def _result(smartctx_rps: float, errors: int = 0) -> dict[str, Any]:
    settings, details = [], []
    for server, rps in (("echo", 10.0), ("smartctx", smartctx_rps)):
        for procs in (1, 2):
            for n in (1, 8, 32):
                settings.append(
                    {
                        "server": server,
                        "store": "postgresql",
                        "processes": procs,
                        "clients": n,
                        "rps": rps * procs,
                        "p50_ms": 10.0,
                        "p99_ms": 20.0,
                        "errors": errors,
                    }
                )
                details.append({"cpu_ms_per_request": 5.0, "rss_mb": 100.0})
    growth = {"turns": 20, "cpu_ms_per_turn": 3.0, "last_over_first": 1.1, "buckets": []}
    return {
        "settings": settings,
        "details": details,
        "growth": growth,
        "stored": [],
        "machine": {"load_start": 1.0, "load_end": 1.0},
        "options": {"requests": 10},
        "notes": [],
    }


def test_targets_follow_the_figures(tmp_path: Path) -> None:
    good = {name: met for name, met, _ in targets(_result(6.0))}
    assert all(good.values()), good
    bad = {name: met for name, met, _ in targets(_result(4.0, errors=1))}
    assert bad["smartctx (memory on) >= 0.5x echo throughput at every N"] is False
    assert bad["no errors at N=32 (smartctx)"] is False
    assert rows(_result(6.0))[0]["smartctx/echo"] == 0.6


def test_report_writes_table_plot_and_json_shape(tmp_path: Path) -> None:
    result = _result(6.0)
    text = markdown(result, "smartctx bench serve --quick", "bench-serve.png")
    assert "| postgresql | 2 | 32 |" in text and "![served turns](bench-serve.png)" in text
    image = plot(result, tmp_path / "bench-serve.png")
    assert image.read_bytes()[:4] == b"\x89PNG"
    keys = {"server", "store", "processes", "clients", "rps", "p50_ms", "p99_ms", "errors"}
    assert all(set(s) == keys for s in json.loads(json.dumps(result))["settings"])


def test_owner_index_bench_reports_each_size() -> None:
    from smartctx.bench.owner_index import markdown as owner_markdown
    from smartctx.bench.owner_index import run as owner_run

    result = owner_run(sizes=(50, 100), limit_ms=1e9)
    assert [(r["items"], r["vectors"]) for r in result["rows"]] == [
        (50, False),
        (100, False),
        (50, True),
        (100, True),
    ]
    assert result["first_over_limit"] == {"lexical": None, "vectors": None}
    assert "| 100 | yes |" in owner_markdown(result, "smartctx bench owner-index")
    assert owner_run(sizes=(50,), limit_ms=0.0)["first_over_limit"]["lexical"] == 50


def test_the_matrix_runs_a_legs_servers_together_and_interleaves_them_by_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import smartctx.bench.serve as serve_bench
    from smartctx.bench.serve_load import LoadResult

    log: list[str] = []

    class Fake:
        def __init__(self, kind: str) -> None:
            self.kind, self.url = kind, f"http://{kind}"

        def cpu_seconds(self) -> float:
            return 0.0

        def rss_mb(self) -> float:
            return 1.0

        def stop(self) -> None:
            log.append(f"stop {self.kind}")

    async def start(kind: str, database: str, workdir: Path) -> Fake:
        log.append(f"start {kind}")
        return Fake(kind)

    async def level(urls: list[str], clients: int, requests: int, **_: Any) -> LoadResult:
        log.append(f"{urls[0].removeprefix('http://')} {clients}")
        return LoadResult(clients, 1.0, [0.01] * requests)

    @contextlib.asynccontextmanager
    async def database(store: str, workdir: Path, admin: str) -> AsyncIterator[str]:
        yield f"{store}://db"

    monkeypatch.setattr(serve_bench, "start_server", start)
    monkeypatch.setattr(serve_bench, "run_level", level)
    monkeypatch.setattr(serve_bench, "throwaway_database", database)

    class Quiet:
        def phase(self, description: str, total: int) -> None: ...

        def advance(self, steps: int = 1) -> None: ...

    options = serve_bench.ServeOptions(stores=("sqlite",), clients=(1, 8), requests=3)
    out: dict[str, Any] = {"settings": [], "details": []}
    asyncio.run(serve_bench._matrix(options, tmp_path, Quiet(), out))
    kinds = list(options.servers)
    assert log[: len(kinds)] == [f"start {k}" for k in kinds]  # all up before any level
    levels = [f"{k} {n}" for n in (1, 8) for k in kinds]  # the echo agent beside smartctx
    assert log[len(kinds) : len(kinds) + len(levels)] == levels
    assert sorted(log[-len(kinds) :]) == sorted(f"stop {k}" for k in kinds)
    assert [(s["server"], s["clients"]) for s in out["settings"]] == [
        (k, n) for n in (1, 8) for k in kinds
    ]
    # two processes a kind: one kind at a time (six pools would pass PostgreSQL's limit)
    log.clear()
    two = serve_bench.ServeOptions(stores=("postgresql",), clients=(1,), requests=3)
    asyncio.run(serve_bench._matrix(two, tmp_path, Quiet(), {"settings": [], "details": []}))
    paired = log[3 * len(kinds) :]  # the 2-process leg follows the 1-process one
    assert paired == [
        entry
        for k in kinds
        for entry in (f"start {k}", f"start {k}", f"{k} 1", f"stop {k}", f"stop {k}")
    ]
