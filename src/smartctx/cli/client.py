"""``smartctx client``: send a message to a smartctx (or any A2A) server and show the reply."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer
from rich.table import Table

from smartctx.cli.app import app, console
from smartctx.service.client import SmartctxClient, smartctx_info, smartctx_options


def _snapshot_table(snapshot: dict[str, Any]) -> Table:
    table = Table(
        title=f"memory: {snapshot.get('tokens_used')}/{snapshot.get('budget')} tokens, "
        f"version {snapshot.get('version')}",
        title_justify="left",
    )
    table.add_column("kind")
    table.add_column("active slots", justify="right")
    for kind, count in (snapshot.get("counts") or {}).items():
        table.add_row(kind, str(count))
    return table


@app.command()
def client(
    message: str = typer.Argument(..., help="the message to send"),
    url: str = typer.Option("http://127.0.0.1:8000", help="server base URL"),
    context: str = typer.Option(None, "--context", "-c", help="contextId to continue"),
    owner: str = typer.Option("default", help="owner (X-Smartctx-Owner header)"),
    transport: str = typer.Option("jsonrpc", help="jsonrpc or rest"),
    stream: bool = typer.Option(False, "--stream", help="stream the task events over SSE"),
    preset: str = typer.Option(None, help="window preset of a NEW context"),
    budget: int = typer.Option(None, help="token budget of a NEW context"),
    as_json: bool = typer.Option(False, "--json", help="print the reply as JSON"),
) -> None:
    """Send MESSAGE over A2A and print the reply, the memory events and the snapshot.

    Example: smartctx client 'How do I connect to the VPN?' --context demo-1 --stream
    """
    metadata = smartctx_options(preset=preset, budget=budget) or None
    if transport not in ("jsonrpc", "rest"):
        raise typer.BadParameter("--transport must be jsonrpc or rest")
    asyncio.run(_run(message, url, context, owner, transport, stream, metadata, as_json))


async def _run(
    message: str,
    url: str,
    context: str | None,
    owner: str,
    transport: str,
    stream: bool,
    metadata: dict[str, Any] | None,
    as_json: bool,
) -> None:
    async with SmartctxClient(url, owner=owner, transport=transport) as api:  # type: ignore[arg-type]
        if stream:
            async for event in api.stream(message, context_id=context, metadata=metadata):
                label = f"[dim]{event.kind}[/] {event.state or ''}"
                console.print(f"{label} {event.text}".rstrip())
                info = smartctx_info(event.metadata)
                if info:
                    console.print(_snapshot_table(info.get("snapshot", {})))
                if event.final:
                    console.print(f"context: {event.context_id}")
            return
        reply = await api.send(message, context_id=context, metadata=metadata)
    if as_json:
        console.print_json(json.dumps(reply.__dict__))
        return
    console.print(f"[bold]agent:[/] {reply.text}")
    shown = [e for e in reply.events if e["kind"] not in ("admitted", "unpinned")]
    console.print(
        f"events: admitted x{sum(e['kind'] == 'admitted' for e in reply.events)}"
        + "".join(f"; {e['kind']} {e.get('slot_kind', '')} {e['slot_id'][:8]}" for e in shown)
    )
    console.print(_snapshot_table(reply.snapshot))
    console.print(f"context: {reply.context_id}  (task {reply.task_id}, {reply.state})")
