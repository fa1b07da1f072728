"""The root typer application shared by every command module, and ``run_on_database``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
from rich.console import Console

from smartctx.cli.errors import fail
from smartctx.core.errors import SmartCtxError
from smartctx.core.settings import Settings
from smartctx.store import Database

T = TypeVar("T")

console = Console()

app = typer.Typer(
    name="smartctx",
    help=(
        "smartctx: a context-memory engine for LLM agents, served over A2A.\n\n"
        "Examples:\n\n"
        "  smartctx demo                      # both seed scenarios through a local A2A server\n\n"
        "  smartctx serve --port 8000         # serve the memory-backed agent\n\n"
        "  smartctx client 'How do I connect to the VPN?'\n\n"
        "  smartctx kb add docs/*.md          # add documents to the knowledge base\n\n"
        "  smartctx bench window --json out/window.json\n\n"
        "  smartctx simulate --compare --runs 5"
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """smartctx: a context-memory engine for LLM agents, served over A2A."""


def run_on_database(
    work: Callable[[Database], Awaitable[T]], *, settings: Settings | None = None
) -> T:
    """Run ``work`` on the migrated configured database, closed afterwards.

    The database is ``settings.resolved_database_url()`` (the one the server uses). A smartctx
    error is printed as one line ``error: code: message`` and exits with code 1.
    """

    async def main() -> T:
        chosen = settings or Settings()
        db = Database(chosen.resolved_database_url(), pool_size=chosen.db_pool_size)
        try:
            await db.migrate()
            return await work(db)
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except SmartCtxError as err:
        fail(f"{err.code}: {err.message}")
