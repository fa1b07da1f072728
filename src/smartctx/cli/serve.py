"""``smartctx serve``: run the A2A service (agent card, JSON-RPC, HTTP+JSON, memory API)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated

import typer

from smartctx.cli.app import app, console
from smartctx.core.errors import SmartCtxError
from smartctx.core.settings import Settings

Host = Annotated[
    str | None, typer.Option(help="interface to bind (default SMARTCTX_HOST, 127.0.0.1)")
]
Port = Annotated[
    int | None, typer.Option(help="port (default SMARTCTX_PORT, 8000; 0 picks a free one)")
]
DatabaseUrl = Annotated[
    str | None,
    typer.Option("--database", help="SQLAlchemy async URL (default: SQLite under --data-dir)"),
]
DataDir = Annotated[Path | None, typer.Option(help="folder of the default SQLite database")]
Budget = Annotated[int | None, typer.Option(help="default token budget of a new context")]
PublicUrl = Annotated[
    str | None,
    typer.Option(
        help="base URL the agent card advertises, when behind a proxy or bound to 0.0.0.0 "
        "(default SMARTCTX_PUBLIC_URL, else the bound address)"
    ),
]
SystemPrompt = Annotated[
    str | None, typer.Option(help="default pinned system prompt of a new context")
]


def settings_from(**overrides: object) -> Settings:
    """``Settings()`` (environment) with the given non-None command-line overrides."""
    return Settings().model_copy(update={k: v for k, v in overrides.items() if v is not None})


@app.command()
def serve(
    host: Host = None,
    port: Port = None,
    database: DatabaseUrl = None,
    data_dir: DataDir = None,
    budget: Budget = None,
    system_prompt: SystemPrompt = None,
    public_url: PublicUrl = None,
    memory: Annotated[
        bool,
        typer.Option(
            "--memory/--no-memory",
            help="long-term memory and recall across the threads of an owner (default contexts)",
        ),
    ] = True,
) -> None:
    """Serve the smartctx agent over A2A (JSON-RPC at /, HTTP+JSON at /rest) plus the memory API.

    Example: smartctx serve --port 8000 --database sqlite+aiosqlite:///./smartctx.db
    """
    import uvicorn

    from smartctx.service.app import create_app
    from smartctx.service.server import bind_socket
    from smartctx.service.server import public_url as bound_url

    settings = settings_from(
        host=host,
        port=port,
        database_url=database,
        data_dir=data_dir,
        budget=budget,
        system_prompt=system_prompt,
        public_url=public_url,
    )
    try:
        sock = bind_socket(settings.host, settings.port)
        url = settings.public_url or bound_url(settings.host, sock.getsockname()[1])
        service = create_app(settings, base_url=url, memory=memory)
    except SmartCtxError as err:
        console.print(f"[red]error:[/] {err.message}")
        raise typer.Exit(2) from err
    service.on_started(
        lambda: console.print(
            f"smartctx serving on [bold]{url}[/]  (agent card: {url}/.well-known/agent-card.json,"
            f" memory API docs: {url}/docs; database {settings.resolved_database_url()})"
        )
    )
    config = uvicorn.Config(
        service.asgi, log_level="info", lifespan="on", timeout_graceful_shutdown=5
    )
    # uvicorn re-raises the Ctrl-C it handled, after its graceful shutdown.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    console.print("smartctx stopped")
