"""``smartctx client``: send a message to a smartctx (or any A2A) server and show the reply."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from smartctx.cli.app import app, console
from smartctx.cli.errors import fail
from smartctx.service.client import SmartctxClient, smartctx_info, smartctx_options


def _snapshot_table(snapshot: dict[str, Any]) -> Table:
    table = Table(
        title=f"memory: {snapshot.get('tokens_used')}/{snapshot.get('budget')} tokens, "
        f"version {snapshot.get('version')}",
        title_justify="left",
        min_width=44,  # the title on one line
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
    owner: str = typer.Option(
        None, help="owner (X-Smartctx-Owner); default: the key's owner, else 'default'"
    ),
    api_key: str = typer.Option(
        None, "--api-key", envvar="SMARTCTX_API_KEY", help="API key or JWT of the server"
    ),
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
    if owner is None and not api_key:
        owner = "default"
    asyncio.run(_run(message, url, context, owner, api_key, transport, stream, metadata, as_json))


async def _run(
    message: str,
    url: str,
    context: str | None,
    owner: str | None,
    api_key: str | None,
    transport: str,
    stream: bool,
    metadata: dict[str, Any] | None,
    as_json: bool,
) -> None:
    async with SmartctxClient(url, owner=owner, api_key=api_key, transport=transport) as api:  # type: ignore[arg-type]
        if stream:
            await _stream(api, message, context, metadata, as_json)
            return
        reply = await api.send(message, context_id=context, metadata=metadata)
    if as_json:
        print(json.dumps(reply.__dict__, ensure_ascii=False))
    if reply.state != "completed":
        fail(reply.text or f"the task ended {reply.state}")
    if as_json:
        return
    console.print(f"[bold]agent:[/] {escape(reply.text)}")
    shown = [e for e in reply.events if e["kind"] not in ("admitted", "unpinned")]
    console.print(
        f"events: admitted x{sum(e['kind'] == 'admitted' for e in reply.events)}"
        + "".join(f"; {e['kind']} {e.get('slot_kind', '')} {e['slot_id'][:8]}" for e in shown)
    )
    console.print(_snapshot_table(reply.snapshot))
    console.print(f"context: {reply.context_id}  (task {reply.task_id}, {reply.state})")


async def _stream(
    api: SmartctxClient,
    message: str,
    context: str | None,
    metadata: dict[str, Any] | None,
    as_json: bool,
) -> None:
    """Print the events as they come (reply chunks inline); a failed task exits 1."""
    last = None
    async for event in api.stream(message, context_id=context, metadata=metadata):
        last = event
        if as_json:
            print(json.dumps(event.__dict__, ensure_ascii=False), flush=True)
        elif event.kind == "artifact":
            if not event.append:
                console.print("[bold]agent:[/] ", end="")
            console.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
            if event.last_chunk or event.metadata:
                console.print()
            snapshot = smartctx_info(event.metadata).get("snapshot")
            if snapshot:
                console.print(_snapshot_table(snapshot))
        elif not event.final:
            console.print(f"[dim]{event.kind}[/] {event.state or ''} {escape(event.text)}".rstrip())
    if last is None or last.state != "completed":
        fail((last.text if last else "") or "the task did not complete")
    if not as_json:
        console.print(f"context: {last.context_id}  ({last.state})")
