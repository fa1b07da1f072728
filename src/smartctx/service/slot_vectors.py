"""Recall vectors kept with the context log, so replicas embed a user message once.

Two servers taking turns on a conversation each index for recall the messages the other one
logged. The replica that served a message embedded it during the turn (the relevance gate and
the knowledge search ask for its vector), so :class:`EmbedderVectors` hands that vector to the
store with the slot (:class:`smartctx.store.context_log.SlotVectors`), and a replica loading the
slot seeds its own embedder's cache with it: its recall index then finds the vector there
instead of embedding the text again (about 3 ms of CPU a message with USE on this kind of
machine). Only user messages are stored: knowledge chunks come with the knowledge base's
vectors, and a vector the cache does not hold is not computed for the store.

Cost on the turn path: a dictionary look-up per new slot when saving, a ``frombuffer`` per stored
vector when loading.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.slots import Slot, SlotKind

STORED_KINDS = frozenset({SlotKind.USER})
"""Kinds whose recall vector is stored with the slot."""


class EmbedderVectors:
    """Implements ``smartctx.store.context_log.SlotVectors`` over a :class:`CachedEmbedder`;
    ``name`` is the embedder's name and dimension, so another model's vectors are never taken."""

    def __init__(self, embedder: CachedEmbedder) -> None:
        self.embedder = embedder
        self.name = f"{embedder.name}/{embedder.dim}"[:64]

    def vector_of(self, slot: Slot) -> bytes | None:
        if slot.kind not in STORED_KINDS:
            return None
        vector = self.embedder.peek(slot.text)
        return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()

    def learn(self, texts: Sequence[str], vectors: Sequence[bytes]) -> None:
        dim = self.embedder.dim
        rows = [np.frombuffer(v, dtype=np.float32) for v in vectors]
        kept = [(t, r) for t, r in zip(texts, rows, strict=True) if r.shape[0] == dim]
        if kept:
            self.embedder.seed([t for t, _ in kept], [r for _, r in kept])
