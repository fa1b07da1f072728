"""``smartctx memory add|search|get|list|update|delete|history|export|import``: long-term
memories from the command line, on the database the server uses, through the same service
layer as the HTTP API and MCP (:class:`~smartctx.service.memories.MemoryService`).

A running server sees what these commands write: it follows the store by ``seq`` before each
search and each recall.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from smartctx.cli.app import console, run_on_database
from smartctx.cli.memory import memory_app
from smartctx.core.embeddings import get_embedder
from smartctx.core.settings import Settings
from smartctx.service.memories import Memory, MemoryFilter, MemoryService
from smartctx.service.memories.transfer import export_jsonl, import_jsonl
from smartctx.store import Database

T = TypeVar("T")

OwnerOpt = Annotated[str, typer.Option("--owner", help="whose memories (mem0's user_id)")]
AgentOpt = Annotated[str | None, typer.Option("--agent-id", help="agent scope")]
SessionOpt = Annotated[
    str | None, typer.Option("--session-id", "--run-id", help="session scope (a context id)")
]
KindOpt = Annotated[str | None, typer.Option("--kind", help="fact, turn, note...")]
AsJson = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


def _run(work: Callable[[MemoryService], Awaitable[T]]) -> T:
    settings = Settings()
    name = settings.retrieval_embedder

    def with_service(db: Database) -> Awaitable[T]:
        return work(MemoryService(db, embedder=lambda: get_embedder(name)))

    return run_on_database(with_service, settings=settings)


def _metadata(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as err:
        raise typer.BadParameter(f"--metadata must be a JSON object: {err.msg}") from err
    if not isinstance(value, dict):
        raise typer.BadParameter("--metadata must be a JSON object")
    return value


def _table(title: str, rows: list[dict[str, Any]], *, score: bool = False) -> None:
    table = Table(title=title)
    columns = ["id", "memory", "kind", "agent", "session", "version", "created"]
    for column in ["score", *columns] if score else columns:
        table.add_column(column, overflow="fold")
    for r in rows:
        cells = [
            r["id"],
            r["memory"],
            r["kind"],
            r["agent_id"] or "",
            r["session_id"] or "",
            str(r["version"]),
            r["created_at"] or "",
        ]
        table.add_row(*([f"{r['score']:.4f}", *cells] if score else cells))
    console.print(table)


def _print(rows: list[dict[str, Any]], title: str, as_json: bool, *, score: bool = False) -> None:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        _table(title, rows, score=score)


@memory_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="what to remember")],
    owner: OwnerOpt = "default",
    agent_id: AgentOpt = None,
    session_id: SessionOpt = None,
    kind: KindOpt = None,
    metadata: Annotated[str | None, typer.Option(help="JSON object")] = None,
    as_json: AsJson = False,
) -> None:
    """Remember a text (redacted; stored once per scope).

    Example: smartctx memory add 'I prefer aisle seats.' --owner alice --agent-id travel
    """
    meta = _metadata(metadata)
    results = _run(
        lambda s: s.remember(
            owner, text, kind=kind, agent_id=agent_id, session_id=session_id, metadata=meta
        )
    )
    rows = [m.to_dict() | {"event": event} for m, event in results]
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    for row in rows:
        console.print(f"{row['event']} {row['id']}: {escape(str(row['memory']))}")


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="what to look for")],
    owner: OwnerOpt = "default",
    agent_id: AgentOpt = None,
    session_id: SessionOpt = None,
    kind: KindOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, max=1000)] = 10,
    as_json: AsJson = False,
) -> None:
    """Hybrid search (BM25 + vectors) of the owner's memories, with scores.

    Example: smartctx memory search 'seat preference' --owner alice --json
    """
    flt = MemoryFilter.of(agent_id=agent_id, session_id=session_id, kind=kind)
    with console.status("searching (the first search embeds the memories)"):
        found = _run(lambda s: s.search(owner, query, flt, limit=limit))
    rows = [m.to_dict(r.score) | r.scores() for m, r in found]
    _print(rows, f"{len(rows)} memories for {query!r}", as_json, score=True)


@memory_app.command("list")
def list_memories(
    owner: OwnerOpt = "default",
    agent_id: AgentOpt = None,
    session_id: SessionOpt = None,
    kind: KindOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
    cursor: Annotated[int, typer.Option(min=0, help="next_cursor of the previous page")] = 0,
    as_json: AsJson = False,
) -> None:
    """List the owner's memories, least recently written first (mem0's get_all).

    Example: smartctx memory list --owner alice --agent-id travel
    """
    flt = MemoryFilter.of(agent_id=agent_id, session_id=session_id, kind=kind)
    page, after = _run(lambda s: s.get_all(owner, flt, limit=limit, cursor=cursor))
    rows = [m.to_dict() for m in page]
    if as_json:
        print(json.dumps({"results": rows, "next_cursor": after}, ensure_ascii=False, indent=2))
        return
    _table(f"memories of {owner!r}", rows)
    if after is not None:
        console.print(f"more: --cursor {after}")


def _one(memory: Memory, as_json: bool) -> None:
    row = memory.to_dict()
    if as_json:
        print(json.dumps(row, ensure_ascii=False, indent=2))
    else:
        _table(f"memory {memory.id}", [row])


@memory_app.command("get")
def get(
    memory_id: Annotated[str, typer.Argument(help="memory id")],
    owner: OwnerOpt = "default",
    as_json: AsJson = False,
) -> None:
    """Show one memory.

    Example: smartctx memory get 3f2a... --owner alice --json
    """
    _one(_run(lambda s: s.get(owner, memory_id)), as_json)


@memory_app.command("update")
def update(
    memory_id: Annotated[str, typer.Argument(help="memory id")],
    text: Annotated[str | None, typer.Argument(help="the new text")] = None,
    owner: OwnerOpt = "default",
    metadata: Annotated[str | None, typer.Option(help="new metadata (JSON object)")] = None,
    as_json: AsJson = False,
) -> None:
    """Change a memory's text and/or metadata; the old values stay in its history.

    Example: smartctx memory update 3f2a... 'I prefer window seats.' --owner alice
    """
    meta = _metadata(metadata)
    _one(_run(lambda s: s.update(owner, memory_id, text=text, metadata=meta)), as_json)


@memory_app.command("delete")
def delete(
    memory_id: Annotated[str | None, typer.Argument(help="memory id")] = None,
    owner: OwnerOpt = "default",
    every: Annotated[bool, typer.Option("--all", help="every memory in the scope")] = False,
    agent_id: AgentOpt = None,
    session_id: SessionOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation")] = False,
) -> None:
    """Delete one memory, or with --all every memory of the owner in a scope.

    Example: smartctx memory delete 3f2a... ;  smartctx memory delete --all --agent-id travel --yes
    """
    if every == (memory_id is not None):
        raise typer.BadParameter("give a memory id or --all, not both")
    if memory_id is not None:
        gone = _run(lambda s: s.delete(owner, memory_id))
        console.print(f"deleted {gone.id}: {escape(gone.text)}")
        return
    if not yes:
        typer.confirm(f"Delete every memory of {owner!r} in this scope?", abort=True)
    flt = MemoryFilter.of(agent_id=agent_id, session_id=session_id)
    count = _run(lambda s: s.delete_all(owner, flt))
    console.print(f"deleted {count} memories of {owner!r}")


@memory_app.command("history")
def history(
    memory_id: Annotated[str, typer.Argument(help="memory id")],
    owner: OwnerOpt = "default",
    as_json: AsJson = False,
) -> None:
    """The changes of one memory, oldest first (ADD, UPDATE, DELETE, IMPORT).

    Example: smartctx memory history 3f2a... --owner alice
    """
    entries = _run(lambda s: s.history(owner, memory_id))
    if as_json:
        print(json.dumps(entries, ensure_ascii=False, indent=2))
        return
    table = Table(title=f"history of {memory_id}")
    for column in ("event", "at", "old", "new"):
        table.add_column(column, overflow="fold")
    for e in entries:
        table.add_row(
            e["event"], e["created_at"] or "", e["old_memory"] or "", e["new_memory"] or ""
        )
    console.print(table)


@memory_app.command("export")
def export(
    owner: OwnerOpt = "default",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="file (default: stdout)")] = None,
) -> None:
    """Write the owner's memories as JSON Lines, with history and provenance.

    Example: smartctx memory export --owner alice -o alice.jsonl
    """

    async def work(service: MemoryService) -> list[str]:
        return [line async for line in export_jsonl(service, owner)]

    lines = _run(work)
    if out is None:
        sys.stdout.write("".join(lines))
        return
    out.write_text("".join(lines), encoding="utf-8")
    console.print(f"exported {len(lines)} memories of {owner!r} to {out}")


@memory_app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="a JSON Lines export", exists=True, dir_okay=False)],
    owner: OwnerOpt = "default",
) -> None:
    """Import an export into the owner's memories (atomic; ids kept).

    A second import of the same file adds nothing; a bad line rejects the whole file.

    Example: smartctx memory import alice.jsonl --owner bob
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    result = _run(lambda s: import_jsonl(s, owner, lines))
    console.print(f"imported {result['imported']}, skipped {result['skipped']} (already there)")
