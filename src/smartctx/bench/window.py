"""``smartctx bench window``: cost per add of the context engine against the seed's algorithm.

Method (every figure in ``docs/benchmarks.md`` comes from :func:`run`):

- ``slots`` pre-made slots of mixed kinds (one pinned system prompt, then user 30%, agent 30%,
  rag_doc 20%, tool_log 15%, memory 5%; about 8% exact repeats of an earlier slot), the same
  inputs for every window and for the baseline;
- token counts and embeddings are precomputed and served from a dict (hashing embedder), so the
  timings measure the window algorithm, not the tokenizer or the model; the smartctx window runs
  with deduplication on (exact + semantic over the last 256 vectors of each kind group) and the
  eviction funnel, the baseline with the seed's loop (a list; while over budget, ``min()`` over
  the unpinned slots and ``list.remove``; the token total re-summed each time);
- medians and p99 are taken over the adds made after each window first filled (first eviction);
- peak memory is measured in a separate pass with ``tracemalloc`` (it slows allocation down);
- ingest: the real embedder's own batch throughput on N texts against ``add_many`` of the same
  texts into a window (which embeds them in one batch, counts tokens and deduplicates).
"""

from __future__ import annotations

import gc
import os
import random
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from smartctx.bench.docs import machine_info
from smartctx.core.embeddings import Embedder, HashingEmbedder, Vector, get_embedder
from smartctx.core.reporting import ReportingEmbedder
from smartctx.core.slots import Slot, SlotKind
from smartctx.core.tokens import TokenCounter, get_counter
from smartctx.window import ContextWindow, eviction_preset, render_content

SIZES: dict[str, int] = {"8k": 8_000, "128k": 128_000, "1M": 1_000_000}
_MIX: tuple[tuple[SlotKind, float], ...] = (
    (SlotKind.USER, 0.30),
    (SlotKind.AGENT, 0.30),
    (SlotKind.RAG_DOC, 0.20),
    (SlotKind.TOOL_LOG, 0.15),
    (SlotKind.MEMORY, 0.05),
)
Progress = Callable[[str, int, int], None]
TICK = 1000  # progress is reported every TICK adds, outside the timed region


def make_slots(n: int, *, seed: int = 7, repeat_share: float = 0.08) -> list[Slot]:
    """``n`` deterministic slots: a system prompt first, then the mixed kinds described above."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "pe", "da", "zu", "fo", "gra"]
    vocab = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 3))) for _ in range(4000)})
    kinds = [k for k, _ in _MIX]
    weights = [w for _, w in _MIX]
    out = [Slot(SlotKind.SYSTEM, "You are the benchmark assistant. Answer from context.")]
    made: dict[SlotKind, list[Slot]] = {k: [] for k in kinds}
    for i in range(1, n):
        kind = rng.choices(kinds, weights)[0]
        earlier = made[kind]
        if earlier and rng.random() < repeat_share:
            prev = rng.choice(earlier)
            out.append(Slot(kind, prev.text, source_id=prev.source_id))
            continue
        words = rng.choices(vocab, k=rng.randint(15, 45))
        words.insert(rng.randrange(len(words)), str(rng.randint(0, 9999)))
        source = f"kb:doc{i}.md#{rng.randint(1, 9)}" if kind is SlotKind.RAG_DOC else None
        slot = Slot(kind, " ".join(words).capitalize() + ".", source_id=source)
        made[kind].append(slot)
        out.append(slot)
    return out


class CachedCounter:
    """Token counts served from a dict filled beforehand (misses are counted and kept)."""

    def __init__(self, inner: TokenCounter, texts: Sequence[str]) -> None:
        self.name = f"cached-{inner.name}"
        self._inner = inner
        self._counts = {t: inner.count(t) for t in texts}

    def count(self, text: str) -> int:
        value = self._counts.get(text)
        if value is None:
            value = self._counts[text] = self._inner.count(text)
        return value


class CachedEmbedder:
    """Embeddings served from a dict filled beforehand (misses are embedded and kept)."""

    def __init__(self, inner: Embedder, texts: Sequence[str]) -> None:
        self.name = f"cached-{inner.name}"
        self.dim = inner.dim
        self._inner = inner
        unique = list(dict.fromkeys(texts))
        matrix = inner.embed(unique) if unique else np.zeros((0, inner.dim), np.float32)
        self._vectors: dict[str, Vector] = {t: matrix[i] for i, t in enumerate(unique)}

    def embed(self, texts: Sequence[str]) -> Vector:
        if len(texts) == 1 and texts[0] in self._vectors:
            return self._vectors[texts[0]][None, :]
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            fresh = self._inner.embed(missing)
            self._vectors.update({t: fresh[i] for i, t in enumerate(missing)})
        return np.stack([self._vectors[t] for t in texts]).astype(np.float32)


class SeedWindow:
    """The seed smart-context-memory algorithm, reimplemented as the baseline."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.slots: list[Slot] = []

    def add(self, slot: Slot) -> bool:
        """Append, then evict ``min(priority)`` among unpinned while over budget; True if it
        evicted anything."""
        self.slots.append(slot)
        evicted = False
        while sum(s.tokens for s in self.slots) > self.budget:
            candidates = [s for s in self.slots if not s.pinned]
            if not candidates:
                break
            victim = min(candidates, key=lambda s: s.effective_priority)
            self.slots.remove(victim)
            evicted = True
        return evicted


