"""The ``bench:window`` section of ``docs/benchmarks.md`` and its plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smartctx.bench.docs import machine_line


def times_label(ratio: float) -> str:
    """A speed-up ratio as "1.6x" (below 10) or "226x"."""
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def markdown(result: dict[str, Any], command: str, plot: str | None = None) -> str:
    """The section body: command, machine, the per-size table, the ingest line, the method."""
    rows = [
        "| window | filled after (adds) | smartctx median µs/add | smartctx p99 µs | "
        "baseline median µs/add | baseline p99 µs | speed-up | smartctx peak MB |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, r in result["window"].items():
        filled = r["smartctx_filled_at"] if r["smartctx_filled_at"] is not None else "never"
        rows.append(
            f"| {label} | {filled} | {r['smartctx_us_median']:.1f} | {r['smartctx_us_p99']:.1f} "
            f"| {r['baseline_us_median']:.1f} | {r['baseline_us_p99']:.1f} "
            f"| {times_label(r['speedup'])} | {r['smartctx_peak_mb']:.1f} |"
        )
    machine = result.get("machine", {})
    load = ""
    if machine.get("load_start", -1) >= 0:
        load = (
            f" 1-minute load average {machine['load_start']:.1f} at the start and "
            f"{machine['load_end']:.1f} at the end (the machine was shared with other jobs; "
            "the p99 columns include scheduler preemption)."
        )
    ingest = result["ingest"]
    share = 100.0 * ingest["smartctx_per_s"] / max(ingest["embedder_per_s"], 1e-9)
    lines = [
        "## Context window: cost per add",
        "",
        f"Command: `{command}`",
        "",
        machine_line() + load,
        "",
        f"{result['slots']:,} slots of mixed kinds added to each window (dedup on, eviction "
        "funnel). Timings are per `add`, over the adds made after the window first filled; the "
        "baseline is the seed's algorithm (list, `min()` over unpinned slots, `list.remove`, "
        "token total re-summed) on the same inputs. Token counts and embeddings are served from "
        "a precomputed dict in both, so this measures the window algorithm itself. Peak memory "
        "(tracemalloc, separate pass) is dominated by the append-only log, which keeps every slot "
        "and event, so it barely depends on the budget.",
        "",
        *rows,
        "",
        f"Ingest with the `{ingest['embedder']}` embedder ({int(ingest['texts']):,} texts): the "
        f"embedder alone embeds {ingest['embedder_per_s']:.0f} texts/s in batches; "
        f"`ContextWindow.add_many` ingests {ingest['smartctx_per_s']:.0f} texts/s "
        f"({share:.0f}% of the embedder's throughput), counting tokens and deduplicating.",
    ]
    if plot:
        lines += ["", f"![cost per add]({plot})"]
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> Path:
    """A log-scale bar chart of the median cost per add, smartctx vs baseline, per window."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(result["window"])
    smart = [result["window"][k]["smartctx_us_median"] for k in labels]
    base = [result["window"][k]["baseline_us_median"] for k in labels]
    xs = range(len(labels))
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=120)
    ax.bar([x - 0.2 for x in xs], smart, width=0.4, label="smartctx")
    ax.bar([x + 0.2 for x in xs], base, width=0.4, label="seed baseline")
    ax.set_yscale("log")
    ax.set_xticks(list(xs), labels)
    ax.set_xlabel("window budget (tokens)")
    ax.set_ylabel("median µs per add (log)")
    ax.set_title(f"Cost per add, {result['slots']:,} slots")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
