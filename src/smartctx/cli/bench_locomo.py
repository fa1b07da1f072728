"""``smartctx bench locomo``: evidence recall@k and retention by budget on LoCoMo."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from smartctx.cli.app import console
from smartctx.cli.bench import bench_app
from smartctx.cli.progress import progress_bar

if TYPE_CHECKING:
    from smartctx.bench.locomo_data import LoCoMo
    from smartctx.core.embeddings import Embedder

EMBEDDERS = ("e5", "use", "hashing", "none")


@bench_app.command("locomo")
def locomo(
    data: Annotated[
        Path | None,
        typer.Option(help="LoCoMo JSON (default ../shared/data/locomo/locomo-dev.json)"),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="use only the first N conversations")] = None,
    questions: Annotated[
        int | None, typer.Option(help="use only the first N questions of each conversation")
    ] = None,
    embedder: Annotated[
        str, typer.Option(help="retrieval embedder: e5 (default), use, hashing or none (BM25)")
    ] = "e5",
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="embedding cache (default .smartctx/cache/locomo; gitignored)"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not cache embeddings")] = False,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="write the results as JSON")
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(
            help="rewrite the bench:locomo section of this Markdown file and its plot "
            "(bench:locomo-NAME for another embedder than e5)"
        ),
    ] = None,
    cv: Annotated[
        bool, typer.Option("--cv", help="also cross-validate the tier weights (leave one out)")
    ] = False,
    holdout: Annotated[
        Path | None,
        typer.Option(help="LoCoMo JSON whose conversations not in --data are reported as held out"),
    ] = None,
    qa: Annotated[
        bool, typer.Option("--qa", help="ask the configured model each question (answer F1)")
    ] = False,
    qa_budget: Annotated[int, typer.Option(help="token budget of the --qa prompts")] = 4096,
    llm_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API root (else SMARTCTX_LLM_BASE_URL)")
    ] = None,
    llm_model: Annotated[
        str | None, typer.Option(help="model name (else SMARTCTX_LLM_MODEL)")
    ] = None,
    llm_key: Annotated[str | None, typer.Option(help="API key (else SMARTCTX_LLM_API_KEY)")] = None,
    judge_model: Annotated[
        str | None, typer.Option(help="also judge --qa answers with this model (same endpoint)")
    ] = None,
    llm_keys: Annotated[
        bool, typer.Option("--llm-keys", help="extract fact keys with the configured model")
    ] = False,
    served: Annotated[
        bool,
        typer.Option(
            "--served",
            help="rank as a served window's recaller does (lean keys, its tier weights)",
        ),
    ] = False,
) -> None:
    """Evidence recall@5/10/25/50 and retention at 512-4,096 tokens on LoCoMo, against plain BM25
    and a FIFO window; with --cv, cross-validated recall; with --qa, answer F1 from your model.

    Example: smartctx bench locomo --cv --json out/locomo.json --docs docs/benchmarks.md
    Answers: smartctx bench locomo --qa --llm-url http://localhost:11434/v1 --llm-model qwen2.5
    """
    with _one_line_errors():
        from smartctx.bench.docs import write_section
        from smartctx.bench.locomo import LocomoConfig, run_locomo
        from smartctx.bench.locomo_cache import CachedEmbedder
        from smartctx.bench.locomo_cv import cross_validate
        from smartctx.bench.locomo_data import default_data_path, load_locomo
        from smartctx.bench.locomo_llm import ask, chat_model, complete
        from smartctx.bench.locomo_qa import run_qa
        from smartctx.bench.locomo_report import markdown, plot
        from smartctx.core.embeddings import get_embedder
        from smartctx.core.errors import ConfigError
        from smartctx.core.tokens import get_counter
        from smartctx.retrieval.keys_llm import LLMExtractor
        from smartctx.service.recall_index import SERVED_WEIGHTS

        if served and (docs is not None or cv):
            raise ConfigError("--served measures the served recaller alone: without --docs or --cv")
        if embedder not in EMBEDDERS:
            raise ConfigError(
                f"unknown embedder {embedder!r}: choose one of {', '.join(EMBEDDERS)}"
            )
        dataset = load_locomo(data or default_data_path(), limit=limit, questions=questions)
        chosen: Embedder | None = None
        cached: CachedEmbedder | None = None
        if embedder != "none":
            directory = None if no_cache else (cache_dir or Path(".smartctx/cache/locomo"))
            cached = CachedEmbedder(get_embedder(embedder), directory)
            chosen = cached
        # A missing model is reported before any work is done.
        model = chat_model(llm_url, llm_model, llm_key) if qa or llm_keys else None
        judge = chat_model(llm_url, judge_model, llm_key) if qa and judge_model else None
        with progress_bar(console) as bar:
            task = bar.add_task(
                "embedding and building windows", total=dataset.questions, unit="questions"
            )

            def step(phase: str, done: int) -> None:
                bar.update(task, description=phase, advance=done)

            extractor = LLMExtractor(complete(model)) if llm_keys and model else None
            config = LocomoConfig(lean=True, tiers=SERVED_WEIGHTS) if served else None
            measure = partial(
                run_locomo,
                embedder=chosen,
                counter=get_counter(),
                progress=step,
                extractor=extractor,
                config=config,
            )
            result = measure(dataset)
            if cv:
                bar.update(task, completed=0, total=dataset.questions)
                result.cv = cross_validate(dataset, embedder=chosen, progress=step).to_json()
            if holdout is not None:
                held = load_locomo(holdout, exclude={c.sample_id for c in dataset.conversations})
                bar.update(task, completed=0, total=held.questions)
                result.holdout = measure(held).to_json()
            if qa and model is not None:
                bar.update(task, completed=0, total=dataset.questions)
                result.qa = run_qa(
                    dataset,
                    ask=ask(model),
                    judge=ask(judge) if judge is not None else None,
                    embedder=chosen,
                    counter=get_counter(),
                    budget=qa_budget,
                    model=model.model,
                    judge_model=judge.model if judge is not None else "",
                    progress=step,
                ).to_json()
        if cached is not None:
            cached.save()
            result.cost["embed_ms_per_text"] = _embed_ms(cached.inner, dataset)
        _print(result)
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps(result.to_json(), indent=2), encoding="utf-8")
            console.print(f"wrote {json_path}")
        if docs is not None:
            name = "locomo" if embedder == "e5" else f"locomo-{embedder}"
            image = plot(result, docs.parent / f"bench-{name}.png")
            command = "smartctx bench locomo" + (
                f" --embedder {embedder}" if embedder != "e5" else ""
            )
            command += f" --limit {limit}" if limit is not None else ""
            command += f" --questions {questions}" if questions is not None else ""
            command += " --cv" if cv else ""
            command += f" --holdout {holdout}" if holdout is not None else ""
            write_section(name, markdown(result, command, image=image.name), docs)
            console.print(f"wrote {docs} and {image}")


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """A smartctx error becomes ``code: message`` and exit code 1, never a traceback."""
    from smartctx.core.errors import SmartCtxError

    try:
        yield
    except SmartCtxError as err:
        console.print(f"[red]{err.code}[/red]: {err.message}")
        raise typer.Exit(1) from err


def _embed_ms(embedder: Embedder, dataset: LoCoMo) -> float:
    """Milliseconds to embed one turn, uncached (32 turns in one batch, after a warm-up)."""
    import time

    texts = [t.text for c in dataset.conversations for t in c.turns][:32]
    embedder.embed(texts[:1])
    started = time.perf_counter()
    embedder.embed(texts)
    return 1000 * (time.perf_counter() - started) / max(1, len(texts))


def _print(result: object) -> None:
    from smartctx.bench.locomo import LocomoResult

    if not isinstance(result, LocomoResult):
        return
    cfg = result.config
    recall = Table(title=f"LoCoMo evidence recall ({result.questions} questions, %)")
    recall.add_column("retriever")
    for k in cfg.ks:
        recall.add_column(f"@{k}", justify="right")
    for system in ("smartctx", "bm25"):
        values = result.table(system, "recall").values()
        recall.add_row(system, *(f"{100 * v:.1f}" for v in values))
    console.print(recall)
    keep = Table(title="Evidence retained in the window by token budget (%)")
    keep.add_column("window")
    for b in cfg.budgets:
        keep.add_column(f"{b:,}", justify="right")
    for system in ("smartctx", "fifo"):
        values = result.table(system, "retention").values()
        keep.add_row(system, *(f"{100 * v:.1f}" for v in values))
    console.print(keep)
    from smartctx.bench.locomo_report import targets

    for name, met, figures in targets(result.to_json()):
        verdict = "[green]met[/]" if met else "[red]NOT met[/]"
        mark = "[dim]not measured[/]" if met is None else verdict
        console.print(f"{mark}  {name}  {figures}")
