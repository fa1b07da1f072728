"""The recall protocol: how the window asks for archived slots relevant to a query.

The engine (``smartctx.window``) calls a ``Recaller``; the retrieval layer implements it with hybrid
search. Both only depend on this protocol, so the engine never imports retrieval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from smartctx.core.slots import Slot


@runtime_checkable
class Recaller(Protocol):
    """Ranks candidate slots by relevance to a query."""

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        """The at most ``k`` most relevant candidates, best first, with a score (higher=better).

        Must not mutate the candidates; deterministic for the same inputs.
        """
        ...
