"""``smartctx bench serve``: served turns under load against an a2a-sdk echo agent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from smartctx.cli.app import console
from smartctx.cli.bench import bench_app


class _Bars:
    """A rich progress bar per phase of the run."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None

    def phase(self, description: str, total: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.progress.tasks[-1].total)
        self.task = self.progress.add_task(description, total=total)

    def advance(self, steps: int = 1) -> None:
        if self.task is not None:
            self.progress.advance(self.task, steps)


def _without_outputs(args: list[str]) -> list[str]:
    """The command-line arguments without ``--json``/``--docs`` and their paths."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("--json", "--docs"):
            skip = True
        elif not arg.startswith(("--json=", "--docs=")):
            out.append(arg)
    return out


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


@bench_app.command("serve")
def serve(
    quick: Annotated[
        bool, typer.Option(help="a short run: 24 requests per level, 60-turn growth, 1,000 stored")
    ] = False,
    clients: Annotated[str, typer.Option(help="concurrent clients per level")] = "1,8,32",
    requests: Annotated[int | None, typer.Option(help="timed requests per level")] = None,
    servers: Annotated[
        str, typer.Option(help="servers: echo, smartctx, smartctx-nomem")
    ] = "echo,smartctx,smartctx-nomem",
    stores: Annotated[str, typer.Option(help="stores: sqlite, postgresql")] = "sqlite,postgresql",
    two_process: Annotated[
        bool, typer.Option("--two-process/--no-two-process", help="the 2-process PostgreSQL leg")
    ] = True,
    growth: Annotated[
        int | None, typer.Option(help="turns of the one-context growth run (0 skips it)")
    ] = None,
    stored: Annotated[
        int | None, typer.Option(help="stored contexts of the stored-contexts run (0 skips it)")
    ] = None,
    postgres: Annotated[
        str, typer.Option(help="PostgreSQL server (a throw-away database is created on it)")
    ] = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres",
    json_path: Annotated[
        Path | None, typer.Option("--json", help="write the results as JSON")
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(help="rewrite the bench:serve section of this Markdown file (and its plot)"),
    ] = None,
) -> None:
    """Requests/s, p50/p99, errors, server CPU and RSS of served A2A turns: smartctx (memory on
    and off) against an a2a-sdk echo agent, N concurrent clients, SQLite and PostgreSQL, 1 and 2
    server processes; per-turn latency as a context grows and with many stored contexts.

    Example: smartctx bench serve --quick --json out/serve.json --docs docs/benchmarks.md
    """
    from smartctx.bench.docs import write_section
    from smartctx.bench.serve import ServeOptions, run
    from smartctx.bench.serve_procs import SERVERS
    from smartctx.bench.serve_report import markdown, plot, rows, targets

    chosen = _names(servers)
    unknown = [s for s in chosen if s not in SERVERS]
    if unknown or not chosen:
        console.print(f"[red]error:[/] unknown server {unknown}: choose from {', '.join(SERVERS)}")
        raise typer.Exit(2)
    overrides: dict[str, Any] = {
        "servers": chosen,
        "stores": [s for s in _names(stores) if s in ("sqlite", "postgresql")],
        "clients": _ints(clients),
        "two_process": two_process,
        "postgres": postgres,
    }
    for name, value in (
        ("requests", requests),
        ("growth_turns", growth),
        ("stored_contexts", stored),
    ):
        if value is not None:
            overrides[name] = value
    options = ServeOptions.quick(**overrides) if quick else ServeOptions(**overrides)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        result = asyncio.run(run(options, _Bars(progress)))
    table = Table(title="smartctx bench serve: rps / p50 ms / p99 ms / errors / CPU ms per req")
    for column in ("store", "procs", "N", "echo", "smartctx", "no-memory", "smartctx/echo"):
        table.add_column(column)
    for row in rows(result):
        cells = []
        for server in ("echo", "smartctx", "smartctx-nomem"):
            s = row.get(server)
            cells.append(
                f"{s['rps']:.1f} / {s['p50_ms']:.0f} / {s['p99_ms']:.0f} / {s['errors']} / "
                f"{s['cpu_ms_per_request']:.0f}"
                if s
                else "-"
            )
        ratio = row["smartctx/echo"]
        table.add_row(
            row["store"], str(row["processes"]), str(row["clients"]), *cells, str(ratio or "-")
        )
    console.print(table)
    for name, met, figures in targets(result):
        mark = (
            "[dim]not measured[/]"
            if met is None
            else ("[green]met[/]" if met else "[red]NOT met[/]")
        )
        console.print(f"{mark}  {name}  {figures}")
    for note in result["notes"]:
        console.print(f"[yellow]note:[/] {note}")
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2), encoding="utf-8")
        console.print(f"wrote {json_path}")
    if docs is not None:
        image = plot(result, docs.parent / "bench-serve.png")
        command = " ".join(["smartctx", *_without_outputs(sys.argv[1:])])
        write_section("serve", markdown(result, command, image.name), docs)
        console.print(f"wrote {docs} and {image}")


@bench_app.command("profile")
def profile(
    turns: Annotated[int, typer.Option(help="warm turns profiled")] = 20,
    warmup: Annotated[int, typer.Option(help="turns before profiling starts")] = 5,
    rows: Annotated[int, typer.Option(help="rows of the top-costs table")] = 25,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="write the results as JSON")
    ] = None,
    tree: Annotated[bool, typer.Option(help="also print pyinstrument's call tree")] = False,
    compare: Annotated[
        Path | None, typer.Option(help="an earlier --json result to compare with (before)")
    ] = None,
    docs: Annotated[
        Path | None, typer.Option(help="with --compare: rewrite the bench:profile section")
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(help="profile this store (a throw-away database) in place of SQLite"),
    ] = None,
) -> None:
    """Profile served turns (pyinstrument, dev extra): a top-costs table of one turn of the
    offline defaults (SQLite, memory on), with SQL statements per turn.

    Example: smartctx bench profile --turns 20 --json out/profile.json
    """
    try:
        import pyinstrument  # noqa: F401
    except ImportError as err:
        console.print("[red]error:[/] pyinstrument is missing: pip install -e '.[dev]'")
        raise typer.Exit(2) from err
    from smartctx.bench.docs import write_section
    from smartctx.bench.turn_profile import compare_markdown, markdown, run

    result = run(turns=turns, warmup=warmup, progress=console.print, database_url=database_url)
    console.print(markdown(result, rows))
    if tree:
        console.print(result["text"])
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2), encoding="utf-8")
        console.print(f"wrote {json_path}")
    if compare is not None:
        before = json.loads(compare.read_text(encoding="utf-8"))
        text = compare_markdown(before, result, rows)
        console.print(text)
        if docs is not None:
            write_section("profile", text, docs)
            console.print(f"wrote {docs}")


@bench_app.command("owner-index")
def owner_index(
    sizes: Annotated[str, typer.Option(help="items per owner")] = "1000,5000,10000,20000,50000",
    limit_ms: Annotated[float, typer.Option(help="the latency limit of one query")] = 20.0,
    docs: Annotated[
        Path | None, typer.Option(help="rewrite the bench:owner-index section of this file")
    ] = None,
) -> None:
    """How many memory items one owner's in-process search holds before a query passes 20 ms.

    Example: smartctx bench owner-index --sizes 1000,10000,50000
    """
    from smartctx.bench.docs import write_section
    from smartctx.bench.owner_index import markdown, run

    result = run(_ints(sizes), limit_ms, progress=console.print)
    text = markdown(result, f"smartctx bench owner-index --sizes {sizes}")
    console.print(text)
    if docs is not None:
        write_section("owner-index", text, docs)
        console.print(f"wrote {docs}")


@bench_app.command("sqlite")
def sqlite_driver(
    statements: Annotated[int, typer.Option(help="statements per measure")] = 2000,
    docs: Annotated[
        Path | None, typer.Option(help="rewrite the bench:sqlite section of this file")
    ] = None,
) -> None:
    """CPU and wall microseconds of one small SQLite statement through SQLAlchemy's asyncio
    session: aiosqlite's thread against the inline connection the store uses, and plain sqlite3.

    Example: smartctx bench sqlite --docs docs/benchmarks.md
    """
    from smartctx.bench.docs import write_section
    from smartctx.bench.sqlite_driver import markdown, run

    result = run(statements)
    command = " ".join(["smartctx", *_without_outputs(sys.argv[1:])])
    text = markdown(result, command)
    console.print(text)
    if docs is not None:
        write_section("sqlite", text, docs)
        console.print(f"wrote {docs}")
