"""HybridIndex: BM25 + vectors with reciprocal rank fusion."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from smartctx.core import HashingEmbedder, InvalidInput
from smartctx.retrieval import Hit, HybridIndex

DOCS = {
    "vpn": "Connect to the VPN with the GlobalProtect client and your badge number.",
    "leave": "Annual leave requests go to your manager at least two weeks ahead.",
    "pwd": "Passwords expire every ninety days; reset them on the self-service portal.",
    "exp": "Expense reimbursement needs a receipt for every item above twenty euros.",
}


@pytest.fixture
def index() -> HybridIndex:
    ix = HybridIndex(embedder=HashingEmbedder())
    ix.add(list(DOCS), list(DOCS.values()), [{"topic": k} for k in DOCS])
    return ix


def test_search_finds_the_relevant_document_first(index: HybridIndex) -> None:
    hits = index.search("how do I reset my password", k=2)
    assert isinstance(hits[0], Hit)
    assert hits[0].id == "pwd"
    assert hits[0].text == DOCS["pwd"]
    assert hits[0].metadata == {"topic": "pwd"}
    assert hits[0].score > hits[1].score


def test_k_limits_and_zero_k_is_empty(index: HybridIndex) -> None:
    assert len(index.search("the", k=3)) <= 3
    assert index.search("vpn", k=0) == []
    assert HybridIndex().search("anything") == []


def test_where_filters_by_metadata(index: HybridIndex) -> None:
    hits = index.search("vpn client", k=4, where=lambda m: m["topic"] != "vpn")
    assert "vpn" not in [h.id for h in hits]


def test_among_restricts_to_ids(index: HybridIndex) -> None:
    hits = index.search("vpn receipt", k=4, among={"exp", "leave"})
    assert {h.id for h in hits} <= {"exp", "leave"}
    assert hits[0].id == "exp"


def test_readding_an_id_replaces_it(index: HybridIndex) -> None:
    index.add(["vpn"], ["The cafeteria serves lunch from noon."], [{"topic": "food"}])
    assert len(index) == 4
    assert index.search("lunch cafeteria", k=1)[0].id == "vpn"
    assert index.get("vpn").metadata == {"topic": "food"}
    assert float(index.lexical_scores("GlobalProtect badge").max()) == 0.0
    assert index.vectors().shape == (4, 256)


def test_remove_drops_documents(index: HybridIndex) -> None:
    index.remove(["pwd", "unknown"])
    assert len(index) == 3
    assert "pwd" not in index
    assert all(h.id != "pwd" for h in index.search("password reset portal", k=4))
    assert index.ids == ["vpn", "leave", "exp"]


def test_lexical_only_index_needs_no_embedder() -> None:
    ix = HybridIndex()
    ix.add(["a", "b"], ["red apples and pears", "blue sky"])
    assert [h.id for h in ix.search("apple", k=5)] == ["a"]
    assert ix.vectors().shape == (2, 0)
    assert ix.search("zebra") == []


def test_ties_break_by_id_deterministically() -> None:
    ix = HybridIndex()
    ix.add(["z", "m", "a"], ["same words here"] * 3)
    assert [h.id for h in ix.search("same words", k=3)] == ["a", "m", "z"]


def test_given_vectors_skip_embedding_and_are_checked() -> None:
    class Boom:
        name, dim = "boom", 2

        def embed(self, texts: object) -> np.ndarray:
            raise AssertionError("must not embed passages when vectors are given")

        def embed_queries(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0]], dtype=np.float32)

    ix = HybridIndex(embedder=Boom())
    ix.add(["x", "y"], ["alpha", "beta"], vectors=np.array([[0.0, 3.0], [2.0, 0.0]]))
    assert np.allclose(np.linalg.norm(ix.vectors(), axis=1), 1.0)
    assert ix.search("gamma", k=1)[0].id == "y"  # only the vector list can match
    with pytest.raises(InvalidInput):
        ix.add(["z"], ["gamma"], vectors=np.zeros((1, 3)))
    with pytest.raises(InvalidInput):
        ix.add(["z"], ["gamma"], vectors=np.zeros((2, 2)))


def test_bad_arguments_are_clear_errors() -> None:
    ix = HybridIndex()
    with pytest.raises(InvalidInput):
        ix.add(["a", "a"], ["x", "y"])
    with pytest.raises(InvalidInput):
        ix.add(["a"], ["x", "y"])
    with pytest.raises(InvalidInput):
        HybridIndex(rrf_k=-1)
    with pytest.raises(InvalidInput):
        HybridIndex(weights=(1.0, -1.0))


def test_fusion_rewards_agreement() -> None:
    """A document ranked well by both lists beats one ranked first by only one."""
    ix = HybridIndex(embedder=HashingEmbedder(), rrf_k=60)
    ix.add(
        ["both", "lex", "other"],
        ["hiking trip in the mountains", "mountains mountains mountains", "a quiet evening"],
    )
    hits = ix.search("hiking in the mountains", k=3)
    assert hits[0].id == "both"


def test_embed_queries_is_used_for_the_query() -> None:
    calls: list[str] = []

    class Spy(HashingEmbedder):
        def embed_queries(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            calls.append(" | ".join(texts))
            return super().embed(texts)

    ix = HybridIndex(embedder=Spy())
    ix.add(["a"], ["text"])
    ix.search("query one")
    ix.search("query one")  # cached
    assert calls == ["query one"]
    ix.prepare_queries(["query two", "query one", "query three"])
    ix.search("query three")
    assert calls == ["query one", "query two | query three"]


def test_equal_values_share_the_mean_of_the_ranks_they_span() -> None:
    from smartctx.retrieval.hybrid import mean_ranks

    values = np.array([0.5, 0.2, 0.5, 0.9, 0.2, 0.5])
    # 0.2 x2 hold ranks 1-2, 0.5 x3 ranks 3-5, 0.9 rank 6
    assert mean_ranks(values).tolist() == [4.0, 1.5, 4.0, 6.0, 1.5, 4.0]
    assert mean_ranks(np.array([])).tolist() == []
    rng = np.random.default_rng(0)
    for size in (1, 7, 300):
        drawn = np.round(rng.random(size), 1)  # many ties
        ordered = np.sort(drawn)
        first = np.searchsorted(ordered, drawn, side="left") + 1
        last = np.searchsorted(ordered, drawn, side="right")
        assert mean_ranks(drawn).tolist() == ((first + last) / 2.0).tolist()


def test_vectors_added_one_at_a_time_equal_a_batch_and_earlier_ones_are_not_copied() -> None:
    texts = [f"{text} ({i})" for i, text in enumerate(DOCS.values())] * 5
    ids = [f"d{i}" for i in range(len(texts))]
    batch = HybridIndex(embedder=HashingEmbedder())
    batch.add(ids, texts)
    grown = HybridIndex(embedder=HashingEmbedder())
    views = []
    for doc_id, text in zip(ids, texts, strict=True):
        grown.add([doc_id], [text])
        views.append(grown.vectors_view())
    assert np.array_equal(grown.vectors(), batch.vectors())
    assert grown.search("reset my password", 5) == batch.search("reset my password", 5)
    # an add writes after the rows already there: most adds share the matrix, unchanged
    shared = sum(np.shares_memory(a, b) for a, b in itertools.pairwise(views))
    assert shared >= len(views) - 6
    assert all(np.array_equal(v, batch.vectors()[: len(v)]) for v in views)
    grown.remove(["d3"])
    grown.add(["d3"], [texts[3]])
    assert grown.vectors()[-1].tolist() == batch.vectors()[3].tolist()
