"""``smartctx demo``: both seed scenarios over A2A, with per-step tables and verdicts."""

from __future__ import annotations

import typer

from smartctx.cli.app import app, console


@app.command()
def demo(
    url: str = typer.Option(
        None, help="run against this running server instead of starting one on a free port"
    ),
    api_key: str = typer.Option(
        None, "--api-key", envvar="SMARTCTX_API_KEY", help="an admin key of the server at --url"
    ),
) -> None:
    """Run both seed scenarios over A2A, print each step and the verdicts (exit 1 on a FAIL).

    Example: smartctx demo            (or: smartctx demo --url http://127.0.0.1:8000)
    """
    from smartctx.demo.runner import run_demo

    verdicts = run_demo(url, console=console, api_key=api_key)
    if not all(v.passed for v in verdicts):
        raise typer.Exit(1)
