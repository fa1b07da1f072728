"""``smartctx simulate``: the red-team simulation between two agents over A2A."""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from smartctx.cli.app import app, console
from smartctx.core.errors import SmartCtxError
from smartctx.core.settings import Settings
from smartctx.sim.compare import Comparison, compare
from smartctx.sim.defender import DEFAULT_BUDGET
from smartctx.sim.runner import SimulationConfig, SimulationResult, run_simulation


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _table(comparison: Comparison) -> Table:
    table = Table(title=f"red-team attack over {comparison.runs} seeds")
    for column in ("defender memory", "attack success rate", "median turns to success", "wins"):
        table.add_column(column, justify="left" if column == "defender memory" else "right")
    for row in comparison.rows():
        table.add_row(*row)
    return table


def _single(config: SimulationConfig, settings: Settings) -> SimulationResult:
    with _progress() as progress:
        task = progress.add_task("attacking", total=config.max_turns)

        def on_turn(turn: int, message: str, reply: str | None, error: str | None) -> None:
            progress.update(task, completed=turn)
            shown = error or reply or ""
            progress.console.print(
                f"[dim]{turn:>3}[/dim] [red]attacker:[/red] {message[:90]!s}\n"
                f"    [blue]defender:[/blue] {shown[:90]!s}",
                markup=True,
                highlight=False,
            )

        return asyncio.run(run_simulation(config, settings=settings, on_turn=on_turn))


def _compare(
    runs: int,
    config: SimulationConfig,
    settings: Settings,
    json_path: Path | None,
    docs: Path | None,
) -> Comparison:
    started = time.perf_counter()
    with _progress() as progress:
        task = progress.add_task("simulating", total=2 * runs)

        def on_run(mode: str, seed: int, result: SimulationResult) -> None:
            progress.advance(task)
            progress.console.print(
                f"{mode:>5} seed {seed}: {result.summary_line()}", highlight=False
            )

        comparison = asyncio.run(compare(runs, config, settings=settings, progress=on_run))
    console.print(_table(comparison))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(comparison.to_dict(), indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {json_path}")
    if docs is not None:
        from smartctx.sim.report import section, write_bench_section

        parts = ["smartctx", "simulate", "--compare", "--runs", str(runs)]
        parts += ["--seed", str(config.seed), "--max-turns", str(config.max_turns)]
        parts += ["--budget", str(config.budget)]
        if json_path is not None:
            parts += ["--json", str(json_path)]
        parts += ["--docs", str(docs)]
        command = " ".join(shlex.quote(part) for part in parts)
        body = section(
            comparison,
            command,
            budget=config.budget,
            max_turns=config.max_turns,
            seconds=time.perf_counter() - started,
        )
        write_bench_section(docs, body)
        console.print(f"updated the bench:simulate section of {docs}")
    return comparison


@app.command()
def simulate(
    seed: Annotated[
        int, typer.Option(help="seed of the offline policies (first seed with --compare)")
    ] = 0,
    max_turns: Annotated[int, typer.Option(min=1, help="messages the attacker may send")] = 40,
    timeout: Annotated[float, typer.Option(min=0.1, help="seconds for the whole run")] = 300.0,
    request_timeout: Annotated[
        float, typer.Option(min=0.1, help="seconds per defender reply")
    ] = 30.0,
    out: Annotated[Path, typer.Option(help="directory for trace.json and conversation.txt")] = Path(
        "out"
    ),
    defender_url: Annotated[
        str | None, typer.Option(help="attack this A2A agent instead of a local smartctx defender")
    ] = None,
    defender_memory: Annotated[
        Literal["fifo", "smart"], typer.Option(help="the defender's window")
    ] = "smart",
    budget: Annotated[
        int, typer.Option(min=64, help="the defender's window budget in tokens")
    ] = DEFAULT_BUDGET,
    attacker_model: Annotated[
        str | None,
        typer.Option(help="LLM attacker (OpenAI-compatible model name); default offline"),
    ] = None,
    defender_model: Annotated[
        str | None,
        typer.Option(help="LLM defender (OpenAI-compatible model name); default offline"),
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (else SMARTCTX_LLM_BASE_URL)")
    ] = None,
    compare_modes: Annotated[
        bool, typer.Option("--compare", help="run FIFO and smart defenders over --runs seeds")
    ] = False,
    runs: Annotated[int, typer.Option(min=1, help="seeds per memory mode with --compare")] = 5,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="write the --compare result as JSON")
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(
            help="with --compare: rewrite the bench:simulate section of this Markdown file"
        ),
    ] = None,
) -> None:
    """Red team vs blue team over A2A: the attacker tries to make the defender say "I give up".

    The defender is a smartctx A2A server on an ephemeral port (or --defender-url) whose system
    prompt forbids the phrase; the attacker reaches it only through an A2A tool. Writes
    OUT/trace.json and OUT/conversation.txt and prints a summary line.

    Examples:

      smartctx simulate --seed 3 --defender-memory fifo --out out/

      smartctx simulate --compare --runs 5 --json out/compare.json

      smartctx simulate --attacker-model llama3.1 --llm-base-url http://localhost:11434/v1
    """
    settings = Settings()
    if llm_base_url:
        settings = settings.model_copy(update={"llm_base_url": llm_base_url})
    try:
        config = SimulationConfig(
            seed=seed,
            max_turns=max_turns,
            timeout=timeout,
            request_timeout=request_timeout,
            out_dir=out,
            defender_url=defender_url,
            defender_memory=defender_memory,
            budget=budget,
            attacker_model=attacker_model,
            defender_model=defender_model,
        )
        if compare_modes:
            _compare(runs, config, settings, json_path, docs)
            return
        result = _single(config, settings)
    except SmartCtxError as err:
        console.print(f"[red]error:[/red] {err.message}")
        raise typer.Exit(2) from err
    style = "green" if result.victory else ("red" if result.error else "yellow")
    console.print(f"[{style}]{result.summary_line()}[/{style}]", highlight=False)
    for path in result.paths:
        console.print(f"wrote {path}")
    if result.error:
        raise typer.Exit(1)
