"""Tables, target checks and the plot of ``smartctx bench serve`` (section ``bench:serve``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smartctx.bench.docs import machine_line

Key = tuple[str, int, int]


def _by_server(result: dict[str, Any]) -> dict[str, dict[Key, dict[str, Any]]]:
    out: dict[str, dict[Key, dict[str, Any]]] = {}
    for public, detail in zip(result["settings"], result["details"], strict=True):
        key = (public["store"], public["processes"], public["clients"])
        out.setdefault(public["server"], {})[key] = public | detail
    return out


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (store, processes, clients): each server's figures and the smartctx/echo
    throughput ratios."""
    by = _by_server(result)
    keys = sorted({k for table in by.values() for k in table}, key=lambda k: (k[0] != "sqlite", k))
    out = []
    for key in keys:
        row: dict[str, Any] = {"store": key[0], "processes": key[1], "clients": key[2]}
        for server, table in by.items():
            row[server] = table.get(key)
        echo = row.get("echo")
        for server in ("smartctx", "smartctx-nomem"):
            mine = row.get(server)
            ratio = None
            if echo is not None and mine is not None and echo["rps"] > 0:
                ratio = round(mine["rps"] / echo["rps"], 2)
            row[f"{server}/echo"] = ratio
        out.append(row)
    return out


def targets(result: dict[str, Any]) -> list[tuple[str, bool | None, str]]:
    """The issue's targets: (name, met or None when not measured, the figures behind it)."""
    table = rows(result)
    checks: list[tuple[str, bool | None, str]] = []
    ratios = [(r["clients"], r["store"], r["processes"], r["smartctx/echo"]) for r in table]
    measured = [x for x in ratios if x[3] is not None]
    shown = ", ".join(f"{s}/{p}p N={n}: {v}" for n, s, p, v in measured)
    checks.append(
        (
            "smartctx (memory on) >= 0.5x echo throughput at every N",
            all(v >= 0.5 for *_, v in measured) if measured else None,
            shown,
        )
    )
    p99 = [
        (r["store"], r["processes"], r["smartctx"]["p99_ms"], r["echo"]["p99_ms"])
        for r in table
        if r["clients"] == 8 and r.get("smartctx") and r.get("echo")
    ]
    checks.append(
        (
            "p99 at N=8 <= 2x echo's p99",
            all(m <= 2 * e for _s, _p, m, e in p99) if p99 else None,
            ", ".join(f"{s}/{p}p: {m:.0f} vs {e:.0f} ms" for s, p, m, e in p99),
        )
    )
    at32 = [
        (r["store"], r["processes"], r["smartctx"]["errors"])
        for r in table
        if r["clients"] == 32 and r.get("smartctx")
    ]
    checks.append(
        (
            "no errors at N=32 (smartctx)",
            all(e == 0 for *_, e in at32) if at32 else None,
            ", ".join(f"{s}/{p}p: {e}" for s, p, e in at32),
        )
    )
    pg = {
        (r["processes"], r["clients"]): r.get("smartctx")
        for r in table
        if r["store"] == "postgresql"
    }
    top = max((n for p, n in pg if p == 2), default=None)
    one, two = pg.get((1, top)) if top else None, pg.get((2, top)) if top else None
    checks.append(
        (
            "2-process PostgreSQL faster than 1 process (smartctx, largest N)",
            (two["rps"] > one["rps"]) if one and two else None,
            f"N={top}: {one['rps']} vs {two['rps']} rps" if one and two else "",
        )
    )
    growth = result.get("growth") or {}
    ratio = growth.get("last_over_first")
    checks.append(
        (
            "per-turn latency flat as one context grows (last/first bucket p50 <= 1.5)",
            ratio <= 1.5 if ratio is not None else None,
            f"{ratio}x over {growth.get('turns')} turns" if ratio is not None else "",
        )
    )
    return checks