@dataclass(frozen=True, slots=True)
class SizeResult:
    """Timings (µs per add, after the window first filled) for one window size."""

    label: str
    budget: int
    smartctx_us: list[float]
    baseline_us: list[float]
    smartctx_filled_at: int | None
    baseline_filled_at: int | None
    smartctx_peak_mb: float

    def to_dict(self) -> dict[str, Any]:
        smart = np.asarray(self.smartctx_us)
        base = np.asarray(self.baseline_us)
        out: dict[str, Any] = {
            "budget": self.budget,
            "smartctx_us_median": float(np.median(smart)),
            "smartctx_us_p99": float(np.percentile(smart, 99)),
            "baseline_us_median": float(np.median(base)),
            "baseline_us_p99": float(np.percentile(base, 99)),
            "smartctx_filled_at": self.smartctx_filled_at,
            "baseline_filled_at": self.baseline_filled_at,
            "smartctx_peak_mb": round(self.smartctx_peak_mb, 2),
        }
        out["speedup"] = out["baseline_us_median"] / max(out["smartctx_us_median"], 1e-9)
        return out


def _after_fill(times: list[float], filled: int | None) -> list[float]:
    return times[filled:] if filled is not None and filled < len(times) else times


def time_smartctx(
    slots: Sequence[Slot],
    budget: int,
    counter: TokenCounter,
    embedder: Embedder,
    tick: Callable[[int], None] | None = None,
) -> tuple[list[float], int | None]:
    """Microseconds per ``add`` and the index of the first add that evicted."""
    window = ContextWindow(budget, counter=counter, embedder=embedder, funnel=eviction_preset())
    times: list[float] = []
    filled: int | None = None
    clock = time.perf_counter_ns
    for i, slot in enumerate(slots):
        t0 = clock()
        result = window.add(slot)
        times.append((clock() - t0) / 1000.0)
        if filled is None and len(result.events) > 1:
            filled = i
        if tick is not None and i % TICK == TICK - 1:
            tick(TICK)
    return times, filled


def time_baseline(
    slots: Sequence[Slot],
    budget: int,
    counter: TokenCounter,
    tick: Callable[[int], None] | None = None,
) -> tuple[list[float], int | None]:
    """Microseconds per ``add`` of the seed algorithm (tokens counted once per slot)."""
    window = SeedWindow(budget)
    times: list[float] = []
    filled: int | None = None
    clock = time.perf_counter_ns
    for i, given in enumerate(slots):
        t0 = clock()
        slot = given.copy(tokens=counter.count(render_content(given)))
        evicted = window.add(slot)
        times.append((clock() - t0) / 1000.0)
        if filled is None and evicted:
            filled = i
        if tick is not None and i % TICK == TICK - 1:
            tick(TICK)
    return times, filled


