"""The second hop of tiered recall: what the first hits name becomes a second query.

A multi-hop question ("Which cities has John been to?", "What do Melanie's kids like?") rarely
shares words with every turn it needs; the turns found first do name the people, places and
things the others talk about. :func:`hop_scores` ranks the candidates for the question
(:meth:`TieredRecaller.first_pass`), takes the names in its ``hop_depth`` best turns (capitalised
names other than the speakers, each once, those already in the question left out, at most
``hop_terms``) and, as pseudo-relevance feedback, the ``hop_feedback`` rarest words of its
:data:`FEEDBACK_DEPTH` best turns (by the sum of their inverse document frequencies over the
turns, words of the question left out) and the ``hop_words`` words of the conversation nearest
to the question's vector (:meth:`TieredRecaller.instances`: the instances a question names by
their category, "violin" for "instruments"), asks again with the question followed by those terms,
and adds the second pass's scores at ``weights.hop``: ``first + hop * second``. The second pass
embeds its longer query, or with ``weights.hop_embed`` off searches its words with the
question's own vector (one embedding less per query; on LoCoMo with USE, the served recall
embedder, no worse: see ``docs/benchmarks.md``). The rule is the same for every question; with
no new terms, or ``hop == 0``, the first pass is the answer.

Cost: at most one more ranking pass (one query embedding unless ``hop_embed`` is off, one BM25
pass, one matrix-vector product over turns and keys); choosing the hits is a partial sort, the
terms read only them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from smartctx.core.slots import Slot
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.keys_tiers import names, speaker_of
from smartctx.retrieval.rerank import top

if TYPE_CHECKING:
    from smartctx.retrieval.tiered import Scores, TieredRecaller


def hop_terms(query: str, hits: Sequence[Slot], limit: int, speakers: frozenset[str]) -> list[str]:
    """The names in ``hits`` (in order, each once) that the query does not already contain."""
    asked = set(analyze(query))
    found: list[str] = []
    for slot in hits:
        text = slot.text
        caption = str(slot.metadata.get("caption") or "")
        for name in names(f"{text} {caption}".strip(), speakers):
            terms = analyze(name)
            if not terms or set(terms) <= asked or name in found:
                continue
            found.append(name)
            if len(found) >= limit:
                return found
    return found


FEEDBACK_DEPTH = 3
"""How many of the first pass's best turns give feedback words."""


def feedback_terms(
    query: str, hits: Sequence[Slot], limit: int, df: Counter[str], turns: int
) -> list[str]:
    """The ``limit`` words of ``hits`` (analysed as BM25 does) with the highest summed inverse
    document frequency ``ln(1 + turns / df)``, words of the query left out; ties by word."""
    if limit <= 0:
        return []
    asked = set(analyze(query))
    weight: dict[str, float] = {}
    for slot in hits:
        for term in set(analyze(slot.text)) - asked:
            weight[term] = weight.get(term, 0.0) + math.log(1 + turns / max(1, df[term]))
    ranked = sorted(weight, key=lambda t: (-weight[t], t))
    return ranked[:limit]


def second_query(query: str, terms: Sequence[str]) -> str:
    """The question followed by the names found (the form the second pass searches with)."""
    return f"{query} {' '.join(terms)}" if terms else query


def hop_scores(
    recaller: TieredRecaller,
    query: str,
    candidates: Sequence[Slot],
    *,
    speakers: frozenset[str] | None = None,
) -> Scores:
    """``first + hop * second`` over ``candidates`` (see the module doc). ``speakers`` are the
    candidates' speakers when the caller knows them (else they are read from the candidates)."""
    first = recaller.first_pass(query, candidates)
    w = recaller.weights
    if w.hop <= 0 or w.hop_depth <= 0 or (w.hop_terms + w.hop_feedback + w.hop_words <= 0):
        return first
    best = top(first, np.arange(len(first)), w.hop_depth)
    hits = [candidates[i] for i in best.tolist() if first[i] > 0]
    if speakers is None:
        speakers = frozenset(speaker_of(s) for s in candidates if speaker_of(s))
    terms = hop_terms(query, hits, w.hop_terms, speakers)
    df, turns = recaller.document_frequencies()
    terms += feedback_terms(query, hits[:FEEDBACK_DEPTH], w.hop_feedback, df, turns)
    terms += recaller.instances(query, terms)
    if not terms:
        return first
    like = None if w.hop_embed else query
    return first + w.hop * recaller.first_pass(second_query(query, terms), candidates, like=like)
