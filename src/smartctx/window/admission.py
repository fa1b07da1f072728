"""Admission: is a new slot a duplicate of an active one? (DESIGN.md section 2, "Admission").

Two indexes over the *active* slots of one window:

- exact: a dict from (kind, hash of the normalised text) to the slot id, plus a dict from a
  knowledge document's ``source_id`` to its slot; O(1) per lookup;
- semantic (optional, needs an embedder): per kind (its group), a ring of the most recent
  ``capacity`` admitted slots (default 256) with their embeddings. A lookup is one matrix-vector
  product over that ring, so its cost is bounded by ``capacity``, never by the window size. Older
  slots of a group are still caught by the exact index, not by the semantic one. A semantic match
  also needs equal guard signatures (same numbers, same negation / on-off words), so a slot is
  embedded only when the ring holds another one with its signature, and the ring's slots are
  embedded when such a slot arrives: a message with a number no other one carries (a ticket
  number, an amount) costs no embedding. The matches are the same as embedding every slot at
  once; a served turn embedded its user message and its reply on the event loop, 3-7 ms each
  with USE.

A message that is only a greeting, thanks or farewell formula is keyed by the formula's meaning
(:mod:`smartctx.window.phrases`), so "Hello" and "您好" are exact duplicates across languages,
where embeddings of one-word formulas cannot tell "hello" from "thanks".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from smartctx.core.embeddings import Embedder, Vector
from smartctx.core.slots import Slot, SlotKind
from smartctx.window.normalize import (
    key_of_normalized,
    normalize_text,
    signature_of_normalized,
)

SEMANTIC_GROUPS = frozenset({"user", "agent", "rag_doc", "memory"})
"""Groups checked semantically; system, summary and tool-log slots are only checked exactly (a
tool log is machine output, a call and its result ids, where a near-duplicate is another call:
embedding one, every turn, bought nothing)."""

MERGE_KINDS = frozenset({SlotKind.USER, SlotKind.AGENT, SlotKind.TOOL_LOG})
"""Kinds whose duplicates are merged into the earlier slot; every other kind is refused."""


def kind_group(kind: SlotKind) -> str:
    """The dedup group of a kind: the kind itself. A slot is only ever compared with active
    slots of its own kind, so an agent reply echoing the user's question is never merged into
    the user's message (nor the reverse)."""
    return kind.value


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A match for a new slot: the active slot it duplicates, why, and the similarity."""

    survivor_id: str
    reason: str  # "exact", "source_id" or "semantic"
    similarity: float


class Probe:
    """What admission computes about one slot, once: its normalised text, exact key, embedding
    (when the semantic check needs one) and, lazily, its guard signature."""

    __slots__ = ("_sig", "group", "key", "norm", "text", "vector")

    def __init__(self, slot: Slot, vector: Vector | None = None) -> None:
        self.text = slot.text
        self.group = kind_group(slot.kind)
        self.norm = normalize_text(slot.text)
        self.key = key_of_normalized(self.norm)
        self.vector = vector
        self._sig: frozenset[str] | None = None

    @property
    def sig(self) -> frozenset[str]:
        if self._sig is None:
            self._sig = signature_of_normalized(self.norm)
        return self._sig


class _Ring:
    """The last ``capacity`` slots of one group: their ids, probes and embeddings (a row's
    vector is set once its probe has one; see the module docstring).

    The vector matrix starts small and doubles up to ``capacity`` rows as the group fills, so a
    short conversation does not hold ``capacity`` rows per group (512 KB each for USE)."""

    def __init__(self, capacity: int, dim: int) -> None:
        self.vectors = np.zeros((min(capacity, 8), dim), dtype=np.float32)
        self.ids: list[str | None] = [None] * capacity
        self.probes: list[Probe | None] = [None] * capacity
        self.signatures: dict[frozenset[str], int] = {}
        self.next = 0

    def put(self, slot_id: str, probe: Probe) -> tuple[int, str | None]:
        row = self.next
        evicted = self.ids[row]
        if evicted is not None:
            self.clear(row)
        if row >= len(self.vectors):
            grown = np.zeros((min(len(self.ids), 2 * len(self.vectors)), self.vectors.shape[1]))
            grown[: len(self.vectors)] = self.vectors
            self.vectors = grown.astype(np.float32)
        if probe.vector is not None:
            self.vectors[row] = probe.vector
        self.ids[row] = slot_id
        self.probes[row] = probe
        self.signatures[probe.sig] = self.signatures.get(probe.sig, 0) + 1
        self.next = (row + 1) % len(self.ids)
        return row, evicted

    def clear(self, row: int) -> None:
        probe = self.probes[row]
        if probe is not None:
            left = self.signatures[probe.sig] - 1
            if left:
                self.signatures[probe.sig] = left
            else:
                del self.signatures[probe.sig]
        self.vectors[row] = 0.0
        self.ids[row] = None
        self.probes[row] = None

    def rows_like(self, probe: Probe) -> list[int]:
        """The rows whose slot has ``probe``'s guard signature (the only possible matches)."""
        if probe.sig not in self.signatures:
            return []
        return [
            row
            for row, other in enumerate(self.probes)
            if other is not None and self.ids[row] is not None and other.sig == probe.sig
        ]

    def set_vector(self, row: int, vector: Vector) -> None:
        probe = self.probes[row]
        if probe is not None:
            probe.vector = vector
            self.vectors[row] = vector

    def best(self, probe: Probe, threshold: float) -> tuple[str, float] | None:
        if probe.vector is None:
            return None
        sims = self.vectors @ probe.vector
        if sims[int(sims.argmax())] < threshold:
            return None
        rows = np.flatnonzero(sims >= threshold)
        for row in sorted(rows.tolist(), key=lambda r: (-float(sims[r]), r)):
            slot_id, other = self.ids[row], self.probes[row]
            if slot_id is not None and other is not None and other.sig == probe.sig:
                return slot_id, float(sims[row])
        return None


