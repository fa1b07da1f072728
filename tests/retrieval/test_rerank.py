"""Spreading scores to neighbouring turns (smartctx.retrieval.rerank)."""

from __future__ import annotations

import numpy as np

from smartctx.retrieval.rerank import neighbours, spread


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
