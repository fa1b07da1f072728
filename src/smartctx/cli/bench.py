"""``smartctx bench``: the benchmarks (a typer sub-app other benchmark modules add commands to)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import TaskID
from rich.table import Table

from smartctx.cli.app import app, console
from smartctx.cli.progress import progress_bar

bench_app = typer.Typer(
    name="bench",
    help="Benchmarks. Example: smartctx bench window --quick",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")


@bench_app.command("window")
def window(
    slots: Annotated[int, typer.Option(help="slots added to each window")] = 100_000,
    quick: Annotated[
        bool, typer.Option(help="a small run (2,000 slots, 200 ingest texts)")
    ] = False,
    ingest_texts: Annotated[
        int, typer.Option("--ingest", help="texts for the ingest figure")
    ] = 2000,
    ingest_embedder: Annotated[
        str, typer.Option(help="embedder for ingest: use, e5 or hashing")
    ] = "use",
    memory: Annotated[
        bool, typer.Option(help="also measure peak memory (tracemalloc pass)")
    ] = True,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="write the results as JSON")
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(help="rewrite the bench:window section of this Markdown file (and its plot)"),
    ] = None,
) -> None:
    """Cost per add of the context window (8k, 128k, 1M tokens) against the seed algorithm.

    Example: smartctx bench window --json out/window.json --docs docs/benchmarks.md
    """
    from smartctx.bench.docs import write_section
    from smartctx.bench.window import run
    from smartctx.bench.window_report import markdown, plot, times_label

    if quick:
        slots, ingest_texts = min(slots, 2000), min(ingest_texts, 200)
    with progress_bar(console) as bar:
        task = bar.add_task("preparing inputs", total=1, unit="steps")

        ingest_tasks: dict[str, TaskID] = {}

        def step(phase: str, done: int, total: int) -> None:
            # Each ingest pass counts its own texts: a bar of its own keeps rate and ETA right.
            if phase.startswith("ingest: "):
                if phase not in ingest_tasks:
                    ingest_tasks[phase] = bar.add_task(phase, total=total, unit="texts")
                bar.update(ingest_tasks[phase], completed=done, total=total)
            else:
                bar.update(task, description=phase, completed=done, total=total)

        result = run(
            slots=slots,
            ingest_texts=ingest_texts,
            ingest_embedder=ingest_embedder,
            memory=memory,
            progress=step,
        )
    table = Table(title=f"smartctx bench window ({slots:,} slots)")
    for column in ("window", "smartctx µs median", "p99", "baseline µs median", "speed-up"):
        table.add_column(column)
    for label, r in result["window"].items():
        table.add_row(
            label,
            f"{r['smartctx_us_median']:.1f}",
            f"{r['smartctx_us_p99']:.1f}",
            f"{r['baseline_us_median']:.1f}",
            times_label(r["speedup"]),
        )
    console.print(table)
    ing = result["ingest"]
    console.print(
        f"ingest ({ing['embedder']}): embedder {ing['embedder_per_s']:.0f}/s, "
        f"smartctx add_many {ing['smartctx_per_s']:.0f}/s"
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2), encoding="utf-8")
        console.print(f"wrote {json_path}")
    if docs is not None:
        image = plot(result, docs.parent / "bench-window.png")
        command = "smartctx bench window" + (f" --slots {slots}" if slots != 100_000 else "")
        write_section("window", markdown(result, command, image.name), docs)
        console.print(f"wrote {docs} and {image}")