def _cell(setting: dict[str, Any] | None) -> str:
    if not setting:
        return "-"
    return (
        f"{setting['rps']:.1f} / {setting['p50_ms']:.0f} / {setting['p99_ms']:.0f} / "
        f"{setting['errors']} / {setting['cpu_ms_per_request']:.0f} / {setting['rss_mb']:.0f}"
    )


def markdown(result: dict[str, Any], command: str, image: str | None = None) -> str:
    """The ``bench:serve`` section."""
    lines = [
        "## Served turns under load",
        "",
        f"Command: `{command}`",
        "",
        machine_line()
        + f" 1-minute load average {result['machine']['load_start']:.1f} at the start, "
        f"{result['machine']['load_end']:.1f} at the end.",
        "",
        "Each cell: requests/s / p50 ms / p99 ms / errors / server CPU ms per request / RSS MB "
        f"({result['options']['requests']} timed requests per level after one warm-up turn per "
        "client; each client continues its own context; 2-process legs: the clients are split "
        "between two servers on one database, client i on server i mod 2).",
        "",
        "| store | procs | N | echo | smartctx | smartctx --no-memory | smartctx/echo | "
        "no-memory/echo |",
        "| --- | ---: | ---: | --- | --- | --- | ---: | ---: |",
    ]
    for row in rows(result):
        lines.append(
            f"| {row['store']} | {row['processes']} | {row['clients']} | {_cell(row.get('echo'))} "
            f"| {_cell(row.get('smartctx'))} | {_cell(row.get('smartctx-nomem'))} "
            f"| {row['smartctx/echo'] or '-'} | {row['smartctx-nomem/echo'] or '-'} |"
        )
    lines += ["", "| target | met | figures |", "| --- | --- | --- |"]
    for name, met, figures in targets(result):
        mark = "not measured" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {name} | {mark} | {figures} |")
    growth = result.get("growth")
    if growth:
        lines += [
            "",
            f"Per-turn latency as one context grows to {growth['turns']:,} turns (smartctx, "
            f"SQLite, one client; server CPU {growth['cpu_ms_per_turn']} ms per turn):",
            "",
            "| turns | p50 ms | mean ms | errors |",
            "| --- | ---: | ---: | ---: |",
            *(
                f"| {b['turns']} | {b['p50_ms']} | {b['mean_ms']} | {b['errors']} |"
                for b in growth["buckets"]
            ),
        ]
    if result.get("stored"):
        lines += [
            "",
            "Per-turn latency with contexts already stored (smartctx, SQLite; stored contexts "
            "are clones of one real conversation; a stored context is opened from the database "
            "on its turn):",
            "",
            "| stored contexts | new context p50 / p99 ms | stored context p50 / p99 ms | errors |",
            "| ---: | --- | --- | ---: |",
            *(
                f"| {s['stored_contexts']:,} | {s['new_context_p50_ms']} / "
                f"{s['new_context_p99_ms']} | {s['stored_context_p50_ms'] or '-'} / "
                f"{s['stored_context_p99_ms'] or '-'} | {s['errors']} |"
                for s in result["stored"]
            ),
        ]
    for note in result.get("notes", []):
        lines += ["", f"Note: {note}."]
    if image:
        lines += ["", f"![served turns]({image})"]
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> Path:
    """Requests per second against N, one line per (server, store, processes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    lines: dict[tuple[str, str, int], list[tuple[int, float, float]]] = {}
    for s in result["settings"]:
        key = (s["server"], s["store"], s["processes"])
        lines.setdefault(key, []).append((s["clients"], s["rps"], s["p99_ms"]))
    for (server, store, procs), points in sorted(lines.items()):
        points.sort()
        label = f"{server} {store} {procs}p"
        style = "--" if server == "echo" else "-"
        left.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", label=label)
        right.plot([p[0] for p in points], [p[2] for p in points], style, marker="o", label=label)
    left.set(xscale="log", xlabel="concurrent clients", ylabel="requests / s", title="throughput")
    right.set(
        xscale="log",
        yscale="log",
        xlabel="concurrent clients",
        ylabel="p99 ms",
        title="p99 latency",
    )
    left.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
