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


def test_replacing_a_document_in_place_scores_as_a_fresh_index() -> None:
    rng = random.Random(5)
    docs = [rng.choices(WORDS, k=rng.randint(1, 9)) for _ in range(40)]
    index = IncrementalBM25()
    index.add(docs)
    for _ in range(30):
        position = rng.randrange(len(docs))
        docs[position] = rng.choices(WORDS, k=rng.randint(0, 9))
        index.replace(position, docs[position])
    assert len(index) == 40
    for query in (["vpn", "paris"], ["desk", "desk", "badge"], ["printer"]):
        assert np.allclose(index.scores(query), _bm25s(docs, query), rtol=1e-5, atol=1e-6)


def test_hybrid_index_replaces_a_present_id_in_place() -> None:
    from smartctx.core import HashingEmbedder
    from smartctx.retrieval.hybrid import HybridIndex

    index = HybridIndex(embedder=HashingEmbedder())
    index.add(["a", "b", "c"], ["vpn laptop", "hotel paris", "badge desk"])
    index.add(["b", "d"], ["printer password", "berlin leave"])
    fresh = HybridIndex(embedder=HashingEmbedder())
    texts = ["vpn laptop", "printer password", "badge desk", "berlin leave"]
    fresh.add(["a", "b", "c", "d"], texts)
    for query in ("printer", "hotel paris", "berlin desk"):
        assert index.search(query, k=4) == fresh.search(query, k=4)


def test_adds_replacements_and_queries_interleaved_score_as_a_fresh_index() -> None:
    # the postings' arrays are kept between queries and extended by what was added since: any
    # interleaving of adds, in-place replacements, removals and queries must score as a rebuild
    rng = random.Random(11)
    docs: list[list[str]] = []
    index = IncrementalBM25()
    for _ in range(200):
        action = rng.random()
        if action < 0.5 or not docs:
            new = [rng.choices(WORDS, k=rng.randint(0, 9)) for _ in range(rng.randint(1, 3))]
            docs += new
            index.add(new)
        elif action < 0.7:
            position = rng.randrange(len(docs))
            docs[position] = rng.choices(WORDS, k=rng.randint(0, 9))
            index.replace(position, docs[position])
        elif action < 0.75:
            keep = [p for p in range(len(docs)) if rng.random() < 0.8]
            docs = [docs[p] for p in keep]
            index.keep(keep)
        query = rng.choices(WORDS, k=rng.randint(1, 3))
        expected = _bm25s(docs, query) if docs else np.zeros(0)
        assert np.allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)
