"""Re-ranking after fusion (smartctx.retrieval.rerank): spreading to neighbours, diversity."""

from __future__ import annotations

import numpy as np

from smartctx.retrieval.rerank import diversify, neighbours, spread


def test_neighbours_stay_within_a_session() -> None:
    before, after = neighbours(["a", "a", "b", "a", "b"])
    assert before.tolist() == [-1, 0, -1, 1, 2]
    assert after.tolist() == [1, 3, 4, -1, -1]
    before, after = neighbours(["a", "a", "b", "a", "b"], distance=2)
    assert before.tolist() == [-1, -1, -1, 0, -1]
    assert after.tolist() == [3, -1, -1, -1, -1]


def test_a_hit_lifts_the_turns_beside_it_not_their_neighbours() -> None:
    scores = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.2])
    groups = ["a"] * 5 + ["b"]
    assert spread(scores, groups, [0.5]).tolist() == [0.0, 0.5, 1.0, 0.5, 0.0, 0.2]
    assert spread(scores, groups, [0.0]).tolist() == scores.tolist()
    assert scores.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0, 0.2]  # the input is not changed


def test_distance_two_reaches_the_same_speakers_turns() -> None:
    scores = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    out = spread(scores, ["a"] * 5, [0.5, 0.25])
    assert out.tolist() == [0.25, 0.5, 1.0, 0.5, 0.25]


def test_the_best_neighbour_counts_and_spreading_reads_the_scores_before_it() -> None:
    scores = np.array([0.4, 0.0, 1.0])
    out = spread(scores, ["a"] * 3, [0.5])
    assert out.tolist() == [0.4, 0.5, 1.0]


def test_diversity_takes_a_different_turn_before_a_near_copy_of_one_taken() -> None:
    vectors = np.array([[1.0, 0.0], [0.995, 0.0998], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    scores = np.array([1.0, 0.95, 0.9, 0.5])
    # relevance - weight x closeness above the pool's mean cosine: the copy loses to the other
    assert diversify(scores, vectors, 1.5).tolist() == [0, 2, 3, 1]
    assert diversify(scores, vectors, 0.0).tolist() == [0, 1, 2, 3]
    assert diversify(scores[:2], vectors[:2], 1.5).tolist() == [0, 1]
    # equal values: the earlier turn first
    same = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    assert diversify(np.array([1.0, 0.5, 0.5]), same, 1.0).tolist() == [0, 1, 2]
    assert scores.tolist() == [1.0, 0.95, 0.9, 0.5]  # the input is not changed


def test_diversity_means_the_same_whatever_cosine_unrelated_texts_sit_at() -> None:
    # One pool seen by two "embedders": the second adds a direction every text shares, so every
    # cosine moves up (c' = (c + s) / (1 + s)) the way e5's sit above USE's. The order is the
    # same at every weight: closeness counts above the pool's mean cosine.
    rng = np.random.default_rng(7)
    base = rng.normal(size=(40, 16))
    base[:, -1] = 0.0
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    shared = np.zeros(16)
    shared[-1] = 1.0
    lifted = base + 1.5 * shared
    lifted /= np.linalg.norm(lifted, axis=1, keepdims=True)
    assert float((lifted @ lifted.T).mean()) > float((base @ base.T).mean()) + 0.5
    scores = np.sort(rng.uniform(0.1, 1.0, size=40))[::-1]
    for weight in (0.1, 0.2, 0.5, 1.0):
        same = diversify(scores, lifted, weight).tolist()
        assert diversify(scores, base, weight).tolist() == same
    assert diversify(scores, base, 0.5).tolist() != list(range(40))  # and it does re-order


def test_diversity_chooses_only_the_places_asked_for() -> None:
    vectors = np.array([[1.0, 0.0], [0.995, 0.0998], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    scores = np.array([1.0, 0.95, 0.9, 0.5])
    assert diversify(scores, vectors, 1.5, limit=2).tolist() == [0, 2, 1, 3]
    assert diversify(scores, vectors, 1.5, limit=1).tolist() == [0, 1, 2, 3]


def test_a_neighbourhood_grown_in_batches_equals_one_built_at_once() -> None:
    from smartctx.retrieval.rerank import Neighbourhood

    groups = ["a", "a", "b", "a", "b", "b", "c", "a", "c", "b"]
    grown = Neighbourhood(2)
    for start in range(0, len(groups), 3):
        grown.extend(groups[start : start + 3])
    assert len(grown) == len(groups)
    for distance in (1, 2):
        before, after = neighbours(groups, distance)
        assert grown.at(distance)[0].tolist() == before.tolist()
        assert grown.at(distance)[1].tolist() == after.tolist()
    scores = np.linspace(0.0, 1.0, len(groups))
    assert (
        spread(scores, grown, [0.2, 0.35]).tolist() == spread(scores, groups, [0.2, 0.35]).tolist()
    )


def test_top_equals_a_full_sort_ties_by_position() -> None:
    from smartctx.retrieval.rerank import top

    rng = np.random.default_rng(3)
    values = np.round(rng.random(500), 1)  # many ties at the cut
    positions = np.flatnonzero(values > 0.15)
    full = positions[np.lexsort((positions, -values[positions]))]
    for k in (0, 1, 5, 37, len(positions), len(positions) + 3):
        assert top(values, positions, k).tolist() == full[:k].tolist()


def _plain_diversify(scores: np.ndarray, vectors: np.ndarray, weight: float, limit: int) -> list:
    """The rule as the module doc states it, one place at a time (the reference)."""
    n = len(scores)
    relevance = scores / scores[0]
    rows = vectors.astype(np.float64)
    total = rows.sum(axis=0)
    mean = (float(total @ total) - n) / (n * (n - 1))
    scaled = weight / (1.0 - mean)
    order = [0]
    while len(order) < min(n, limit):
        best, pick = -np.inf, -1
        for i in range(n):
            if i in order:
                continue
            value = relevance[i] - scaled * max(float(rows[i] @ rows[j]) for j in order)
            if value > best + 1e-12:
                best, pick = value, i
        order.append(pick)
    return order + [i for i in range(n) if i not in order]


def test_diversity_follows_the_rule_place_by_place() -> None:
    rng = np.random.default_rng(11)
    for trial in range(20):
        n = int(rng.integers(3, 60))
        vectors = rng.normal(size=(n, 24)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        scores = np.sort(rng.uniform(0.05, 1.0, size=n))[::-1]
        weight = float(rng.choice([0.1, 0.2, 0.5, 1.5]))
        limit = int(rng.integers(1, n + 1))
        got = diversify(scores, vectors, weight, limit=limit).tolist()
        assert got == _plain_diversify(scores, vectors, weight, limit), trial
