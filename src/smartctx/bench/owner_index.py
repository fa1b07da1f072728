"""``smartctx bench owner-index``: how many items one owner's in-process search holds within 20 ms.

Each replica keeps, per owner, a :class:`~smartctx.retrieval.hybrid.HybridIndex` of that owner's
long-term memory items (no pgvector here: vectors and the lexical index live in the process).
For growing item counts this measures the latency of one query right after one new item
arrived (the turn path: the item is added, then the next recall searches) and of a query on an
unchanged index, lexical-only (the service's long-term memory) and with 384-d vectors (the size
of multilingual-e5-small; random unit vectors, so no model time is counted). The result names
the first size at which a query passes ``limit_ms``.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from smartctx.core.embeddings import Vector, normalize_rows
from smartctx.retrieval.hybrid import HybridIndex

_WORDS = [
    "vpn",
    "laptop",
    "expense",
    "hotel",
    "leave",
    "badge",
    "printer",
    "password",
    "team",
    "offsite",
    "berlin",
    "paris",
    "manager",
    "invoice",
    "project",
    "deadline",
    "meeting",
    "desk",
    "floor",
    "parking",
    "lunch",
    "train",
    "flight",
    "budget",
    "review",
    "holiday",
    "doctor",
    "gym",
    "coffee",
    "keyboard",
    "monitor",
    "account",
    "payroll",
    "contract",
    "office",
    "client",
]


class _RandomVectors:
    """Deterministic random unit vectors (a stand-in embedder without model cost)."""

    name = "random-384"
    dim = 384

    def __init__(self) -> None:
        self.rng = np.random.default_rng(7)

    def embed(self, texts: Sequence[str]) -> Vector:
        return normalize_rows(self.rng.standard_normal((len(texts), self.dim)))

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self.embed(texts)


def _texts(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(_WORDS, k=12)) + f" item {i}" for i in range(n)]


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def measure(size: int, vectors: bool, repeat: int = 5) -> dict[str, Any]:
    """Query latencies (ms, median of ``repeat``) for an index of ``size`` items."""
    embedder = _RandomVectors() if vectors else None
    index = HybridIndex(embedder=embedder)
    index.add([f"i{n}" for n in range(size)], _texts(size))
    query = "where did I park near the office before the berlin flight"
    index.search(query, k=5)
    counter = [size]

    def after_add() -> None:
        counter[0] += 1
        index.add([f"i{counter[0]}"], [f"new note {counter[0]} about the parking desk"])
        index.search(query, k=5)

    return {
        "items": size,
        "vectors": vectors,
        "query_ms": round(_median_ms(lambda: index.search(query, k=5), repeat), 2),
        "after_add_ms": round(_median_ms(after_add, repeat), 2),
    }


def run(
    sizes: Sequence[int] = (1_000, 5_000, 10_000, 20_000, 50_000, 100_000),
    limit_ms: float = 20.0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every size with and without vectors, plus the first size past ``limit_ms`` for each.

    numpy's BLAS runs with one thread, as in the server (``SMARTCTX_EMBED_THREADS``)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _run(sizes, limit_ms, progress)


def _run(
    sizes: Sequence[int], limit_ms: float, progress: Callable[[str], None] | None
) -> dict[str, Any]:
    rows = []
    for vectors in (False, True):
        for size in sizes:
            if progress is not None:
                progress(f"{size:,} items, {'vectors' if vectors else 'lexical only'}")
            rows.append(measure(size, vectors))
    first: dict[str, int | None] = {}
    for vectors in (False, True):
        over = [
            r["items"] for r in rows if r["vectors"] is vectors and r["after_add_ms"] > limit_ms
        ]
        first["vectors" if vectors else "lexical"] = min(over) if over else None
    return {"limit_ms": limit_ms, "rows": rows, "first_over_limit": first}


def markdown(result: dict[str, Any], command: str) -> str:
    lines = [
        "## Per-owner in-process search",
        "",
        f"Command: `{command}`",
        "",
        "Median ms of one query on one owner's index, unchanged and right after one new item "
        "(the turn path). Vectors: 384-d (multilingual-e5-small's size), random, so no model "
        "time is included; one BLAS thread, as in the server.",
        "",
        "| items | vectors | query ms | query after one add ms |",
        "| ---: | --- | ---: | ---: |",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['items']:,} | {'yes' if row['vectors'] else 'no'} | {row['query_ms']} "
            f"| {row['after_add_ms']} |"
        )
    first = result["first_over_limit"]
    shown = {k: (f"{v:,}" if v else "none measured") for k, v in first.items()}
    lines += [
        "",
        f"First size past {result['limit_ms']:.0f} ms after an add: lexical only "
        f"{shown['lexical']}, with vectors {shown['vectors']}.",
    ]
    return "\n".join(lines)
