"""``smartctx memory``: personal memory from the command line (compact, profile, forget...).

Works on the database the server uses (``SMARTCTX_DATABASE_URL`` or
``<SMARTCTX_DATA_DIR>/smartctx.db``). ``forget`` deletes every copy: memory tiers, window slots
and events, knowledge-base chunks and vectors, agent memory and A2A tasks, then vacuums.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table

from smartctx.cli.app import app, console, run_on_database
from smartctx.core.settings import Settings
from smartctx.memory.personal import PersonalMemory
from smartctx.service.personal_api import build_personal_memory
from smartctx.store import Database
from smartctx.store.context_log import ContextStore

T = TypeVar("T")

memory_app = typer.Typer(
    name="memory",
    help=(
        "Personal memory: tiers (pair -> session -> day -> week -> profile), profile, forget;\n"
        "long-term memories: add, search, list, get, update, delete, history, export, import.\n\n"
        "Example: smartctx memory compact --force && smartctx memory profile alice"
    ),
    no_args_is_help=True,
)
app.add_typer(memory_app)

AsJson = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


class _WindowForgetter:
    name = "context_log"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def forget_owner(self, owner: str) -> int:
        return await ContextStore(self.db).delete_owner(owner)


def _run(work: Callable[[PersonalMemory], Awaitable[T]]) -> T:
    """Run ``work`` on the configured database's personal memory (``forget`` reaches every
    store); a smartctx error exits with code 1."""
    settings = Settings()

    def with_memory(db: Database) -> Awaitable[T]:
        forgetters = [_WindowForgetter(db)]
        return work(build_personal_memory(db, settings=settings, forgetters=forgetters))

    return run_on_database(with_memory, settings=settings)


@memory_app.command()
def compact(
    owner: Annotated[str | None, typer.Option(help="one owner (default: every owner)")] = None,
    force: Annotated[bool, typer.Option(help="also roll open sessions and today")] = False,
    as_json: AsJson = False,
) -> None:
    """Roll pairs into session, daily and weekly summaries; refresh the profile; retention.

    Example: smartctx memory compact --owner alice --force
    """

    async def work(memory: PersonalMemory) -> list[dict[str, Any]]:
        owners = [owner] if owner else await memory.owners()
        out = []
        with Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), console=console
        ) as progress:
            task = progress.add_task("compacting", total=len(owners))
            for who in owners:
                [report] = await memory.compact(who, force=force)
                retained = (await memory.enforce_retention(who))[who]
                out.append(report.to_dict() | {"retention": retained})
                progress.advance(task)
        return out

    reports = _run(work)
    if as_json:
        console.print_json(json.dumps(reports))
        return
    table = Table(title="compaction")
    for column in ("owner", "sessions", "days", "weeks", "profile items", "expired"):
        table.add_column(column)
    for r in reports:
        expired = sum(r["retention"].values())
        row = (r["owner"], r["sessions"], r["days"], r["weeks"], r["profile_items"], expired)
        table.add_row(*(str(v) for v in row))
    console.print(table)


@memory_app.command()
def profile(
    owner: Annotated[str, typer.Argument(help="whose profile")],
    status: Annotated[
        str | None, typer.Option(help="candidate|confirmed|rejected|reverted")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Show profile items with status, confidence and evidence days.

    Example: smartctx memory profile alice --status confirmed
    """
    items = _run(lambda memory: memory.profile(owner, status=status))
    if as_json:
        console.print_json(json.dumps(items, ensure_ascii=False))
        return
    table = Table(title=f"profile of {owner}")
    for column in ("id", "key", "value", "status", "confidence", "evidence days", "pairs"):
        table.add_column(column)
    for i in items:
        table.add_row(
            i["id"], i["key"], i["value"], i["status"], f"{i['confidence']:.2f}",
            ", ".join(i["evidence_days"]), str(len(i["source_pair_ids"])),
        )  # fmt: skip
    console.print(table)


@memory_app.command()
def accept(
    owner: Annotated[str, typer.Argument(help="whose profile")],
    item_id: Annotated[str, typer.Argument(help="profile item id")],
) -> None:
    """Accept a profile item explicitly (it becomes confirmed).

    Example: smartctx memory accept alice 3f2a...
    """
    item = _run(lambda memory: memory.accept(owner, item_id=item_id))
    console.print(f"{item['key']} = {item['value']}: {item['status']} ({item['confidence']:.2f})")


@memory_app.command()
def wrong(
    owner: Annotated[str, typer.Argument(help="whose profile")],
    item_id: Annotated[str, typer.Argument(help="profile item id")],
) -> None:
    """Mark a profile item wrong: it is rejected and the change is audited.

    Example: smartctx memory wrong alice 3f2a...
    """
    item = _run(lambda memory: memory.mark_wrong(owner, item_id))
    console.print(f"{item['key']} = {item['value']}: {item['status']}")


@memory_app.command()
def forget(
    owner: Annotated[str, typer.Argument(help="whose data to delete")],
    item: Annotated[
        str | None, typer.Option(help="only one item: pair:<id>, profile:<id> or summary:<id>")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation")] = False,
) -> None:
    """Delete every copy of an owner's data (or of one item), then vacuum the database.

    Example: smartctx memory forget alice --yes ;  smartctx memory forget alice --item pair:p1
    """
    if item is None and not yes:
        typer.confirm(f"Delete everything of {owner!r} in every store?", abort=True)
    if item is not None:
        kind, _, item_id = item.partition(":")
        result = _run(lambda memory: memory.forget_item(owner, kind, item_id))
        console.print(f"forgot {kind} {item_id}")
        return
    result = _run(lambda memory: memory.forget_owner(owner))
    total = sum(v for v in result.values() if isinstance(v, int))
    console.print(f"forgot {owner}: {total} rows deleted ({json.dumps(result)})")
