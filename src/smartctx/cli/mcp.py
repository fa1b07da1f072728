"""``smartctx mcp``: the memory as MCP tools, over stdio or streamable HTTP (``--http``).

Over stdio, stdout is the MCP channel, so everything this command says goes to stderr; over
HTTP the endpoint's URL is the first line on stderr.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import typer
from rich.console import Console

from smartctx.cli.app import app
from smartctx.core.errors import SmartCtxError
from smartctx.core.settings import Settings

err_console = Console(stderr=True)


@contextlib.contextmanager
def _backend(url: str | None, database: str | None) -> Iterator[str]:
    """The URL of the smartctx server to use: ``url``, or a private server on ``database``."""
    if url is not None:
        yield url
        return
    if database is None:
        settings = Settings()
        host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
        yield (
            f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"
        )
        return
    from smartctx.service.server import serve

    settings = Settings().model_copy(update={"database_url": database})
    with serve(settings, host="127.0.0.1", port=0) as handle:
        err_console.print(f"smartctx mcp: private server {handle.url} on {database}")
        yield handle.url


def _serve_http(server: Any, host: str, port: int) -> None:
    """Serve ``server`` over streamable HTTP at ``http://host:port/mcp`` until interrupted."""
    import uvicorn

    from smartctx.service.server import bind_socket, public_url

    sock = bind_socket(host, port)
    url = f"{public_url(host, sock.getsockname()[1])}/mcp"
    print(f"smartctx mcp: streamable HTTP at {url}", file=sys.stderr, flush=True)
    config = uvicorn.Config(server.streamable_http_app(host=host), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


@app.command()
def mcp(
    url: str = typer.Option(
        None, help="smartctx server base URL (default: SMARTCTX_HOST:SMARTCTX_PORT)"
    ),
    database: str = typer.Option(
        None,
        "--database",
        help="instead of --url: run a private server on this SQLAlchemy async URL",
    ),
    owner: str = typer.Option(
        None, help="owner the tools act as (X-Smartctx-Owner); default: the key's, else 'default'"
    ),
    api_key: str = typer.Option(
        None, "--api-key", envvar="SMARTCTX_API_KEY", help="API key or JWT of the server"
    ),
    transport: str = typer.Option("jsonrpc", help="A2A binding for the ask tool: jsonrpc or rest"),
    http: bool = typer.Option(False, "--http", help="serve streamable HTTP instead of stdio"),
    host: str = typer.Option("127.0.0.1", help="with --http: the address to listen on"),
    port: int = typer.Option(8001, help="with --http: the port (0 picks a free one)"),
) -> None:
    """Serve the smartctx memory as MCP tools, resources and prompts over stdio (or streamable
    HTTP with --http), for any MCP client: memories (add, search, get, list, update, delete,
    history, export, import), contexts (create, snapshot, prompt, add_slot, assemble_prompt,
    ask), profile, pairs, forget, knowledge-base search and ingest.

    Example: smartctx mcp --url http://127.0.0.1:8000

    Example: SMARTCTX_API_KEY=sctx_... smartctx mcp --url https://ctx.example.com

    Example: smartctx mcp --url http://127.0.0.1:8000 --http --port 8001

    Example: smartctx mcp --database sqlite+aiosqlite:///./smartctx.db

    Example MCP client entry: {"command": "smartctx", "args": ["mcp", "--url",
    "http://127.0.0.1:8000"]}
    """
    if url is not None and database is not None:
        raise typer.BadParameter("give --url or --database, not both")
    if transport not in ("jsonrpc", "rest"):
        raise typer.BadParameter("--transport must be jsonrpc or rest")
    from smartctx.service.mcp_server import create_mcp_server

    try:
        with _backend(url, database) as base:
            server = create_mcp_server(
                base,
                owner=owner,
                api_key=api_key,
                transport="rest" if transport == "rest" else "jsonrpc",
            )
            if http:
                _serve_http(server, host, port)
            else:
                server.run("stdio")
    except SmartCtxError as err:
        err_console.print(f"[red]error:[/] {err.message}")
        raise typer.Exit(2) from err
