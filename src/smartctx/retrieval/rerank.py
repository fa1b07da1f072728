"""Re-ranking after fusion: spreading a turn's score to the turns around it, and diversity.

A question matches one turn and its answer is the next one ("Where did you go?" / "Paris"); a
person tells a story over two of their own turns, with the other speaker's reply between them.
So after fusion (:meth:`TieredRecaller.scores`) each turn gains ``weight`` times the best fused
score of the turns ``distance`` places before and after it in the same session (distance 1: the
reply; distance 2: the same speaker's previous and next turn in a two-person dialogue). Spreading
reads the scores before any spreading, so a hit never lifts its neighbour's neighbour.

Then :func:`diversify` re-orders the best :data:`DIVERSITY_POOL` turns by maximal marginal
relevance: a question with several evidence turns ("What books has Melanie read?") needs them
all, and a turn that says what a turn ranked above it says adds little. Each step takes the turn
with the highest ``score / best score - weight * closeness``, where closeness is its highest
cosine to a turn already taken, counted above the pool's mean cosine between two of its turns
and scaled by what is left above it: ``(cosine - mean) / (1 - mean)``. Embedders place unrelated
texts at different cosines (a pool's mean is about 0.39 with USE and 0.86 with e5 on LoCoMo),
and a raw cosine weight tuned for one embedder swamped the relevance of the other: 1.5, tuned
with e5, cost USE 7 points of recall@10 on LoCoMo.

The rules are the same for every question; the weights are global
(:class:`~smartctx.retrieval.tiered.TierWeights`). Pure and deterministic; ``spread`` is O(n)
numpy work over n candidates once their :class:`Neighbourhood` is known (which grows by the turns
appended, so a recaller keeps it between queries), ``diversify`` O(min(k, pool) x pool x dim) for
the k places asked, :func:`top` O(n) numpy work and a sort of the k best.

(Measured and dropped: a greedy re-ranking that spreads the top over sessions, which lowered
recall@10 on LoCoMo at every penalty tried.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Scores = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

DIVERSITY_POOL = 100
"""How many of the best turns :func:`diversify` re-orders (the rest keep their order)."""


class Neighbourhood:
    """The positions of each turn's neighbours ``1..depth`` turns before and after it in the same
    session (-1 when none), for turns given in conversation order with their session groups.
    :meth:`extend` appends turns: it costs the new turns, not the ones before them."""

    def __init__(self, depth: int = 2) -> None:
        self.depth = depth
        self._before = [np.empty(0, dtype=np.intp) for _ in range(depth)]
        self._after = [np.empty(0, dtype=np.intp) for _ in range(depth)]
        self._last: dict[str, list[int]] = {}  # group -> its last ``depth`` positions

    def __len__(self) -> int:
        return len(self._before[0]) if self.depth else 0

    def extend(self, groups: Sequence[str]) -> None:
        """Append turns (their session groups, in conversation order)."""
        start = len(self)
        blank = np.full(len(groups), -1, dtype=np.intp)
        self._before = [np.concatenate([b, blank]) for b in self._before]
        self._after = [np.concatenate([a, blank]) for a in self._after]
        for i, group in enumerate(groups, start):
            earlier = self._last.setdefault(group, [])
            for distance in range(1, min(self.depth, len(earlier)) + 1):
                j = earlier[-distance]
                self._before[distance - 1][i] = j
                self._after[distance - 1][j] = i
            earlier.append(i)
            del earlier[: -self.depth or None]

    def at(self, distance: int) -> tuple[Index, Index]:
        """The turn ``distance`` places before and after each turn (1 <= distance <= depth)."""
        return self._before[distance - 1], self._after[distance - 1]


def neighbours(groups: Sequence[str], distance: int = 1) -> tuple[Index, Index]:
    """For turns in conversation order with their session ``groups``: the position of the turn
    ``distance`` turns before and after each one in the same session (-1 when none)."""
    hood = Neighbourhood(distance)
    hood.extend(groups)
    return hood.at(distance)


def spread(
    scores: Scores, groups: Sequence[str] | Neighbourhood, weights: Sequence[float]
) -> Scores:
    """``scores`` plus, for each distance d = 1, 2, ..., ``weights[d - 1]`` times the best score
    of the turns d places before and after in the same session (see the module doc). ``scores``
    and ``groups`` (or their :class:`Neighbourhood`, of depth ``len(weights)`` at least) are over
    the same turns in conversation order; returns a new array."""
    base = np.asarray(scores, dtype=np.float64)
    out = base.copy()
    padded = np.append(base, 0.0)  # position -1 reads the trailing 0
    hood = groups
    if not isinstance(hood, Neighbourhood):
        hood = Neighbourhood(len(weights))
        hood.extend(groups)  # type: ignore[arg-type]
    for distance, weight in enumerate(weights, 1):
        if weight <= 0 or not len(base):
            continue
        before, after = hood.at(distance)
        out += weight * np.maximum(padded[before], padded[after])
    return out


def top(values: npt.NDArray[Any], positions: Index, k: int) -> Index:
    """The at most ``k`` of ``positions`` (ascending) with the highest ``values``, best first,
    ties by position: ``positions[np.lexsort((positions, -values[positions]))][:k]`` without
    sorting them all (those tied with the k-th value are all kept for the sort)."""
    chosen = positions
    if len(positions) > k > 0:
        worth = np.asarray(values, dtype=np.float64)[positions]
        kth = np.partition(worth, len(worth) - k)[len(worth) - k]
        chosen = positions[worth >= kth]
    worth = -np.asarray(values, dtype=np.float64)[chosen]
    out: Index = chosen[np.lexsort((chosen, worth))][: max(0, k)]
    return out


def diversify(
    scores: Scores, vectors: npt.NDArray[np.float32], weight: float, limit: int | None = None
) -> Index:
    """The order in which to take turns whose ``scores`` are given best first (positive) with
    their unit ``vectors`` (one row each): greedy maximal marginal relevance (see the module
    doc). The first stays first; ties go to the earlier turn; ``weight <= 0`` keeps the order.
    Only the first ``limit`` places are chosen so (the rest follow in their given order), so
    the cost is ``limit`` matrix-vector products over the pool."""
    n = len(scores)
    steps = n if limit is None else max(1, min(n, limit))
    if weight <= 0 or n < 3:
        return np.arange(n, dtype=np.intp)
    relevance = np.asarray(scores, dtype=np.float64) / max(float(scores[0]), 1e-12)
    rows = np.asarray(vectors, dtype=np.float64)
    # Closeness is counted above the pool's mean cosine between two of its turns: embedders
    # differ in where unrelated texts sit (about 0.4 for USE, 0.8 for e5), so one weight means
    # the same for each. Subtracting a constant leaves the argmax alone; the scale is what counts.
    total = rows.sum(axis=0)
    baseline = (float(total @ total) - n) / (n * (n - 1))
    weight = weight / max(1.0 - baseline, 1e-6)
    taken = np.zeros(n, dtype=bool)
    order = [0]
    taken[0] = True
    closest = rows @ rows[0]
    for _ in range(1, steps):
        value = np.where(taken, -np.inf, relevance - weight * closest)
        pick = int(np.argmax(value))
        order.append(pick)
        taken[pick] = True
        np.maximum(closest, rows @ rows[pick], out=closest)
    rest = np.flatnonzero(~taken)
    return np.concatenate([np.array(order, dtype=np.intp), rest]).astype(np.intp)
