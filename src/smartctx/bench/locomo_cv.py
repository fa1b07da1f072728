"""Honest tuning for ``smartctx bench locomo --cv``: leave-one-conversation-out cross-validation.

The tiered recaller's weights (:class:`~smartctx.retrieval.tiered.TierWeights`) are chosen from a
small fixed grid (:data:`GRID`). For each conversation of the development split, the setting with
the best mean of recall@10 and recall@50 on the *other* conversations is applied to it; the
cross-validated figures are the means over every question so scored, overall and per category.
Beside them: the in-sample figures (the one setting best on all conversations at once, which
flatters it) and which setting each fold chose. Only the question text reaches retrieval; the
evidence scores the settings, never a single question's ranking.

Cost: each conversation is indexed once; a question's score lists are computed once per distinct
query (the first pass, plus one per distinct second-hop query) and re-weighted per setting.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from smartctx.bench.locomo_data import CATEGORIES, LoCoMo
from smartctx.bench.locomo_windows import conversation_slots
from smartctx.core.embeddings import Embedder
from smartctx.retrieval.tiered import TieredRecaller, TierWeights

GRID: dict[str, tuple[float, ...]] = {
    "fact": (0.5, 1.0),
    "diversity": (0.0, 0.2, 0.3),
    "speaker": (0.5, 1.0),
    "neighbour": (0.0, 0.2, 0.35),
    "neighbour2": (0.0, 0.2, 0.35),
    "hop_feedback": (0, 3, 5),
    "hop": (0.5, 0.75),
    "hop_words": (0, 4),
}
"""The settings tried: every combination (1,296), nothing else; the other weights keep their
defaults (entity 0.3, date 1: every fold chose them when the grid also tried 0; session 0.3:
four folds of five chose it when the grid tried 0 and 0.3, before diversity took its place;
asks 0.3: every fold chose it from the tenth round to the thirteenth, when the grid tried 0 and
0.3). Diversity 0.3 and hop 0.75 joined in issue 13's fifth round (the grid had 216 settings):
the cross-validated figures on this machine went 72.1 / 80.6 / 89.0 / 92.9 -> 72.8 / 81.2 / 88.9
/ 92.98 (``docs/benchmarks.md``). Hop words (0 or 4: the conversation's words nearest to the
question joining the second hop) took asks' place in the fourteenth round."""

Progress = Callable[[str, int], None]


def grid() -> list[TierWeights]:
    """Every setting of :data:`GRID`, in a fixed order."""
    names = list(GRID)
    out: list[TierWeights] = []
    for values in itertools.product(*(GRID[n] for n in names)):
        chosen: dict[str, Any] = dict(zip(names, values, strict=True))
        out.append(replace(TierWeights(), **chosen))
    return out


def _objective(recall: npt.NDArray[np.float64], ks: tuple[int, ...]) -> npt.NDArray[np.float64]:
    """Per setting: the mean over questions of (recall@10 + recall@50) / 2."""
    cols = [ks.index(k) for k in (10, 50) if k in ks] or [0]
    scores: npt.NDArray[np.float64] = recall[:, :, cols].mean(axis=(1, 2))
    return scores


@dataclass
class CvResult:
    """Cross-validated and in-sample recall, overall and per category, and the settings chosen."""

    ks: tuple[int, ...]
    settings: int
    cv: dict[str, dict[str, float]] = field(default_factory=dict)
    in_sample: dict[str, dict[str, float]] = field(default_factory=dict)
    best: TierWeights = field(default_factory=TierWeights)
    folds: dict[str, TierWeights] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "cross_validated": self.cv,
            "in_sample": self.in_sample,
            "in_sample_best": _weights(self.best),
            "folds": {sample: _weights(w) for sample, w in self.folds.items()},
        }


def _weights(w: TierWeights) -> dict[str, float]:
    return {name: float(getattr(w, name)) for name in GRID}


def _table(
    recall: npt.NDArray[np.float64], cats: list[int], ks: tuple[int, ...]
) -> dict[str, dict[str, float]]:
    """``{"all" | category: {k: mean}}`` from a (questions, ks) array."""
    out: dict[str, dict[str, float]] = {}
    labels = np.array(cats)
    for name, rows in [("all", np.ones(len(cats), dtype=bool))] + [
        (str(c), labels == c) for c in sorted(set(cats)) if c in CATEGORIES
    ]:
        if rows.any():
            out[name] = {str(k): float(recall[rows, j].mean()) for j, k in enumerate(ks)}
    return out


def cross_validate(
    data: LoCoMo,
    *,
    embedder: Embedder | None,
    ks: tuple[int, ...] = (5, 10, 25, 50),
    rrf_k: int = 20,
    context_weight: float = 0.5,
    settings: list[TierWeights] | None = None,
    progress: Progress | None = None,
) -> CvResult:
    """Leave-one-conversation-out cross-validation over ``settings`` (default :func:`grid`)."""
    tick = progress or (lambda _phase, _n: None)
    tried = settings or grid()
    depth = max(ks)
    per_conv: list[npt.NDArray[np.float64]] = []
    cats: list[list[int]] = []
    for conv in data.conversations:
        slots = conversation_slots(conv)
        recaller = TieredRecaller(embedder=embedder, rrf_k=rrf_k, context_weight=context_weight)
        recaller.prepare(slots)
        recaller.turns.index.prepare_queries([q.text for q in conv.questions])
        recaller.keys.prepare_queries([q.text for q in conv.questions])
        tick(f"{conv.sample_id}: indexed for cross-validation", 0)
        recall = np.zeros((len(tried), len(conv.questions), len(ks)))
        for qi, question in enumerate(conv.questions):
            for si, weights in enumerate(tried):
                recaller.weights = weights
                ranked = [s.source_id or "" for s, _ in recaller.rank(question.text, slots, depth)]
                for j, k in enumerate(ks):
                    top = set(ranked[:k])
                    found = sum(1 for d in question.evidence if d in top)
                    recall[si, qi, j] = found / len(question.evidence)
            tick(f"{conv.sample_id}: cross-validation", 1)
        per_conv.append(recall)
        cats.append([q.category for q in conv.questions])
    result = CvResult(ks, len(tried))
    everything = np.concatenate(per_conv, axis=1)
    flat_cats = [c for group in cats for c in group]
    best = int(np.argmax(_objective(everything, ks)))
    result.best = tried[best]
    result.in_sample = _table(everything[best], flat_cats, ks)
    held: list[npt.NDArray[np.float64]] = []
    for i, conv in enumerate(data.conversations):
        others = [r for j, r in enumerate(per_conv) if j != i]
        if not others:
            others = per_conv
        choice = int(np.argmax(_objective(np.concatenate(others, axis=1), ks)))
        result.folds[conv.sample_id] = tried[choice]
        held.append(per_conv[i][choice])
    result.cv = _table(np.concatenate(held, axis=0), flat_cats, ks)
    return result