def peak_memory_mb(
    slots: Sequence[Slot], budget: int, counter: TokenCounter, embedder: Embedder
) -> float:
    """Peak traced allocation (MB) while adding ``slots`` to a fresh window."""
    gc.collect()
    tracemalloc.start()
    window = ContextWindow(budget, counter=counter, embedder=embedder, funnel=eviction_preset())
    for slot in slots:
        window.add(slot)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def ingest(
    n: int,
    embedder: Embedder,
    *,
    seed: int = 11,
    progress: Progress | None = None,
) -> dict[str, float]:
    """Texts per second: ``embedder.embed`` alone vs ``ContextWindow.add_many`` (same texts).

    Both passes embed through the same :class:`ReportingEmbedder` (slices of 16 texts), so
    ``progress(phase, done, total)`` moves during the embedding and the comparison stays fair.
    """
    report = progress or (lambda _phase, _done, _total: None)
    slots = [s for s in make_slots(n + 1, seed=seed) if s.kind is not SlotKind.SYSTEM]
    slots = list({s.text: s for s in slots}.values())
    texts = [s.text for s in slots]
    counter = get_counter()
    embedder.embed(texts[:4])
    counter.count(texts[0])
    alone = ReportingEmbedder(embedder, lambda d, t: report("ingest: embedder alone", d, t))
    t0 = time.perf_counter()
    alone.embed(texts)
    embed_s = time.perf_counter() - t0
    windowed = ReportingEmbedder(embedder, lambda d, t: report("ingest: smartctx window", d, t))
    window = ContextWindow(
        SIZES["1M"], counter=counter, embedder=windowed, funnel=eviction_preset()
    )
    t0 = time.perf_counter()
    window.add_many(slots)
    window_s = time.perf_counter() - t0
    return {
        "texts": float(len(texts)),
        "embedder_per_s": len(texts) / embed_s,
        "smartctx_per_s": len(texts) / window_s,
    }


def run(
    *,
    slots: int = 100_000,
    sizes: dict[str, int] | None = None,
    ingest_texts: int = 2000,
    ingest_embedder: str = "use",
    memory: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the whole benchmark; returns the JSON-ready result (see the module docstring)."""
    report = progress or (lambda _phase, _done, _total: None)
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
    chosen = sizes if sizes is not None else SIZES
    inputs = make_slots(slots)
    rendered = [render_content(s) for s in inputs]
    counter = CachedCounter(get_counter(), rendered)
    embedder = CachedEmbedder(HashingEmbedder(), [s.text for s in inputs])
    total = len(chosen) * 2 * len(inputs) + 1
    done = 0
    phase = "preparing"

    def tick(count: int) -> None:
        nonlocal done
        done += count
        report(phase, done, total)

    window: dict[str, Any] = {}
    for label, budget in chosen.items():
        phase = f"{label}: smartctx"
        smart, smart_fill = time_smartctx(inputs, budget, counter, embedder, tick)
        phase = f"{label}: seed baseline"
        base, base_fill = time_baseline(inputs, budget, counter, tick)
        peak = 0.0
        if memory:
            report(f"{label}: peak memory", done, total)
            peak = peak_memory_mb(inputs, budget, counter, embedder)
        result = SizeResult(
            label,
            budget,
            _after_fill(smart, smart_fill),
            _after_fill(base, base_fill),
            smart_fill,
            base_fill,
            peak,
        )
        window[label] = result.to_dict()
    report(f"ingest ({ingest_embedder}): loading the embedder", done, total)
    figures = ingest(ingest_texts, get_embedder(ingest_embedder), progress=report)
    report("done", total, total)
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
    return {
        "slots": slots,
        "window": window,
        "ingest": {**figures, "embedder": ingest_embedder},
        "machine": {**machine_info(), "load_start": load_start, "load_end": load_end},
    }
