"""``smartctx bench answers``: answer quality of the served agent, by memory mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from smartctx.cli.app import console
from smartctx.cli.bench import bench_app


@bench_app.command("answers")
def answers(
    modes: Annotated[
        str, typer.Option(help="comma-separated modes: fresh, shared, thread")
    ] = "fresh,shared,thread",
    limit: Annotated[int | None, typer.Option(help="ask only the first N questions")] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="write the results as JSON")
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(help="rewrite the bench:answers section of this Markdown file (and its plot)"),
    ] = None,
) -> None:
    """Answer and abstention accuracy, evidence in prompt, prompt tokens, junk replies and
    latency of a real server over A2A, with a fresh owner per question, one owner with a new
    context per question, and one long thread.

    Example: smartctx bench answers --json out/answers.json --docs docs/benchmarks.md
    """
    from smartctx.bench.answers import MODES, run
    from smartctx.bench.answers_report import markdown, plot
    from smartctx.bench.docs import write_section
    from smartctx.core.errors import ConfigError

    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in MODES]
    if unknown or not chosen:
        raise ConfigError(f"unknown mode {unknown or modes!r}: choose from {', '.join(MODES)}")
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("starting", total=1)

        def step(mode: str, done: int, total: int) -> None:
            bar.update(task, description=f"mode {mode}", completed=done, total=total)

        result = run(chosen, limit=limit, progress=step)
    table = Table(title="smartctx bench answers (all questions)")
    for column in ("mode", "answers", "abstention", "evidence", "tokens", "junk", "median ms"):
        table.add_column(column, justify="right")
    for mode, r in result["modes"].items():
        table.add_row(
            mode,
            f"{100 * r['answer_accuracy']:.1f}%",
            f"{100 * r['abstain_accuracy']:.1f}%",
            f"{100 * r['evidence_in_prompt']:.1f}%",
            f"{r['prompt_tokens']:.0f}",
            str(r["junk_replies"]),
            f"{r['median_ms']:.0f}",
        )
    console.print(table)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
        console.print(f"wrote {json_path}")
    if docs is not None:
        image = plot(result, docs.parent / "bench-answers.png")
        command = "smartctx bench answers" + (f" --modes {modes}" if len(chosen) < 3 else "")
        command += f" --limit {limit}" if limit is not None else ""
        write_section("answers", markdown(result, command, image.name), docs)
        console.print(f"wrote {docs} and {image}")
