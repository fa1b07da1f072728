"""The root typer application shared by every command module."""

from __future__ import annotations

import typer
from rich.console import Console

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