class AdmissionIndex:
    """Exact and semantic duplicate indexes over the active slots of one window.

    Not thread-safe (the window that owns it is not). ``embedder=None`` disables semantic checks.
    """

    def __init__(
        self, *, embedder: Embedder | None, threshold: float = 0.92, capacity: int = 256
    ) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.capacity = capacity
        self._exact: dict[tuple[str, str], str] = {}
        self._sources: dict[str, str] = {}
        self._keys: dict[str, tuple[str, str]] = {}
        self._rings: dict[str, _Ring] = {}
        self._rows: dict[str, tuple[str, int]] = {}

    def wants_vector(self, slot: Slot) -> bool:
        """Whether ``slot`` needs an embedding for the semantic check."""
        return self.embedder is not None and kind_group(slot.kind) in SEMANTIC_GROUPS

    def embed(self, slots: list[Slot]) -> dict[str, Vector]:
        """Embeddings (one batch) of those ``slots`` that need one, keyed by slot id."""
        wanted = [s for s in slots if self.wants_vector(s)]
        if not wanted or self.embedder is None:
            return {}
        matrix = self.embedder.embed([s.text for s in wanted])
        return {s.id: matrix[i] for i, s in enumerate(wanted)}

    def probe(self, slot: Slot, vector: Vector | None = None) -> Probe:
        """The probe of ``slot``; ``vector`` is its embedding when already computed (batches)."""
        return Probe(slot, vector)

    def _ensure_vector(self, probe: Probe) -> Vector:
        """``probe``'s embedding, computed now if it has none (only called with an embedder)."""
        if probe.vector is None:
            assert self.embedder is not None
            probe.vector = self.embedder.embed([probe.text])[0]
        return probe.vector

    def find(self, slot: Slot, probe: Probe) -> Duplicate | None:
        """The active duplicate of ``slot``, if any (exact first, then source id, then semantic)."""
        survivor = self._exact.get((probe.group, probe.key))
        if survivor is not None:
            return Duplicate(survivor, "exact", 1.0)
        if slot.kind is SlotKind.RAG_DOC and slot.source_id:
            survivor = self._sources.get(slot.source_id)
            if survivor is not None:
                return Duplicate(survivor, "source_id", 1.0)
        ring = self._rings.get(probe.group) if self.wants_vector(slot) else None
        rows = ring.rows_like(probe) if ring is not None else []
        if ring is None or not rows:
            return None  # no slot with its guard signature: no match, nothing to embed
        for row in rows:
            other = ring.probes[row]
            if other is not None and other.vector is None:
                ring.set_vector(row, self._ensure_vector(other))
        self._ensure_vector(probe)
        hit = ring.best(probe, self.threshold)
        return Duplicate(hit[0], "semantic", hit[1]) if hit else None

    def add(self, slot: Slot, probe: Probe | None = None) -> None:
        """Index an admitted active slot (its probe is computed if not given)."""
        if probe is None:
            probe = self.probe(slot)
        self._index_exact(slot, probe)
        if self.wants_vector(slot):
            self._put(slot.id, probe)

    def _index_exact(self, slot: Slot, probe: Probe) -> None:
        key = (probe.group, probe.key)
        self._exact.setdefault(key, slot.id)
        self._keys[slot.id] = key
        if slot.kind is SlotKind.RAG_DOC and slot.source_id:
            self._sources.setdefault(slot.source_id, slot.id)

    def text_keys(self) -> set[str]:
        """The :func:`~smartctx.window.normalize.text_key` of every indexed (active) slot."""
        return {key for _, key in self._keys.values()}

    def remove(self, slot: Slot) -> None:
        """Forget ``slot`` (it left the window)."""
        key = self._keys.pop(slot.id, None)
        if key is not None and self._exact.get(key) == slot.id:
            del self._exact[key]
        if slot.source_id and self._sources.get(slot.source_id) == slot.id:
            del self._sources[slot.source_id]
        where = self._rows.pop(slot.id, None)
        if where is not None:
            self._rings[where[0]].clear(where[1])

    def rebuild(self, active_by_recency: Iterable[Slot]) -> None:
        """Re-index restored active slots (their embeddings are computed when needed)."""
        per_group: dict[str, list[tuple[Slot, Probe]]] = {}
        for slot in active_by_recency:
            probe = Probe(slot)
            self._index_exact(slot, probe)
            if self.wants_vector(slot):
                per_group.setdefault(probe.group, []).append((slot, probe))
        for group in per_group.values():
            for slot, probe in group[-self.capacity :]:
                self._put(slot.id, probe)

    def _put(self, slot_id: str, probe: Probe) -> None:
        ring = self._rings.get(probe.group)
        if ring is None:
            dim = (
                int(probe.vector.shape[-1])
                if probe.vector is not None
                else int(self.embedder.dim if self.embedder is not None else 1)
            )
            ring = self._rings[probe.group] = _Ring(self.capacity, dim)
        row, evicted = ring.put(slot_id, probe)
        if evicted is not None:
            self._rows.pop(evicted, None)
        self._rows[slot_id] = (probe.group, row)
