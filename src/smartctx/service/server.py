"""Run the service: ``serve(...) -> ServerHandle`` (a background thread) and ``serve_async``.

The listening socket is bound *before* the app is built, so ``port=0`` (an ephemeral port)
works and the agent card names the real URL. ``ServerHandle.url`` is ready when ``serve``
returns: the database is migrated and the socket accepts connections. ``stop()`` is graceful:
live SSE streams are closed, in-flight requests finish (up to ``grace`` seconds), then the
database is closed. Both handles are context managers.

``serve`` runs uvicorn in its own thread with its own event loop, so it may be called from
synchronous code *or* from inside a running loop (tests, notebooks) without ``asyncio.run``
inside that loop. ``serve_async`` runs the server as a task of the caller's loop.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import uvicorn

from smartctx.core.errors import ConfigError
from smartctx.core.settings import Settings
from smartctx.service.app import ServiceApp, create_app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket whose accepted connections have ``TCP_NODELAY`` on.

    The socket is created with protocol ``IPPROTO_TCP`` (not 0): asyncio turns Nagle's algorithm
    off only on transports whose socket says TCP, and accepted sockets inherit the protocol.
    Without it every small response can wait for a delayed ACK (about 40 ms).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {err.strerror}; choose another --port (0 picks a "
            "free one)",
            host=host,
            port=port,
        ) from err
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def public_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    return f"http://{shown}:{port}"


@dataclass
class _Prepared:
    sock: socket.socket
    url: str
    app: ServiceApp
    server: uvicorn.Server


def _prepare(
    settings: Settings | None,
    host: str | None,
    port: int | None,
    grace: float,
    app_kwargs: dict[str, Any],
) -> _Prepared:
    settings = settings or Settings()
    host = host or settings.host
    port = settings.port if port is None else port
    settings = settings.model_copy(update={"host": host})  # auth defaults follow the bound host
    sock = bind_socket(host, port)
    url = public_url(host, sock.getsockname()[1])
    app = create_app(settings, base_url=url, **app_kwargs)
    config = uvicorn.Config(
        app.asgi,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=max(1, int(grace)),
    )
    return _Prepared(sock=sock, url=url, app=app, server=uvicorn.Server(config))


@dataclass
class ServerHandle:
    """A server running on a background thread. ``url`` is its base URL (no trailing slash)."""

    url: str
    app: ServiceApp
    _server: uvicorn.Server
    _thread: threading.Thread
    _loop: list[asyncio.AbstractEventLoop] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self, timeout: float = 15.0) -> None:
        """Stop gracefully and wait for the thread (idempotent)."""
        if self._loop and self._thread.is_alive():
            self._loop[0].call_soon_threadsafe(self.app.begin_shutdown)
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def serve(
    settings: Settings | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    grace: float = 5.0,
    **app_kwargs: Any,
) -> ServerHandle:
    """Start the A2A service on a background thread and return once it accepts requests.

    ``app_kwargs`` go to :func:`~smartctx.service.app.create_app` (``model``, ``hooks``, ``kb``,
    ``embedder``, ``counter``, ``providers``...). ``port=0`` picks a free port; read it from
    ``handle.url``. Raises ``ConfigError`` when the address is taken and re-raises any start-up
    failure (for example a database that cannot be migrated).
    """
    prepared = _prepare(settings, host, port, grace, app_kwargs)
    ready = threading.Event()
    failure: list[BaseException] = []
    loops: list[asyncio.AbstractEventLoop] = []

    async def _main() -> None:
        loops.append(asyncio.get_running_loop())
        prepared.app.on_started(ready.set)
        await prepared.server.serve(sockets=[prepared.sock])

    def _run() -> None:
        try:
            asyncio.run(_main())
        except BaseException as err:
            failure.append(err)
        finally:
            prepared.sock.close()
            ready.set()

    thread = threading.Thread(target=_run, name=f"smartctx-serve-{prepared.url}", daemon=True)
    thread.start()
    ready.wait()
    if failure or (not prepared.server.started and not thread.is_alive()):
        thread.join(5)
        if failure:
            raise failure[0]
        if prepared.app.startup_error is not None:
            raise prepared.app.startup_error
        raise ConfigError(f"the server at {prepared.url} failed to start; see the log above")
    return ServerHandle(prepared.url, prepared.app, prepared.server, thread, loops)


@dataclass
class AsyncServerHandle:
    """A server running as a task of the caller's event loop."""

    url: str
    app: ServiceApp
    _server: uvicorn.Server
    _task: asyncio.Task[None]

    async def stop(self) -> None:
        """Stop gracefully and wait for the server task (idempotent)."""
        self.app.begin_shutdown()
        self._server.should_exit = True
        await asyncio.shield(self._task)

    async def __aenter__(self) -> AsyncServerHandle:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


async def serve_async(
    settings: Settings | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    grace: float = 5.0,
    **app_kwargs: Any,
) -> AsyncServerHandle:
    """Like :func:`serve`, but the server runs in the current event loop."""
    prepared = _prepare(settings, host, port, grace, app_kwargs)
    started = asyncio.Event()
    prepared.app.on_started(started.set)

    async def _run() -> None:
        try:
            await prepared.server.serve(sockets=[prepared.sock])
        finally:
            prepared.sock.close()
            started.set()

    task = asyncio.create_task(_run(), name=f"smartctx-serve-{prepared.url}")
    await started.wait()
    if task.done():
        await task
        if prepared.app.startup_error is not None:
            raise prepared.app.startup_error
        raise ConfigError(f"the server at {prepared.url} failed to start; see the log above")
    return AsyncServerHandle(prepared.url, prepared.app, prepared.server, task)
