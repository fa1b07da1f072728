"""``smartctx kb``: add, list, search and remove knowledge-base documents.

Documents are stored in the database the server uses (``Settings().resolved_database_url()``,
i.e. ``SMARTCTX_DATABASE_URL`` or ``<SMARTCTX_DATA_DIR>/smartctx.db``): by default in the
organisation-wide base every owner retrieves from, with ``--owner`` in that owner's own documents
(retrieved for that owner only). A server started afterwards retrieves from them. The shipped
IT-helpdesk corpus is always present underneath (``--no-builtin`` hides it from ``list`` and
``search``).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from smartctx.cli.app import app, console, run_on_database
from smartctx.cli.progress import progress_bar
from smartctx.retrieval.chunking import content_hash
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_scopes import ORG_SCOPE
from smartctx.retrieval.kb_sources import discover, read_document
from smartctx.store import Database

kb_app = typer.Typer(
    name="kb",
    help=(
        "The knowledge base the agent retrieves from (Markdown/text, chunked by heading).\n\n"
        "Example: smartctx kb add docs/*.md && smartctx kb search 'How do I connect to the VPN?'"
    ),
    no_args_is_help=True,
)
app.add_typer(kb_app)

Owner = Annotated[
    str,
    typer.Option(
        "--owner",
        help=f"an owner's own documents (default {ORG_SCOPE}: the organisation-wide base, "
        "which every owner retrieves from)",
    ),
]
Builtin = Annotated[
    bool, typer.Option("--builtin/--no-builtin", help="include the shipped IT-helpdesk corpus")
]
AsJson = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


@kb_app.command("add")
def add(
    paths: Annotated[list[Path], typer.Argument(help="files or directories (.md, .txt)")],
    owner: Owner = ORG_SCOPE,
) -> None:
    """Add or update documents; a file whose content changed replaces its chunks.

    Example: smartctx kb add docs/handbook/ notes/printers.md --owner acme
    """

    async def work(db: Database) -> list[tuple[str, str, int]]:
        kb = KnowledgeBase(db=db, owner=owner)
        await kb.load()
        before = {d.name: d.content_hash for d in kb.documents()}
        files = discover(paths)
        rows: list[tuple[str, str, int]] = []
        with progress_bar(console) as progress:
            reading = progress.add_task("reading and chunking", total=len(files), unit="files")
            for file in files:
                name, text = read_document(file)
                chunks = kb.add_text(name, text)
                old = before.get(name)
                status = "added" if old is None else "unchanged"
                if old is not None and old != content_hash(text):
                    status = "replaced"
                rows.append((name, status, len(chunks)))
                progress.advance(reading)
            embedding = progress.add_task("embedding", total=None, unit="texts")
            texts = [0]

            def report(done: int, total: int) -> None:
                texts[0] = total
                progress.update(embedding, completed=done, total=total)

            await kb.save(progress=report)
            progress.update(embedding, total=texts[0], completed=texts[0])
        return rows

    rows = run_on_database(work)
    table = Table(title=f"knowledge base of {owner!r}")
    for column in ("document", "status", "chunks"):
        table.add_column(column)
    for name, status, count in rows:
        table.add_row(name, status, str(count))
    console.print(table)


@kb_app.command("list")
def list_documents(
    owner: Owner = ORG_SCOPE, builtin: Builtin = True, as_json: AsJson = False
) -> None:
    """List the documents: name, origin (builtin or stored), chunks and tokens.

    Example: smartctx kb list --no-builtin --json
    """

    async def work(db: Database) -> KnowledgeBase:
        return await KnowledgeBase.open(db, owner=owner, builtin=builtin)

    docs = run_on_database(work).documents()
    if as_json:
        print(json.dumps([asdict(d) for d in docs], indent=2))
        return
    table = Table(title=f"knowledge base of {owner!r}: {len(docs)} documents")
    for column in ("document", "origin", "chunks", "tokens", "sha256"):
        table.add_column(column)
    for d in docs:
        table.add_row(d.name, d.origin, str(d.chunks), str(d.tokens), d.content_hash[:12])
    console.print(table)


@kb_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="the question to retrieve for")],
    k: Annotated[int, typer.Option("-k", help="at most this many chunks", min=1)] = 3,
    owner: Owner = ORG_SCOPE,
    builtin: Builtin = True,
    full: Annotated[bool, typer.Option("--full", help="show whole chunks")] = False,
    as_json: AsJson = False,
) -> None:
    """Retrieve the most relevant chunks, or report that nothing is relevant.

    Example: smartctx kb search 'How do I get my travel expenses reimbursed?' -k 2
    """

    async def work(db: Database) -> KnowledgeBase:
        return await KnowledgeBase.open(db, owner=owner, builtin=builtin)

    kb = run_on_database(work)
    with console.status("searching (the first search embeds the documents)"):
        hits = kb.search(query, k)
    if as_json:
        print(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return
    if not hits:
        console.print("nothing relevant in the knowledge base")
        return
    table = Table(title=f"{len(hits)} relevant chunks for {query!r}")
    for column in ("source", "similarity", "bm25", "heading", "text"):
        table.add_column(column, overflow="fold")
    for h in hits:
        text = h.text if full or len(h.text) <= 160 else h.text[:157] + "..."
        table.add_row(h.source_id, f"{h.similarity:.3f}", f"{h.lexical:.2f}", h.heading, text)
    console.print(table)


@kb_app.command("remove")
def remove(
    name: Annotated[str, typer.Argument(help="document name, e.g. printers.md")],
    owner: Owner = ORG_SCOPE,
) -> None:
    """Remove a stored document and all of its chunks and vectors.

    Example: smartctx kb remove printers.md --owner acme
    """

    async def work(db: Database) -> None:
        kb = KnowledgeBase(db=db, owner=owner)
        await kb.load()
        kb.remove(name)
        await kb.save()

    run_on_database(work)
    console.print(f"removed {name} from the knowledge base of {owner!r}")
