"""Run the demo: both scenarios over A2A through :class:`SmartctxClient`, then the verdicts.

``run_demo(url=None)`` starts a server on an ephemeral port (offline models, a fresh database in
a temporary folder) and stops it afterwards; with ``url`` it uses a running server.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from smartctx.core.settings import Settings
from smartctx.demo.render import print_step, print_verdicts
from smartctx.demo.scenarios import (
    DEMO_OWNER,
    ScenarioResult,
    StepCallback,
    run_compression,
    run_eviction,
)
from smartctx.demo.verdicts import Verdict, judge
from smartctx.service.client import SmartctxClient


async def run_scenarios(
    url: str,
    *,
    on_step: StepCallback | None = None,
    owner: str = DEMO_OWNER,
    api_key: str | None = None,
) -> list[ScenarioResult]:
    """Both scenarios against the server at ``url``, in order (``api_key``: an admin key, since
    the scenarios name their owners)."""
    run = uuid.uuid4().hex[:8]
    results: list[ScenarioResult] = []
    async with (
        SmartctxClient(url, owner=f"{owner}-{run}-probe", api_key=api_key) as probe,
        SmartctxClient(url, owner=f"{owner}-{run}-eviction", api_key=api_key) as client,
    ):
        results.append(await run_eviction(client, on_step, probe=probe))
    async with SmartctxClient(url, owner=f"{owner}-{run}-compression", api_key=api_key) as client:
        results.append(await run_compression(client, on_step))
    return results


def run_demo(
    url: str | None = None,
    *,
    console: Console | None = None,
    settings: Settings | None = None,
    runner: Callable[[Any], Any] | None = None,
    api_key: str | None = None,
    **serve_kwargs: Any,
) -> list[Verdict]:
    """Run the demo, printing every step and the verdicts; returns the verdicts.

    ``runner`` runs a coroutine to completion (default ``asyncio.run``); pass your own when
    calling from code that already has an event loop; ``api_key`` is sent to the server at
    ``url`` (an admin key: the scenarios name their owners).
    """
    import asyncio

    console = console or Console()
    run = runner or asyncio.run

    def show(result: ScenarioResult, step: Any) -> None:
        print_step(console, result, step)

    if url is not None:
        results = run(run_scenarios(url, on_step=show, api_key=api_key))
    else:
        from smartctx.service.server import serve

        with tempfile.TemporaryDirectory(prefix="smartctx-demo-") as tmp:
            base = settings or Settings()
            cfg = base.model_copy(
                update={"database_url": f"sqlite+aiosqlite:///{Path(tmp) / 'demo.db'}"}
            )
            with console.status("starting a smartctx server on an ephemeral port..."):
                handle = serve(cfg, host="127.0.0.1", port=0, **serve_kwargs)
            with handle:
                console.print(
                    f"server: [bold]{handle.url}[/] (agent card at "
                    f"{handle.url}/.well-known/agent-card.json)"
                )
                results = run(run_scenarios(handle.url, on_step=show))
    for result in results:
        for note in result.notes:
            console.print(f"[dim]{result.name}: {note}[/]")
    verdicts = [judge(result) for result in results]
    print_verdicts(console, verdicts)
    return verdicts
