"""Server processes and throw-away databases for ``smartctx bench serve``.

Every server the benchmark measures is a real process (``smartctx serve`` or the echo agent of
:mod:`smartctx.bench.serve_echo`) on a free loopback port, started in its own session so that
:meth:`ServerProcess.stop` ends it and anything it started, and waited for with a deadline
(never an unbounded wait). Its CPU time and resident memory are read from ``/proc``.

Databases: a SQLite file in a temporary folder, or a PostgreSQL database created for the run on
the server at ``postgres_admin`` and dropped afterwards (``WITH (FORCE)``), so nothing of a run
survives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from smartctx.service.sdk_spans import SDK_SPANS

SERVERS = ("echo", "smartctx", "smartctx-nomem")
DEFAULT_POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
START_TIMEOUT = 180.0
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_SMARTCTX = "import sys; from smartctx.cli import main; sys.argv[0] = 'smartctx'; main()"
_ONE_THREAD = {
    name: "1"
    for name in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "TF_NUM_INTRAOP_THREADS",
        "TF_NUM_INTEROP_THREADS",
    )
}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_command(kind: str, port: int, database: str) -> list[str]:
    """The command line that serves ``kind`` (one of :data:`SERVERS`) on ``port``."""
    if kind == "echo":
        args = ["-m", "smartctx.bench.serve_echo", "--port", str(port), "--database", database]
        return [sys.executable, *args]
    if kind not in SERVERS:
        raise ValueError(f"unknown server {kind!r}: choose one of {', '.join(SERVERS)}")
    memory = "--memory" if kind == "smartctx" else "--no-memory"
    args = ["serve", "--port", str(port), "--database", database, memory]
    return [sys.executable, "-c", _SMARTCTX, *args]


def _family(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc; the children of a process that exits meanwhile
    are missed)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        # a child is listed under the thread that started it
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo.extend(int(child) for child in (task / "children").read_text().split())
    return found


@dataclass
class ServerProcess:
    """One running server; ``url`` is its base URL."""

    kind: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    _cpu_mark: float = field(default=0.0)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server has used so far, its helper processes (the
        embedding model's) included (0 when /proc is missing)."""
        total = 0.0
        for pid in _family(self.process.pid):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / _CLK_TCK
        return total

    def rss_mb(self) -> float:
        """Resident set size in MB, helper processes included (0 when /proc is missing)."""
        total = 0.0
        for pid in _family(self.process.pid):
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) / 1024
            except OSError:
                continue
        return total

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the process group, then SIGKILL after ``timeout`` seconds (idempotent)."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout)


async def start_server(
    kind: str, database: str, workdir: Path, env: dict[str, str] | None = None
) -> ServerProcess:
    """Start ``kind`` on a free port over ``database`` and wait until its card answers.

    ``env`` adds to the environment (for example ``SMARTCTX_EMBEDDER``).

    Raises ``RuntimeError`` with the tail of the server's log when it exits or does not answer
    within :data:`START_TIMEOUT` seconds.
    """
    port = free_port()
    log = workdir / f"{kind}-{port}.log"
    environment = {
        **os.environ,
        **_ONE_THREAD,
        "SMARTCTX_DATA_DIR": str(workdir / f"data-{port}"),
        **(env or {}),
    }
    if kind == "echo":
        # the reference is the SDK as shipped: its spans on (smartctx turns them off unless
        # tracing is configured, see smartctx.service.sdk_spans)
        environment.setdefault(SDK_SPANS, "true")
    with log.open("wb") as out:
        process = subprocess.Popen(
            server_command(kind, port, database),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=environment,
            start_new_session=True,
        )
    server = ServerProcess(kind, f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + START_TIMEOUT
    async with httpx.AsyncClient(timeout=5.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            with contextlib.suppress(httpx.HTTPError):
                answer = await client.get(f"{server.url}/.well-known/agent-card.json")
                if answer.status_code == 200:
                    return server
            await asyncio.sleep(0.25)
    server.stop()
    tail = log.read_text(errors="replace")[-1500:]
    raise RuntimeError(f"the {kind} server did not start; its log ends with:\n{tail}")


@contextlib.asynccontextmanager
async def throwaway_database(
    store: str, workdir: Path, postgres_admin: str = DEFAULT_POSTGRES
) -> AsyncIterator[str]:
    """Yield the URL of a fresh, empty database of ``store`` (``sqlite`` or ``postgresql``)."""
    if store == "sqlite":
        path = Path(tempfile.mkdtemp(prefix="sqlite-", dir=workdir)) / "bench.db"
        yield f"sqlite+aiosqlite:///{path}"
        return
    name = f"smartctx_bench_{uuid.uuid4().hex[:12]}"
    base, _, _db = postgres_admin.rpartition("/")
    admin = await _admin(postgres_admin, 10)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield f"{base}/{name}"
    finally:
        admin = await _admin(postgres_admin, 10)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


async def postgres_answers(postgres_admin: str = DEFAULT_POSTGRES) -> bool:
    """Whether the PostgreSQL server at ``postgres_admin`` accepts a connection within 3 s."""
    try:
        conn = await _admin(postgres_admin, 3)
    except Exception:
        return False
    await conn.close()
    return True


async def _admin(postgres_admin: str, timeout: float) -> Any:
    """A raw asyncpg connection to the maintenance database (CREATE/DROP DATABASE)."""
    import asyncpg  # type: ignore[import-untyped]

    dsn = postgres_admin.replace("postgresql+asyncpg://", "postgresql://")
    return await asyncio.wait_for(asyncpg.connect(dsn), timeout)
