"""``smartctx keys``: create, list and revoke the server's API keys.

Works on the database the server uses (``SMARTCTX_DATABASE_URL`` or
``<SMARTCTX_DATA_DIR>/smartctx.db``); a revoked key is refused from the next request on, even by
a running server. Only a SHA-256 digest of each key is stored: ``create`` prints the key once.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from smartctx.cli.app import app, console, run_on_database
from smartctx.service.auth.keys import APIKey, KeyStore

keys_app = typer.Typer(
    name="keys",
    help=(
        "API keys of the server (hashed at rest; a key is shown once, when created).\n\n"
        "Example: smartctx keys create --owner alice && smartctx keys list"
    ),
    no_args_is_help=True,
)
app.add_typer(keys_app)

AsJson = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]


@keys_app.command()
def create(
    owner: Annotated[
        str | None, typer.Option(help="the owner the key acts as (its memory, tasks, contexts)")
    ] = None,
    admin: Annotated[
        bool, typer.Option("--admin", help="an admin key: any owner, whole-owner operations")
    ] = False,
    name: Annotated[str, typer.Option(help="a note to recognise the key by")] = "",
    as_json: AsJson = False,
) -> None:
    """Create a key and print it (once: only its digest is stored).

    Example: smartctx keys create --owner alice --name laptop ;  smartctx keys create --admin
    """
    record, key = run_on_database(lambda db: KeyStore(db).create(owner, admin=admin, name=name))
    if as_json:
        print(json.dumps(record.to_dict() | {"key": key}))
        return
    scope = "admin" if record.admin else f"owner {record.owner}"
    console.print(f"key {record.key_id} ({scope}) created; it is shown only now:")
    print(key)
    console.print("send it as 'Authorization: Bearer <key>' or set SMARTCTX_API_KEY")


@keys_app.command("list")
def list_keys(
    all_keys: Annotated[bool, typer.Option("--all", help="include revoked keys")] = False,
    as_json: AsJson = False,
) -> None:
    """List the keys (id, owner, admin, name, created, revoked); never the keys themselves.

    Example: smartctx keys list --all --json
    """
    records: list[APIKey] = run_on_database(lambda db: KeyStore(db).list(include_revoked=all_keys))
    if as_json:
        print(json.dumps([r.to_dict() for r in records]))
        return
    table = Table(title=f"{len(records)} API keys")
    for column in ("key id", "owner", "admin", "name", "created", "revoked"):
        table.add_column(column)
    for r in records:
        table.add_row(
            r.key_id, r.owner, "yes" if r.admin else "", r.name, r.created_at, r.revoked_at or ""
        )
    console.print(table)


@keys_app.command()
def revoke(key_id: Annotated[str, typer.Argument(help="the key id shown by `keys list`")]) -> None:
    """Revoke a key: the server refuses it from the next request on.

    Example: smartctx keys revoke 3f2a9c01b7d4
    """
    record = run_on_database(lambda db: KeyStore(db).revoke(key_id))
    console.print(f"key {record.key_id} of {record.owner} revoked at {record.revoked_at}")
