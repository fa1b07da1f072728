"""``smartctx info``: the effective settings and versions."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from smartctx import __version__
from smartctx.cli.app import app, console
from smartctx.core.settings import Settings


@app.command()
def info(
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
) -> None:
    """Show the effective configuration (from SMARTCTX_* variables).

    Example: SMARTCTX_BUDGET=8000 smartctx info --json
    """
    settings = Settings()
    values = {
        name: "***" if ("key" in name or "secret" in name) and value else value
        for name, value in settings.model_dump(mode="json").items()
    }
    values["database_resolved"] = settings.resolved_database_url()
    if as_json:
        print(json.dumps({"version": __version__, "settings": values}, indent=2))
        return
    table = Table(title=f"smartctx {__version__}")
    table.add_column("setting")
    table.add_column("value")
    for name, value in values.items():
        table.add_row(name, str(value))
    console.print(table)
