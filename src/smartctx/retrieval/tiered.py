"""``TieredRecaller``: recall over the turns and over the keys the memory tiers know about them.

It implements the core :class:`~smartctx.core.recall.Recaller` protocol (so a ``ContextWindow``
and the service use it like :class:`~smartctx.retrieval.recall.HybridRecaller`). Contract:

- every slot seen is indexed as a turn (``HybridRecaller``: its key, its neighbourhood) and as
  tier keys (:mod:`smartctx.retrieval.keys_tiers`): a fact per turn (from the ``extractor``:
  offline by default, an LLM's when one is configured), a summary per session and a key per named
  entity. Keys live in one ``HybridIndex`` with the same embedder;
- a query ranks the turns (the base score) and, per key kind, the keys (BM25 and vectors fused
  by reciprocal rank); the key at rank r gives ``weight / (rrf_k + r)`` to each turn of its
  provenance (a turn keeps its best key of each kind). When the query names dates ("in May
  2023", "on 1 May, 2022"), turns whose keys are dated near them get a ranked bonus at
  ``weights.date``. See :mod:`smartctx.retrieval.multihop` for the second hop; last, each turn
  gains a share of its neighbours' fused scores (:mod:`smartctx.retrieval.rerank`), the
  neighbours read from the candidates' order (give them in conversation order, as the window
  does) within their session, and a turn's score is lowered by the share of it that only asks
  (``weights.asks``: a question is not evidence, its answer is); :meth:`TieredRecaller.order`
  then re-orders the best turns for diversity (``weights.diversity``,
  :func:`~smartctx.retrieval.rerank.diversify`);
- the weights are global (:class:`TierWeights`), never chosen per query;
- indexing is incremental: new slots add their fact keys, refresh the summary key of their
  session and the entity keys they mention (re-embedded only when the key text changes); the
  extractor sees the whole session a new turn belongs to. Ranking costs one BM25 pass and one
  matrix-vector product over turns and keys, and at most one more for the second hop;
- what ranking reads of a list of candidates (their rows in the turns' index, sessions and
  neighbours, speakers) is kept in a :class:`CandidateView` while the list stands: asking again
  over the same list (the same slot objects with the same texts), or over it with turns
  appended, costs a comparison done in C and the new turns, never Python work per candidate;
  the keys' kinds, provenance and dates are arrays (:class:`~.keys_tiers.KeyTable`), so fusion is
  numpy work. A slot changed in place is noticed by its text (the view is rebuilt and the turn
  indexed again); one whose metadata alone changed is read again only as a new slot object
  (``Slot.copy``), and its keys stay as indexed until it is forgotten (as in HybridRecaller);
- filters, forgetting and determinism are as in ``HybridRecaller`` (ties break by slot id);
- ``lean=True`` (the service) matches the keys by BM25 alone, as in the run that chose the
  default weights, so indexing a turn embeds its turn key only (no fact, session or entity key
  costs a model call; the turns are still ranked with the embedder), and keeps no
  :class:`~smartctx.retrieval.vocabulary.Vocabulary` (so the second hop adds no instance
  words); otherwise every new word of the turns is embedded once as they are indexed.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import Embedder, RetrievalEmbedder
from smartctx.core.errors import InvalidInput
from smartctx.core.slots import Slot
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.candidates import CandidateView
from smartctx.retrieval.dates import asked
from smartctx.retrieval.hybrid import HybridIndex, mean_ranks
from smartctx.retrieval.keys_tiers import (
    KINDS,
    Entities,
    KeyExtractor,
    KeyTable,
    OfflineExtractor,
    TierKey,
    first_person,
    session_keys,
    session_of,
    speaker_of,
)
from smartctx.retrieval.recall import HybridRecaller, best
from smartctx.retrieval.rerank import DIVERSITY_POOL, diversify, spread, top
from smartctx.retrieval.vocabulary import Vocabulary

Scores = npt.NDArray[np.float64]
KEY_DEPTH = 256
"""How many keys of each kind pass their turns a share of their rank."""
_NEIGHBOURS = 2
"""Turns either side that an offline fact key depends on (``keys_tiers._addressee``)."""
PARTS_CACHE = 1024
"""How many queries' score lists a recaller remembers (oldest forgotten first)."""
VIEWS = 4
"""How many lists of candidates a recaller keeps a :class:`CandidateView` of (latest first)."""
DENSE_MEMO = 8
"""How many texts' vector-ranking shares a recaller remembers (oldest forgotten first)."""


