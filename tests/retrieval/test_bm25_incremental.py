"""IncrementalBM25 scores exactly what a bm25s index rebuilt from the same documents scores."""

from __future__ import annotations

import random

import bm25s
import numpy as np

from smartctx.retrieval.bm25 import IncrementalBM25

WORDS = [
    "vpn",
    "laptop",
    "hotel",
    "leave",
    "badge",
    "printer",
    "password",
    "paris",
    "berlin",
    "desk",
]


def _bm25s(docs: list[list[str]], query: list[str]) -> np.ndarray:
    model = bm25s.BM25(k1=1.2, b=0.75)
    model.index(docs, show_progress=False)
    known = [t for t in query if t in model.vocab_dict]
    return np.asarray(model.get_scores(known), dtype=np.float32) if known else np.zeros(len(docs))


def test_scores_match_bm25s_while_growing_and_after_removal() -> None:
    rng = random.Random(3)
    docs = [rng.choices(WORDS, k=rng.randint(1, 9)) for _ in range(60)]
    index = IncrementalBM25()
    for start in range(0, 60, 20):
        index.add(docs[start : start + 20])
        for query in (["vpn", "paris"], ["desk", "desk", "badge"], ["unknown"]):
            expected = _bm25s(docs[: start + 20], query)
            assert np.allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)
    keep = [p for p in range(60) if p % 3]
    index.keep(keep)
    kept = [docs[p] for p in keep]
    assert len(index) == len(kept)
    assert np.allclose(index.scores(["hotel", "leave"]), _bm25s(kept, ["hotel", "leave"]), 1e-5)


def test_empty_index_and_empty_documents_score_zero() -> None:
    index = IncrementalBM25()
    assert index.scores(["vpn"]).shape == (0,)
    index.add([[], []])
    assert index.scores(["vpn"]).tolist() == [0.0, 0.0]
