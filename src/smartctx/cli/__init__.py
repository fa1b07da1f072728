"""The ``smartctx`` command line: a thin typer layer over the library.

Each command group lives in its own module and registers itself on ``app`` when imported.
"""

from __future__ import annotations

from collections.abc import Sequence

# First: importing the service imports the a2a-sdk with its spans off (service/sdk_spans.py).
import smartctx.service  # noqa: F401  # isort: skip
from smartctx.cli.app import app, console  # isort: skip
from smartctx.cli.errors import run

# Command modules register themselves on import (one line each, in help order).
from smartctx.cli import info as _info  # noqa: F401  # isort: skip
from smartctx.cli import demo as _demo  # noqa: F401  # isort: skip
from smartctx.cli import serve as _serve  # noqa: F401  # isort: skip
from smartctx.cli import client as _client  # noqa: F401  # isort: skip
from smartctx.cli import status as _status  # noqa: F401  # isort: skip
from smartctx.cli import memory as _memory  # noqa: F401  # isort: skip
from smartctx.cli import memories as _memories  # noqa: F401  # isort: skip
from smartctx.cli import bench as _bench  # noqa: F401  # isort: skip
from smartctx.cli import bench_locomo as _bench_locomo  # noqa: F401  # isort: skip
from smartctx.cli import bench_serve as _bench_serve  # noqa: F401  # isort: skip
from smartctx.cli import bench_answers as _bench_answers  # noqa: F401  # isort: skip
from smartctx.cli import simulate as _simulate  # noqa: F401  # isort: skip
from smartctx.cli import kb as _kb  # noqa: F401  # isort: skip
from smartctx.cli import mcp as _mcp  # noqa: F401  # isort: skip
from smartctx.cli import keys as _keys  # noqa: F401  # isort: skip


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: exits with the command's code; a failure is one line on
    stderr (see :mod:`smartctx.cli.errors`)."""
    import typer

    raise SystemExit(run(typer.main.get_command(app), argv))


__all__ = ["app", "console", "main"]