@dataclass(frozen=True)
class _DenseShares:
    """The vector rankings' parts of one text's fused scores over one view: ``mask`` the view's
    allowed rows in the turns' index, ``turns`` their share (None without vectors), ``keys``
    each key kind's share."""

    mask: npt.NDArray[np.bool_]
    turns: Scores | None
    keys: dict[str, Scores | None]


@dataclass(frozen=True)
class TierWeights:
    """Fusion weights of the key kinds, the date bonus, the second hop, the neighbour
    spreading and the diversity of the top (0 turns one off).

    ``hop_depth`` first hits name the entities of the second query, at most ``hop_terms`` of
    them, and give it ``hop_feedback`` rare words, and ``hop_embed`` says whether that query is
    embedded (:mod:`smartctx.retrieval.multihop`);
    ``neighbour`` and ``neighbour2`` spread a turn's fused score to the turns one and two places
    away in its session, and ``diversity`` re-orders the best turns by maximal marginal
    relevance (:mod:`smartctx.retrieval.rerank`). Defaults: the setting that
    leave-one-conversation-out cross-validation over a fixed grid
    (:data:`smartctx.bench.locomo_cv.GRID`) picked on all of LoCoMo's development split with
    the default embedder before ``diversity`` joined it (``diversity`` 0.2: every fold's
    choice since, as 1.5 on the raw cosine scale before closeness was counted above the pool's
    mean, which left e5's rankings as they were and gave back USE's); see
    ``docs/benchmarks.md`` for the cross-validated figures beside the in-sample ones and the
    in-sample best of the current grid."""

    fact: float = 1.0
    session: float = 0.3
    entity: float = 0.3
    date: float = 1.0
    hop: float = 0.5
    speaker: float = 0.5
    hop_depth: int = 5
    hop_terms: int = 6
    hop_feedback: int = 3
    neighbour: float = 0.2
    neighbour2: float = 0.35
    diversity: float = 0.2
    asks: float = 0.3
    """How much a turn's score is lowered for what it only asks: its fused score (after the
    neighbours' shares, so a question still lifts the answer beside it) times ``1 - asks x``
    the share of its text in questions (:func:`~smartctx.core.sentences.asking_share`)."""
    hop_embed: bool = True
    """Embed the second hop's longer query (else its words are searched with the question's
    own vector: one embedding less per query)."""
    hop_words: int = 4
    """How many of the conversation's words nearest to the question's vector (less their
    closeness to questions that name nothing) join the second hop's query
    (:class:`~smartctx.retrieval.vocabulary.Vocabulary`: the instances a question names by
    their category); only with an embedder and keys not ``lean``."""

    def __post_init__(self) -> None:
        values = (
            self.fact,
            self.session,
            self.entity,
            self.date,
            self.hop,
            self.speaker,
            self.neighbour,
            self.neighbour2,
            self.diversity,
            self.asks,
        )
        counts = (self.hop_depth, self.hop_terms, self.hop_feedback, self.hop_words)
        if min(values) < 0 or min(counts) < 0:
            raise InvalidInput(f"tier weights must be >= 0, got {self!r}")
        if self.asks > 1:
            raise InvalidInput(f"tier weight asks must be at most 1, got {self.asks}")


def named_speakers(query: str, speakers: Iterable[str]) -> frozenset[str]:
    """Those of the candidates' ``speakers`` the query names (by first name, as a whole word)
    when it names some but not all of them, else none: a question about a person is mostly
    answered by that person's own words."""
    present = frozenset(speakers) - {""}
    named = frozenset(
        who
        for who in present
        if re.search(rf"\b{re.escape(who.split()[0])}\b", query, re.IGNORECASE)
    )
    return frozenset() if named == present else named


