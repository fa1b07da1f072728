"""``smartctx info``: the effective settings and versions."""

from __future__ import annotations

from rich.table import Table

from smartctx import __version__
from smartctx.cli.app import app, console
from smartctx.core.settings import Settings


@app.command()
def info() -> None:
    """Show the effective configuration (from SMARTCTX_* variables).

    Example: SMARTCTX_BUDGET=8000 smartctx info
    """
    settings = Settings()
    table = Table(title=f"smartctx {__version__}")
    table.add_column("setting")
    table.add_column("value")
    for name, value in settings.model_dump().items():
        shown = "***" if ("key" in name or "secret" in name) and value else str(value)
        table.add_row(name, shown)
    table.add_row("database (resolved)", settings.resolved_database_url())
    console.print(table)
