"""The semantic ring grows with its group: small when young, still exact when full."""

from __future__ import annotations

import numpy as np

from smartctx.core import HashingEmbedder
from smartctx.core.slots import Slot, SlotKind
from smartctx.window.admission import Probe, _Ring


def test_ring_starts_small_grows_to_capacity_and_finds_every_row() -> None:
    embedder = HashingEmbedder(dim=64)
    ring = _Ring(capacity=20, dim=64)
    assert ring.vectors.shape == (8, 64)
    texts = [f"note number {i} about item {i * 7}" for i in range(25)]
    probes = []
    for i, text in enumerate(texts):
        probe = Probe(Slot(SlotKind.USER, text), embedder.embed([text])[0])
        probes.append(probe)
        ring.put(f"s{i}", probe)
    assert ring.vectors.shape == (20, 64) and ring.vectors.dtype == np.float32
    # the last 20 are findable, the 5 oldest were overwritten
    for i in (24, 12, 5):
        hit = ring.best(probes[i], 0.99)
        assert hit is not None and hit[0] == f"s{i}"
    assert ring.best(probes[2], 0.99) is None