class TieredRecaller:
    """A ``Recaller`` over turns and tier keys (see the module doc)."""

    def __init__(
        self,
        *,
        embedder: RetrievalEmbedder | Embedder | None = None,
        weights: TierWeights | None = None,
        extractor: KeyExtractor | None = None,
        rrf_k: int = 20,
        turn_weights: tuple[float, float] = (1.0, 1.0),
        context_weight: float = 0.5,
        lean: bool = False,
    ) -> None:
        self.weights = weights or TierWeights()
        self.extractor: KeyExtractor = extractor or OfflineExtractor()
        self.rrf_k = rrf_k
        self.turns = HybridRecaller(
            embedder=embedder, rrf_k=rrf_k, weights=turn_weights, context_weight=context_weight
        )
        self.keys = HybridIndex(
            embedder=None if lean else embedder, rrf_k=rrf_k, weights=turn_weights
        )
        self._key: dict[str, TierKey] = {}
        self._table = KeyTable()  # self._key as arrays, in self.keys' storage order
        self._slots: dict[str, Slot] = {}
        self._sessions: dict[str, list[str]] = defaultdict(list)
        self._df: Counter[str] = Counter()
        self._speakers: set[str] = set()
        self._entities = Entities()
        # the conversation's words, embedded one by one (the second hop's instances)
        self.vocabulary = None if lean or embedder is None else Vocabulary(embedder)
        self._parts: dict[tuple[str, str | None, int], dict[str, Scores]] = {}
        self._words: dict[tuple[str, tuple[str, ...], int], list[str]] = {}
        self._dense: dict[tuple[str, int], _DenseShares] = {}
        # Shared with filtered copies (mutated in place): dropped when an indexed turn changes.
        self._views: list[CandidateView] = []
        self._serials = itertools.count()

    def filtered(
        self,
        *,
        speaker: str | Iterable[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> TieredRecaller:
        """A recaller sharing this one's indexes, recalling only what passes the filter (see
        :meth:`HybridRecaller.filtered`)."""
        out = copy.copy(self)
        out.turns = self.turns.filtered(speaker=speaker, since=since, until=until)
        return out

    # indexing -----------------------------------------------------------------------------------

    def prepare(self, slots: Sequence[Slot]) -> None:
        """Index new (or changed) slots as turns and keys, in one batch per index."""
        fresh = [s for s in slots if self._slots.get(s.id, None) is None or self._changed(s)]
        fresh = list({s.id: s for s in fresh}.values())
        if not fresh:
            return
        self._parts.clear()
        self._words.clear()
        self._dense.clear()
        if any(s.id in self._slots for s in fresh):
            self._views.clear()  # an indexed turn changed: views may hold its old text
        self.turns.prepare(fresh)
        touched: list[str] = []
        for slot in fresh:
            group = session_of(slot)
            if slot.id not in self._slots:
                self._sessions[group].append(slot.id)
                self._df.update(set(analyze(slot.text)))
                if speaker_of(slot):
                    self._speakers.add(speaker_of(slot))
            self._slots[slot.id] = slot
            if group not in touched:
                touched.append(group)
        keys: list[TierKey] = []
        speakers = frozenset(self._speakers)
        fresh_ids = {s.id for s in fresh}
        for group in touched:
            keys += self._facts(self._sessions[group], fresh_ids)
        # A session's summary is written once a later session has begun (as the tiers do),
        # so a turn of the open session does not re-embed a long key.
        newest = next(reversed(self._sessions))
        for group, ids in self._sessions.items():
            if (
                group != newest
                and ids
                and (group in touched or f"session:{group}" not in self._key)
            ):
                session = {group: [self._slots[i] for i in ids]}
                keys += session_keys(session, speakers=speakers, df=self._df)
        keys += self._entity_keys(fresh)
        self._store(keys)
        if self.vocabulary is not None:
            self.vocabulary.add([s.text for s in fresh], speakers)

    def _facts(self, ids: list[str], fresh: set[str]) -> list[TierKey]:
        """The fact keys a session's new turns may change. The offline extractor reads two
        turns either side of a turn (its addressee), so it gets the turns from four before the
        first new one and only the keys from two before it are kept: the same keys as over the
        whole session, at a cost that does not grow with it. Other extractors see the session."""
        if not isinstance(self.extractor, OfflineExtractor):
            return self.extractor.facts([self._slots[i] for i in ids])
        first = next(p for p, slot_id in enumerate(ids) if slot_id in fresh)
        keep = set(ids[max(0, first - _NEIGHBOURS) :])
        turns = [self._slots[i] for i in ids[max(0, first - 2 * _NEIGHBOURS) :]]
        return [k for k in self.extractor.facts(turns) if k.provenance[0] in keep]

    def document_frequencies(self) -> tuple[Counter[str], int]:
        """How many turns each analysed word occurs in, and how many turns there are (shared,
        not copied: do not change it)."""
        return self._df, len(self._slots)

    def instances(self, query: str, exclude: Sequence[str] = ()) -> list[str]:
        """The at most ``weights.hop_words`` words of the turns nearest to ``query``'s vector
        (as its speakers would say it), words of the query and of ``exclude`` left out; none
        without a vocabulary (:class:`~smartctx.retrieval.vocabulary.Vocabulary`)."""
        limit = self.weights.hop_words
        if self.vocabulary is None or limit <= 0 or not query.strip():
            return []
        memo = (query, tuple(exclude), limit)  # remembered until the index changes
        found = self._words.get(memo)
        if found is None:
            vector = self.turns.index.query_vector(first_person(query, self._speakers))
            found = self.vocabulary.nearest(
                vector, limit, self._df, len(self._slots), [query, *exclude]
            )
            if len(self._words) >= PARTS_CACHE:
                self._words.pop(next(iter(self._words)))
            self._words[memo] = found
        return list(found)

    def _changed(self, slot: Slot) -> bool:
        return self._slots[slot.id].text != slot.text

    def _entity_keys(self, fresh: Sequence[Slot]) -> list[TierKey]:
        touched = self._entities.add(fresh, frozenset(self._speakers))
        return [self._entities.key(name) for name in touched]

    def _store(self, keys: list[TierKey]) -> None:
        changed = [
            k for k in keys if self._key.get(k.id, None) is None or self._key[k.id].text != k.text
        ]
        self._key.update({k.id: k for k in keys})
        if changed:
            self.keys.add([k.id for k in changed], [k.text for k in changed])
        self._tabulate(keys)

    def _tabulate(self, keys: Sequence[TierKey]) -> None:
        rows = self.turns.index.rows
        positions = self.keys.rows([k.id for k in keys]).tolist()
        self._table.put(positions, keys, [rows(k.provenance) for k in keys])

    def forget(self, slot_ids: Iterable[str]) -> None:
        """Drop these slots, and the keys that rest on them alone."""
        gone = {i for i in slot_ids if i in self._slots}
        if not gone:
            return
        self._parts.clear()
        self._words.clear()
        self._dense.clear()
        self._views.clear()
        self.turns.forget(gone)
        self._entities.forget(gone)
        for slot_id in gone:
            slot = self._slots.pop(slot_id)
            self._sessions[session_of(slot)].remove(slot_id)
            self._df.subtract(set(analyze(slot.text)))
        for term in [t for t, n in self._df.items() if n <= 0]:
            del self._df[term]  # in place: filtered copies share the counts
        if self.vocabulary is not None:
            self.vocabulary.forget(self._df)
        dead: list[str] = []
        for key_id, key in list(self._key.items()):
            kept = tuple(p for p in key.provenance if p not in gone)
            if not kept:
                dead.append(key_id)
                del self._key[key_id]
            elif len(kept) != len(key.provenance):
                self._key[key_id] = TierKey(key.id, key.kind, key.text, kept, key.span)
        self.keys.remove(dead)
        self._table.reset()  # rows of turns and keys were renumbered
        self._tabulate([self._key[i] for i in self.keys.ids])

    def clear(self) -> None:
        """Drop everything indexed."""
        self.forget(list(self._slots))

    # candidates ---------------------------------------------------------------------------------

    def view(self, candidates: Sequence[Slot]) -> CandidateView:
        """The :class:`CandidateView` of ``candidates`` under this recaller's filter: a kept
        one when ``candidates`` are its list, grown when they are its list with slots appended,
        else a new one (the latest :data:`VIEWS` are kept). Indexes nothing."""
        for view in self._views:
            own = view.owning(candidates)
            if own is not None:
                return own
        for n, view in enumerate(self._views):
            if view.filter != self.turns.filter:
                continue
            same = view.match(candidates)
            if same is None:
                continue
            if not same:
                view.extend(candidates[len(view.slots) :])
            self._views.insert(0, self._views.pop(n))
            return view
        view = CandidateView(self.turns.filter, self._serials)
        view.extend(candidates)
        self._views.insert(0, view)
        del self._views[VIEWS:]
        return view

    def _indexed(self, view: CandidateView) -> CandidateView:
        """``view`` with its slots indexed (as turns, and the allowed ones' turn keys checked)
        and their rows in the turns' index known."""
        done = len(view.rows)
        if done < len(view.slots):
            tail = view.slots[done:]
            self.prepare(tail)
            self.turns.prepare([s for s in tail if view.filter.allows(s)])
            view.rows = np.concatenate([view.rows, self.turns.index.rows(view.ids[done:].tolist())])
        return view

    # ranking ------------------------------------------------------------------------------------

    def parts(self, query: str, candidates: Sequence[Slot]) -> dict[str, Scores]:
        """The score lists fused for ``query``, over ``candidates`` in their order: ``turn``
        (the hybrid turn score), one per key kind, ``date`` and ``named``. Remembered per query
        until the index changes."""
        return self._parts_of(query, self.view(candidates))

    def _parts_of(
        self, query: str, view: CandidateView, like: str | None = None
    ) -> dict[str, Scores]:
        self._indexed(view)
        memo = (query, like, view.serial)
        cached = self._parts.get(memo)
        if cached is None:
            cached = self._compute(query, view, like)
            if len(self._parts) >= PARTS_CACHE:
                self._parts.pop(next(iter(self._parts)))
            self._parts[memo] = cached
        return cached

    def _compute(
        self, query: str, view: CandidateView, like: str | None = None
    ) -> dict[str, Scores]:
        size = len(view.slots)
        out: dict[str, Scores] = {"turn": np.zeros(size)}
        dense = self._dense_shares(like or query, view)
        if len(view.where) and query.strip():
            rows = view.rows[view.where]
            allowed = view.allowed().slots
            fused = self.turns.fused(query, allowed, dense.mask, dense=dense.turns)
            out["turn"][view.where] = fused[rows]
        keys, table = self.keys, self._table
        lexical = keys.lexical_scores(query) if len(keys) else None
        for code, kind in enumerate(KINDS):
            out[kind] = np.zeros(size)
            if not len(keys):
                continue
            mask = table.kind == code
            fused = keys.fuse(lexical, None, mask, dense_share=dense.keys.get(kind))
            ranked = top(fused, np.flatnonzero(mask & (fused > 0)), KEY_DEPTH)
            rows, rank = table.gather(ranked)
            # the key at rank r gives its turns 1 / (rrf_k + r); a turn keeps its best share
            out[kind] = self._best_per_row(rows, 1.0 / (self.rrf_k + 1 + rank))[view.rows]
        out["date"] = self._dates(query, view)
        for name in ("turn", *KINDS):
            out[name][view.shadowed] = 0.0  # a repeated id scores at its last place only
        out["named"] = np.zeros(size)
        named = named_speakers(query, view.speakers)
        if named:
            out["named"][np.isin(view.codes, [view.speakers[who] for who in named])] = 1.0
        return out

    def _dense_shares(self, text: str, view: CandidateView) -> _DenseShares:
        """The vector rankings' parts of the fused scores for the embedding of ``text`` over
        ``view``: remembered (the latest :data:`DENSE_MEMO`), since the second hop searches its
        longer query with the question's vector unless ``weights.hop_embed`` and so repeats
        them exactly."""
        memo = (text, view.serial)
        found = self._dense.get(memo)
        if found is not None:
            return found
        mask = np.zeros(len(self.turns.index), dtype=bool)
        mask[view.rows[view.where]] = True
        # embedded as the speakers it names would say it (their turns are in the first person)
        spoken = first_person(text, self._speakers)
        turns = self.turns.dense_share(spoken, mask) if len(view.where) and text.strip() else None
        keys: dict[str, Scores | None] = {}
        if len(self.keys):
            vectors = self.keys.vector_scores(spoken)
            for code, kind in enumerate(KINDS):
                kept = self._table.kind == code
                keys[kind] = (
                    None
                    if vectors is None
                    else self.keys.share(vectors, kept, self.keys.weights[1], positive=False)
                )
        found = _DenseShares(mask, turns, keys)
        if len(self._dense) >= DENSE_MEMO:
            self._dense.pop(next(iter(self._dense)))
        self._dense[memo] = found
        return found

    def _best_per_row(self, rows: npt.NDArray[np.intp], values: Scores) -> Scores:
        """For every row of the turns' index, the best of ``values`` given to it (0 if none)."""
        out = np.zeros(len(self.turns.index))
        np.maximum.at(out, rows, values)
        return out

    def _dates(self, query: str, view: CandidateView) -> Scores:
        spans = asked(query)
        out = np.zeros(len(view.slots))
        if not spans:
            return out
        agree = self._table.near(spans)
        # only agreement of 0.5 or more counts below, so only those keys are spread to turns
        close = np.flatnonzero(agree >= 0.5)
        rows, which = self._table.gather(close)
        near = self._best_per_row(rows, agree[close][which])[view.rows]
        near[view.shadowed] = 0.0
        positions = np.flatnonzero(near >= 0.5)
        if not len(positions):
            return out
        out[positions] = 1.0 / (self.rrf_k + mean_ranks(-near[positions]))
        return out

    def first_pass(
        self, query: str, candidates: Sequence[Slot], *, like: str | None = None
    ) -> Scores:
        """The fused score of every candidate for ``query`` alone (no second hop). ``like``:
        the text whose embedding stands for the query in the vector scores (default the query
        itself); BM25 always reads the query's own words."""
        parts = self._parts_of(query, self.view(candidates), like)
        w = self.weights
        fused = (
            parts["turn"]
            + w.fact * parts["fact"]
            + w.session * parts["session"]
            + w.entity * parts["entity"]
            + w.date * parts["date"]
        )
        return fused * (1.0 + w.speaker * parts["named"])

    def scores(self, query: str, candidates: Sequence[Slot] | CandidateView) -> dict[str, float]:
        """Fused score of every allowed candidate (by slot id); those with no evidence omitted.
        ``candidates`` may be given as their :meth:`view`."""
        from smartctx.retrieval.multihop import hop_scores

        if not query.strip():
            return {}
        if isinstance(candidates, CandidateView):
            view = candidates
        elif candidates:
            view = self.view(candidates)
        else:
            return {}
        allowed = view.allowed()
        if not allowed.slots:
            return {}
        speakers = frozenset(allowed.speakers)
        fused = self._spread(hop_scores(self, query, allowed.slots, speakers=speakers), view)
        if self.weights.asks > 0:
            fused = fused * (1.0 - self.weights.asks * allowed.asking)
        found = np.flatnonzero(fused > 0)
        return dict(zip(allowed.ids[found].tolist(), fused[found].tolist(), strict=True))

    def _spread(self, fused: Scores, view: CandidateView) -> Scores:
        """``fused`` (over the allowed candidates of ``view``) with each turn's neighbours'
        scores spread to it (:mod:`.rerank`); neighbours are counted among all candidates, so a
        filter never makes two distant turns neighbours."""
        w = self.weights
        if w.neighbour <= 0 and w.neighbour2 <= 0:
            return fused
        full = np.zeros(len(view.slots))
        full[view.where] = fused
        out: Scores = spread(full, view.hood, (w.neighbour, w.neighbour2))[view.where]
        return out

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        """The at most ``k`` candidates most relevant to ``query``, best first (``Recaller``):
        :meth:`order` of :meth:`scores`."""
        if k <= 0 or not candidates or not query.strip():
            return []
        view = self.view(candidates)
        return self.order(self.scores(query, view), candidates, k, by_id=view.by_id)

    def order(
        self,
        scored: dict[str, float],
        candidates: Sequence[Slot],
        k: int,
        *,
        by_id: dict[str, Slot] | None = None,
    ) -> list[tuple[Slot, float]]:
        """The at most ``k`` best of ``scored`` (by slot id, from :meth:`scores`), the first
        :data:`~smartctx.retrieval.rerank.DIVERSITY_POOL` re-ordered for diversity at
        ``weights.diversity`` (:func:`~smartctx.retrieval.rerank.diversify`) when the turns have
        vectors; each keeps its score, so scores need not fall along the list. ``by_id`` maps
        the candidates' ids to them when the caller has it (else it is built)."""
        ranked = best(scored, candidates, max(k, DIVERSITY_POOL), by_id=by_id)
        index = self.turns.index
        vectors = index.vectors_view()
        if self.weights.diversity <= 0 or vectors is None or len(ranked) < 3:
            return ranked[: max(0, k)]
        pool = ranked[:DIVERSITY_POOL]
        rows = index.rows([slot.id for slot, _ in pool])
        if (rows < 0).any():
            return ranked[: max(0, k)]
        values = np.array([score for _, score in pool])
        chosen = diversify(values, vectors[rows], self.weights.diversity, limit=k)
        moved = [pool[i] for i in chosen]
        return (moved + ranked[DIVERSITY_POOL:])[: max(0, k)]
