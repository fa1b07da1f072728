"""The candidates of one recall query as tiered ranking reads them, kept between queries.

A served window hands its recaller the same archived slots turn after turn, a few more each time.
:class:`CandidateView` keeps what ranking reads of them (texts, ids, which the filter allows,
their sessions' neighbourhoods, speaker codes, how much of each only asks, rows in the turns'
index) and grows it by the appended slots only; :meth:`CandidateView.match` tells in C loops
whether a list is the same one (or the same one grown). Cost: a match is linear in C, an
extension linear in the new slots (one sentence split each, kept per text).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence

import numpy as np

from smartctx.core.sentences import asking_share
from smartctx.core.slots import Slot
from smartctx.retrieval.keys_tiers import session_of, speaker_of
from smartctx.retrieval.recall import RecallFilter
from smartctx.retrieval.rerank import Neighbourhood

_TEXT = operator.attrgetter("text")
_ID = operator.attrgetter("id")


class CandidateView:
    """One list of candidates as ranking reads it (see the module doc): the slots, their texts
    and ids, which the filter allows, their sessions' :class:`~.rerank.Neighbourhood`, their
    speakers (as codes), the share of each text that only asks
    (:func:`~smartctx.core.sentences.asking_share`), and, once indexed, their rows in the turns'
    index. ``serial`` changes whenever the list grows. Built and grown by
    :meth:`~smartctx.retrieval.tiered.TieredRecaller.view`; read-only to
    others."""

    def __init__(self, filter: RecallFilter, serials: Iterator[int]) -> None:
        self.filter = filter
        self._serials = serials
        self.serial = next(serials)
        self.slots: list[Slot] = []
        self.texts: list[str] = []
        self.ids = np.empty(0, dtype=object)
        self.by_id: dict[str, Slot] = {}  # the last slot of each id
        self.where = np.empty(0, dtype=np.intp)  # positions the filter allows
        self.hood = Neighbourhood(2)
        self.speakers: dict[str, int] = {}  # non-empty speaker -> code
        self.codes = np.empty(0, dtype=np.intp)  # each slot's speaker code (-1: none)
        self.asking = np.empty(0)  # each slot's asking_share
        self.shadowed = np.empty(0, dtype=np.intp)  # positions of an id repeated later
        self.rows = np.empty(0, dtype=np.intp)  # rows in the turns' index of slots[:len(rows)]
        self._last: dict[str, int] = {}
        self._allowed: CandidateView | None = None

    def match(self, given: Sequence[Slot]) -> bool | None:
        """True when ``given`` is this list (the same slots: ids and texts, in order), False
        when it is this list with slots appended, None otherwise. C loops only.

        Slots are compared by id and text, not as objects: a caller may hand the same archived
        slot as another copy (the window's own, or the copy it gave to be indexed)."""
        size = len(self.slots)
        if len(given) < size:
            return None
        if list(map(_ID, itertools.islice(given, size))) != self.ids.tolist():
            return None
        if list(map(_TEXT, itertools.islice(given, size))) != self.texts:
            return None
        return len(given) == size

    def extend(self, tail: Sequence[Slot]) -> None:
        """Append slots (not yet indexed: :attr:`rows` stays as it is)."""
        start = len(self.slots)
        self.serial = next(self._serials)
        self.slots += tail
        self.texts += map(_TEXT, tail)
        ids = [slot.id for slot in tail]
        self.ids = np.concatenate([self.ids, np.array(ids, dtype=object)])
        self.by_id.update(zip(ids, tail, strict=True))
        allows = self.filter.allows
        where = [start + i for i, slot in enumerate(tail) if allows(slot)]
        self.where = np.concatenate([self.where, np.array(where, dtype=np.intp)])
        self.hood.extend([session_of(slot) for slot in tail])
        codes = [
            self.speakers.setdefault(who, len(self.speakers)) if who else -1
            for who in map(speaker_of, tail)
        ]
        self.codes = np.concatenate([self.codes, np.array(codes, dtype=np.intp)])
        asks = [asking_share(slot.text) for slot in tail]
        self.asking = np.concatenate([self.asking, np.array(asks, dtype=np.float64)])
        shadowed = []
        for i, slot_id in enumerate(ids, start):
            earlier = self._last.get(slot_id)
            if earlier is not None:
                shadowed.append(earlier)
            self._last[slot_id] = i
        if shadowed:
            self.shadowed = np.concatenate([self.shadowed, np.array(shadowed, dtype=np.intp)])

    def owning(self, slots: Sequence[Slot]) -> CandidateView | None:
        """This view or its allowed one when ``slots`` is its own list (passed back by the
        recaller within one ranking), else None."""
        if slots is self.slots:
            return self
        if self._allowed is not None and slots is self._allowed.slots:
            return self._allowed
        return None

    def allowed(self) -> CandidateView:
        """The view of the candidates the filter allows (this one when it allows them all),
        grown with this one."""
        if len(self.where) == len(self.slots):
            return self
        if self._allowed is None:
            self._allowed = CandidateView(self.filter, self._serials)
        done = len(self._allowed.slots)
        if done < len(self.where):
            self._allowed.extend([self.slots[i] for i in self.where[done:].tolist()])
        return self._allowed


__all__ = ["CandidateView"]
