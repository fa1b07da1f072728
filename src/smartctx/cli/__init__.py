"""The ``smartctx`` command line: a thin typer layer over the library.

Each command group lives in its own module and registers itself on ``app`` when imported.
"""

from __future__ import annotations

from smartctx.cli.app import app, console

# Command modules register themselves on import (one line each, in help order).
from smartctx.cli import info as _info  # noqa: F401  # isort: skip


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["app", "console", "main"]
