"""``smartctx status``: is a running server alive and ready, and what has it done so far."""

from __future__ import annotations

import json
from typing import Annotated, Any

import httpx
import typer
from prometheus_client.parser import text_string_to_metric_families
from rich.table import Table

from smartctx.cli.app import app, console
from smartctx.cli.errors import fail

_SHOWN = {
    "smartctx_turns_total": "turns",
    "smartctx_errors_total": "errors",
    "smartctx_window_events_total": "window events",
    "smartctx_window_tokens_total": "window tokens",
    "smartctx_live_contexts": "live contexts",
}


def counters(text: str) -> dict[str, dict[str, float]]:
    """The main counters of a ``/metrics`` page: name -> label value -> value."""
    out: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in _SHOWN:
                label = ",".join(f"{v}" for v in sample.labels.values()) or "all"
                out.setdefault(_SHOWN[sample.name], {})[label] = sample.value
    return out


@app.command()
def status(
    url: Annotated[str, typer.Option(help="server base URL")] = "http://127.0.0.1:8000",
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
) -> None:
    """Liveness, readiness and the main counters of a running server; exits 1 if not ready.

    Example: smartctx status --url http://127.0.0.1:8000 --json
    """
    with httpx.Client(base_url=url.rstrip("/"), timeout=10) as http:
        alive = http.get("/healthz").status_code == 200
        ready = http.get("/readyz")
        metrics = http.get("/metrics")
    readiness: dict[str, Any] = (
        ready.json() if ready.headers.get("content-type", "").startswith("application/json") else {}
    )
    report = {
        "url": url,
        "alive": alive,
        "ready": ready.status_code == 200,
        "checks": readiness.get("checks", {}),
        "model": readiness.get("model"),
        "counters": counters(metrics.text) if metrics.status_code == 200 else {},
    }
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        table = Table(title=f"smartctx at {url}: {'ready' if report['ready'] else 'NOT ready'}")
        table.add_column("what")
        table.add_column("value")
        table.add_row("model", str(report["model"]))
        for check, value in report["checks"].items():
            table.add_row(f"check: {check}", str(value))
        for name, values in report["counters"].items():
            shown = ", ".join(f"{k}={v:g}" for k, v in sorted(values.items()))
            table.add_row(name, shown)
        console.print(table)
    if not report["ready"]:
        failing = {k: v for k, v in report["checks"].items() if v != "ok"}
        fail(f"the server at {url} is not ready: {failing or ready.text[:100]}")
