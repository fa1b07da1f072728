"""``smartctx serve``: run the A2A service (agent card, JSON-RPC, HTTP+JSON, memory API)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from smartctx.cli.app import app, console
from smartctx.cli.errors import fail
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
    auth: Annotated[
        bool | None,
        typer.Option(
            "--auth/--no-auth",
            help="require an API key or JWT (default: on unless bound to loopback)",
        ),
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option(
            "--log-format", help="text or json: one JSON object per log line (SMARTCTX_LOG_FORMAT)"
        ),
    ] = None,
) -> None:
    """Serve the smartctx agent over A2A (JSON-RPC at /, HTTP+JSON at /rest) plus the memory API,
    the OpenAI-compatible proxy at /v1, /ui, /healthz, /readyz and /metrics.

    Example: smartctx serve --port 8000 --database sqlite+aiosqlite:///./smartctx.db

    Example: smartctx keys create --owner alice && smartctx serve --host 0.0.0.0   (auth is on)

    Example: smartctx serve --port 8000 --log-format json
    """
    import logging

    import uvicorn

    from smartctx.service.app import create_app, freeze_start_up
    from smartctx.service.auth import auth_required
    from smartctx.service.ops import configure_logging
    from smartctx.service.server import bind_socket
    from smartctx.service.server import public_url as bound_url

    if log_format not in (None, "text", "json"):
        raise typer.BadParameter("--log-format must be text or json")

    settings = settings_from(
        host=host,
        port=port,
        database_url=database,
        data_dir=data_dir,
        budget=budget,
        system_prompt=system_prompt,
        auth=auth,
        log_format=log_format,
        public_url=public_url,
    )
    json_logs = settings.log_format == "json"
    configure_logging(settings.log_format)
    try:
        sock = bind_socket(settings.host, settings.port)
        url = settings.public_url or bound_url(settings.host, sock.getsockname()[1])
        service = create_app(settings, base_url=url, memory=memory)
    except SmartCtxError as err:
        fail(err.message, 2)
    access = (
        "credentials required (smartctx keys create)"
        if auth_required(settings)
        else "no authentication: loopback, one local user"
    )
    started = (
        f"smartctx serving on {url}  (agent card: {url}/.well-known/agent-card.json, memory API "
        f"docs: {url}/docs, OpenAI-compatible API: {url}/v1; database "
        f"{settings.resolved_database_url()}); {access}"
    )
    if json_logs:
        service.on_started(lambda: logging.getLogger("smartctx.serve").info(started))
    else:
        service.on_started(lambda: console.print(started, highlight=False))
    service.on_started(freeze_start_up)
    # log_config=None: uvicorn's loggers go through the handler configure_logging installed.
    config = uvicorn.Config(
        service.asgi, log_level="info", lifespan="on", timeout_graceful_shutdown=5, log_config=None
    )
    # uvicorn re-raises the Ctrl-C it handled, after its graceful shutdown. Its own runner picks
    # the event loop and HTTP parser ("auto": uvloop and httptools, both dependencies); asyncio's
    # loop and h11 cost a served turn several milliseconds more on the event loop.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    if json_logs:
        logging.getLogger("smartctx.serve").info("smartctx stopped")
    else:
        console.print("smartctx stopped")
